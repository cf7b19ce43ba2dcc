/**
 * The `mcpServers` JSON format other apps write (Claude Desktop, LM Studio, Cursor): parsing
 * with errors a user can act on, and the app's own copy in <dataDir>/mcp.json (0600: env values
 * and headers often hold API keys).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ZodError } from "zod";
import { McpServerName, McpServerSpec } from "../../../api/tools";
import { describeIssues } from "../../../../common/zod-issues";
import { makePrivate } from "../../../../common/files/private-files";

export const MCP_CONFIG_FILE = "mcp.json";

export interface NamedSpec {
  name: string;
  spec: McpServerSpec;
}

export interface ParsedConfig {
  servers: NamedSpec[];
  /** One per entry that could not be used; the other entries are in `servers`. */
  errors: { name: string; message: string }[];
}

class SyntaxAt extends Error {
  constructor(readonly offset: number) {
    super(`JSON syntax error at ${offset}`);
  }
}

/**
 * Where JSON first goes wrong (an offset), for messages V8 gives without a position
 * ("Unexpected token '}', ... is not valid JSON"): a minimal recursive-descent scan.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text[i] ?? "")) i += 1;
  };
  const fail = (): never => {
    throw new SyntaxAt(i);
  };
  const literal = (word: string) => {
    for (const char of word) {
      if (text[i] !== char) fail();
      i += 1;
    }
  };
  const string = () => {
    if (text[i] !== '"') fail();
    i += 1;
    while (i < text.length && text[i] !== '"') {
      const char = text[i] ?? "";
      if (char < " ") fail();
      i += char === "\\" ? 2 : 1;
    }
    if (text[i] !== '"') fail();
    i += 1;
  };
  const value = (): void => {
    space();
    const char = text[i];
    if (char === "{") {
      i += 1;
      space();
      if (text[i] === "}") return void (i += 1);
      for (;;) {
        space();
        string();
        space();
        if (text[i] !== ":") fail();
        i += 1;
        value();
        space();
        if (text[i] === ",") i += 1;
        else if (text[i] === "}") return void (i += 1);
        else fail();
      }
    }
    if (char === "[") {
      i += 1;
      space();
      if (text[i] === "]") return void (i += 1);
      for (;;) {
        value();
        space();
        if (text[i] === ",") i += 1;
        else if (text[i] === "]") return void (i += 1);
        else fail();
      }
    }
    if (char === '"') return string();
    if (char === "t") return literal("true");
    if (char === "f") return literal("false");
    if (char === "n") return literal("null");
    const number = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!number) fail();
    i += number?.[0].length ?? 0;
  };
  try {
    value();
    space();
    return i;
  } catch (err) {
    return err instanceof SyntaxAt ? err.offset : i;
  }
}

/** "at line 3, column 7" for a JSON.parse error. */
function where(json: string, message: string): string {
  const position = /position (\d+)/.exec(message);
  const offset = position ? Number(position[1]) : jsonErrorOffset(json);
  const before = json.slice(0, offset).split("\n");
  return ` at line ${before.length}, column ${(before.at(-1) ?? "").length + 1}`;
}

/**
 * Parse an `mcpServers` document. Throws only when the document as a whole is unusable (not
 * JSON, or no `mcpServers` object), with the position of a syntax error; each server entry is
 * checked on its own so that one bad entry does not lose the others.
 */
export function parseMcpConfig(json: string): ParsedConfig {
  let document: unknown;
  try {
    document = JSON.parse(json);
  } catch (err) {
    const message = (err as Error).message;
    throw new Error(`The MCP config is not valid JSON${where(json, message)}: ${message}`);
  }
  if (typeof document !== "object" || document === null || Array.isArray(document))
    throw new Error('The MCP config must be a JSON object with an "mcpServers" object.');
  const entries = (document as { mcpServers?: unknown }).mcpServers;
  if (typeof entries !== "object" || entries === null || Array.isArray(entries))
    throw new Error(
      'The MCP config has no "mcpServers" object (the format is {"mcpServers": {"name": {...}}}).',
    );
  const parsed: ParsedConfig = { servers: [], errors: [] };
  for (const [name, entry] of Object.entries(entries)) {
    const checkedName = McpServerName.safeParse(name);
    if (!checkedName.success) {
      parsed.errors.push({ name, message: `The name is not usable: ${describeIssues(checkedName.error)}` });
      continue;
    }
    if ((entry as { disabled?: unknown } | null)?.disabled === true) {
      // Switched off in the app the file comes from: starting it here would surprise the user.
      parsed.errors.push({ name, message: 'Not added: the file marks this server "disabled": true.' });
      continue;
    }
    const spec = McpServerSpec.safeParse(withoutOtherAppsKeys(entry));
    if (!spec.success) {
      parsed.errors.push({ name, message: explainSpec(entry, spec.error) });
      continue;
    }
    parsed.servers.push({ name, spec: spec.data });
  }
  return parsed;
}

/**
 * Keys other apps keep in their entries (Cline's approvals and switch, timeouts, notes) that say
 * nothing about how to start the server: dropped, so that their files import. Any other unknown
 * key is still an error (it may be a typo of one that matters).
 */
const OTHER_APPS_KEYS = ["disabled", "autoApprove", "alwaysAllow", "timeout", "description"];

function withoutOtherAppsKeys(entry: unknown): unknown {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return entry;
  return Object.fromEntries(Object.entries(entry).filter(([key]) => !OTHER_APPS_KEYS.includes(key)));
}

/** The union's issues name neither branch well: say what an entry needs. */
function explainSpec(entry: unknown, error: ZodError): string {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry))
    return 'An entry must be an object with a "command" (stdio) or a "url" (Streamable HTTP).';
  const keys = Object.keys(entry);
  const type = (entry as { type?: unknown }).type;
  if (type === "sse")
    return 'The old SSE transport ("type": "sse") is not supported: give the server\'s Streamable HTTP URL, or a command (stdio).';
  if (!keys.includes("command") && !keys.includes("url"))
    return 'An entry needs a "command" (stdio) or a "url" (Streamable HTTP).';
  const cleaned = withoutOtherAppsKeys(entry);
  const branch = keys.includes("command")
    ? McpServerSpec.options[0].safeParse(cleaned)
    : McpServerSpec.options[1].safeParse(cleaned);
  return `The entry is not valid: ${describeIssues(branch.success ? error : branch.error)}`;
}

/** Whether a spec starts a process (stdio) or connects to a URL. */
export function isStdio(spec: McpServerSpec): spec is Extract<McpServerSpec, { command: string }> {
  return "command" in spec;
}

/** The saved servers, in the order they were added. A missing file is no servers. */
export function loadSavedConfig(dataDir: string, log: (message: string, err: unknown) => void): ParsedConfig {
  let json: string;
  try {
    json = readFileSync(join(dataDir, MCP_CONFIG_FILE), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { servers: [], errors: [] };
    log(`could not read ${MCP_CONFIG_FILE}`, err);
    return { servers: [], errors: [{ name: MCP_CONFIG_FILE, message: (err as Error).message }] };
  }
  try {
    return parseMcpConfig(json);
  } catch (err) {
    log(`${MCP_CONFIG_FILE} could not be used`, err);
    return { servers: [], errors: [{ name: MCP_CONFIG_FILE, message: (err as Error).message }] };
  }
}

/** Write the servers as an `mcpServers` document (other apps can read it), atomically, 0600. */
export async function saveConfig(dataDir: string, servers: NamedSpec[]): Promise<void> {
  const path = join(dataDir, MCP_CONFIG_FILE);
  const document = { mcpServers: Object.fromEntries(servers.map(({ name, spec }) => [name, spec])) };
  const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temporary, `${JSON.stringify(document, null, 2)}\n`, { mode: 0o600 });
  await makePrivate(temporary);
  await rename(temporary, path);
}
