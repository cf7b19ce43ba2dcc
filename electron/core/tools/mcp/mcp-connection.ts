/**
 * One MCP server: its process (stdio) or URL (Streamable HTTP) through the SDK's Client, its
 * state, tools and log. The protocol is the SDK's; this adds what the app needs around it:
 * an environment of only what the config gives, errors a user can act on, a crash noticed as
 * "crashed" (also in the middle of a call), and calls that never throw.
 */
import { existsSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DEFAULT_INHERITED_ENV_VARS } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpServerSpec, McpServerState } from "../../../api/tools";
import { TOOL_CALL_TIMEOUT_MS } from "../../../api/tools";
import { schemaSizeProblem } from "../../../../common/grammar-schema";
import { schemaProblem } from "../argument-check";
import type { ToolOutcome } from "../tool-types";
import { BoundedHttpTransport } from "./http-transport";
import { LogRing } from "./log-ring";
import { isStdio } from "./mcp-config";
import { limitText, outcomeOf } from "./mcp-result";
import { BoundedStdioTransport } from "./stdio-transport";

/** How long a server may take to start and answer `initialize` and `tools/list` (an `npx -y` server may download first). */
export const MCP_CONNECT_TIMEOUT_MS = 60_000;
/** At most this many tools are taken from one server (pages of tools/list). */
const MAX_TOOLS = 1000;
const MAX_PAGES = 50;
const MAX_DESCRIPTION_CHARS = 4000;

/** A tool as a server listed it; `problem` says why it cannot be called (a bogus schema). */
export interface ServerTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  problem: string | null;
}

export interface ConnectionOptions {
  name: string;
  spec: McpServerSpec;
  /** The state, error or tools changed. */
  onChange: () => void;
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  clientVersion?: string;
}

// Lenient on purpose: the SDK's own result schema rejects the whole list for one tool whose
// schema is odd; each tool is checked on its own here so the others stay usable.
const ToolPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
const CallResult = z.looseObject({
  content: z.array(z.unknown()).optional(),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
  toolResult: z.unknown().optional(),
});

/**
 * The child's environment: the config's variables and PATH, nothing else. The SDK's transport
 * adds getDefaultEnvironment() (HOME, USER, SHELL, …) under them; Node leaves out variables
 * whose value is undefined, so those are blanked here unless the config gives them.
 */
export function serverEnvironment(configured: Record<string, string>): Record<string, string> {
  const env: Record<string, string | undefined> = {};
  for (const key of DEFAULT_INHERITED_ENV_VARS) env[key] = undefined;
  if (process.env.PATH !== undefined) env.PATH = process.env.PATH;
  Object.assign(env, configured);
  // The transport's type says string values; undefined is what removes an inherited one.
  return env as Record<string, string>;
}

/**
 * What a spec starts, for display: env and header values are never shown, nor a URL's password
 * or query values (API keys often ride there).
 */
export function targetOf(spec: McpServerSpec): string {
  if (isStdio(spec)) return [spec.command, ...spec.args].join(" ");
  const url = new URL(spec.url);
  if (url.password) url.password = "***";
  for (const key of [...url.searchParams.keys()]) url.searchParams.set(key, "***");
  return url.toString();
}

/** 60000 → "60", 400 → "0.4". */
function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

function causeCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === "string" ? cause.code : undefined;
}

export class McpConnection {
  state: McpServerState = "stopped";
  error: string | null = null;
  tools: ServerTool[] = [];
  readonly log = new LogRing();
  private client: Client | null = null;
  /** Bumped on every start and stop: events of an older client are ignored. */
  private generation = 0;
  private readonly connectTimeoutMs: number;
  private readonly callTimeoutMs: number;
  /** tools/list_changed: one refresh at a time, and at most one more after it. */
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;

  constructor(private readonly options: ConnectionOptions) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? MCP_CONNECT_TIMEOUT_MS;
    this.callTimeoutMs = options.callTimeoutMs ?? TOOL_CALL_TIMEOUT_MS;
  }

  get name(): string {
    return this.options.name;
  }

  get spec(): McpServerSpec {
    return this.options.spec;
  }

  /** Start (or start again): resolves once the server is ready or has failed; never throws. */
  async start(): Promise<void> {
    // A new generation first: the old client's close is then not taken for a crash.
    const generation = ++this.generation;
    await this.closeClient();
    this.tools = [];
    this.set("starting", null);
    this.log.push(`starting: ${targetOf(this.spec)}`);
    const client = new Client({ name: "macaron-desktop", version: this.options.clientVersion ?? "0" });
    this.client = client;
    client.onclose = () => {
      if (generation === this.generation && this.state === "ready") void this.lost(generation);
    };
    client.onerror = (err) => {
      if (generation === this.generation) this.log.push(`error: ${err.message}`);
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (generation === this.generation && this.state === "ready") this.toolsChanged(generation);
    });
    try {
      await client.connect(this.transport(), { timeout: this.connectTimeoutMs });
      const tools = await this.listTools(client);
      if (generation !== this.generation) return;
      this.tools = tools;
      this.log.push(`ready: ${tools.length} tool${tools.length === 1 ? "" : "s"}`);
      this.set("ready", null);
    } catch (err) {
      if (generation !== this.generation) return;
      // Let the last stderr lines of an exiting process arrive before explaining.
      await new Promise((resolve) => setImmediate(resolve));
      const message = this.explainStart(err);
      this.log.push(`failed: ${message}`);
      this.set("failed", message);
      await this.closeClient();
    }
  }

  /** Stop the process (or end the HTTP session); the state becomes "stopped". */
  async stop(): Promise<void> {
    this.generation += 1;
    const wasRunning = this.client !== null;
    await this.closeClient();
    this.tools = [];
    if (wasRunning) this.log.push("stopped");
    this.set("stopped", null);
  }

  /** Call a tool of this server. Never throws: every failure is `ok: false` with a sentence. */
  async call(
    tool: string,
    args: unknown,
    signal: AbortSignal,
    timeoutMs = this.callTimeoutMs,
  ): Promise<ToolOutcome> {
    const client = this.client;
    if (!client || this.state !== "ready")
      return { ok: false, error: `The server "${this.name}" is not ready (${this.error ?? this.state}).` };
    if (typeof args !== "object" || args === null || Array.isArray(args))
      return { ok: false, error: "The arguments must be a JSON object." };
    if (signal.aborted) return { ok: false, error: "The call was stopped before it started." };
    const generation = this.generation;
    // The SDK never removes its abort listener: one signal per call keeps a turn's signal clean.
    const own = new AbortController();
    const forward = () => own.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    try {
      const result = await client.request(
        { method: "tools/call", params: { name: tool, arguments: args as Record<string, unknown> } },
        CallResult,
        { signal: own.signal, timeout: timeoutMs },
      );
      return outcomeOf(result);
    } catch (err) {
      if (signal.aborted) return { ok: false, error: "The call was stopped before the tool answered." };
      if (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number))
        return { ok: false, error: `The tool did not answer within ${seconds(timeoutMs)} s.` };
      if (err instanceof McpError && err.code === (ErrorCode.ConnectionClosed as number)) {
        await new Promise((resolve) => setImmediate(resolve));
        await this.lost(generation);
        return { ok: false, error: `The server stopped during the call${this.lastOutputNote()}.` };
      }
      if (!isStdio(this.spec) && err instanceof TypeError) {
        // fetch failed: the HTTP server went away.
        await this.lost(generation, "The server stopped answering");
        return { ok: false, error: `The server stopped answering (${this.networkReason(err)}).` };
      }
      const message = err instanceof Error ? err.message : String(err);
      return { ok: false, error: limitText(message, 2000).text };
    } finally {
      signal.removeEventListener("abort", forward);
    }
  }

  private set(state: McpServerState, error: string | null): void {
    if (this.state === state && this.error === error) return;
    this.state = state;
    this.error = error;
    this.options.onChange();
  }

  /** The server went away while ready (process exit, HTTP server gone). */
  private async lost(generation: number, reason = "The server stopped"): Promise<void> {
    if (generation !== this.generation || this.state !== "ready") return;
    this.generation += 1;
    this.log.flush();
    const message = `${reason}${this.lastOutputNote()}. Restart it to use its tools again.`;
    this.log.push(`crashed: ${message}`);
    this.tools = [];
    this.set("crashed", message);
    await this.closeClient();
  }

  private lastOutputNote(): string {
    const last = this.log.lastOutput();
    return last ? ` (its last output: ${limitText(last, 300).text})` : "";
  }

  private transport(): Transport {
    const spec = this.spec;
    if (isStdio(spec)) {
      const transport = new BoundedStdioTransport({
        command: spec.command,
        args: spec.args,
        env: serverEnvironment(spec.env),
        cwd: spec.cwd,
        onNotice: (text) => this.log.push(text),
      });
      const stderr = transport.stderr;
      const decoder = new StringDecoder("utf8");
      stderr?.on("data", (chunk: Buffer | string) =>
        this.log.write(typeof chunk === "string" ? chunk : decoder.write(chunk)),
      );
      stderr?.on("end", () => this.log.flush());
      return transport;
    }
    return new BoundedHttpTransport(new URL(spec.url), {
      headers: spec.headers,
      onNotice: (text) => this.log.push(text),
    });
  }

  private async listTools(client: Client): Promise<ServerTool[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: ServerTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const result = await client.request(
        { method: "tools/list", params: cursor ? { cursor } : {} },
        ToolPage,
        { timeout: this.connectTimeoutMs },
      );
      for (const entry of result.tools) {
        const tool = this.readTool(entry);
        if (!tool || seen.has(tool.name) || tools.length >= MAX_TOOLS) continue;
        seen.add(tool.name);
        tools.push(tool);
      }
      cursor = result.nextCursor;
      if (!cursor) {
        if (page > 0) this.log.push(`tools/list: ${page + 1} pages`);
        break;
      }
    }
    if (cursor) this.log.push(`tools/list: stopped after ${MAX_PAGES} pages`);
    return tools;
  }

  private readTool(entry: unknown): ServerTool | null {
    const raw = (typeof entry === "object" && entry !== null ? entry : {}) as Record<string, unknown>;
    if (typeof raw.name !== "string" || raw.name === "" || raw.name.length > 200) {
      this.log.push(
        `ignored a tool without a usable name: ${limitText(JSON.stringify(entry) ?? "", 200).text}`,
      );
      return null;
    }
    const schema = raw.inputSchema;
    const problem = schemaProblem(schema);
    const description = typeof raw.description === "string" ? raw.description : "";
    if (problem) this.log.push(`tool ${raw.name} cannot be used: ${problem}`);
    // A schema over the size limits is not kept (nor shown, nor sent with every status).
    const usable =
      typeof schema === "object" && schema !== null && !Array.isArray(schema) && !schemaSizeProblem(schema);
    return {
      name: raw.name,
      description: limitText(description, MAX_DESCRIPTION_CHARS).text,
      inputSchema: usable ? (schema as Record<string, unknown>) : {},
      problem,
    };
  }

  /** A flood of list_changed notifications costs at most two tools/list in a row. */
  private toolsChanged(generation: number): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = (async () => {
      let current = generation;
      do {
        this.refreshAgain = false;
        await this.refreshTools(current);
        current = this.generation;
      } while (this.refreshAgain);
      this.refreshing = null;
    })();
  }

  private async refreshTools(generation: number): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const tools = await this.listTools(client);
      if (generation !== this.generation) return;
      this.tools = tools;
      this.log.push(`tools changed: ${tools.length}`);
      this.options.onChange();
    } catch (err) {
      this.log.push(`could not list the changed tools: ${(err as Error).message}`);
    }
  }

  private async closeClient(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      // End the session politely; a server that is gone must not hold up the stop.
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 1000).unref()),
      ]);
    }
    await client.close().catch(() => undefined);
  }

  private networkReason(err: unknown): string {
    switch (causeCode(err)) {
      case "ECONNREFUSED":
        return "the connection was refused (is the server running?)";
      case "ENOTFOUND":
      case "EAI_AGAIN":
        return "the host name was not found";
      case "ECONNRESET":
        return "the connection was reset";
      case "ETIMEDOUT":
      case "UND_ERR_CONNECT_TIMEOUT":
        return "the connection timed out";
      default:
        return (err as Error).message;
    }
  }

  /** A start failure in words a user can act on. */
  private explainStart(err: unknown): string {
    const spec = this.spec;
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (isStdio(spec)) {
      if (spec.cwd && !existsSync(spec.cwd)) return `The working folder ${spec.cwd} does not exist.`;
      if (code === "ENOENT") return `The command "${spec.command}" was not found (check its path, or PATH).`;
      if (code === "EACCES") return `The command "${spec.command}" cannot be run (permission denied).`;
    } else {
      if (err instanceof StreamableHTTPError) {
        const status = err.code ?? 0;
        const hint = status === 401 || status === 403 ? " (check the headers: an API key or token?)" : "";
        return `The server at ${spec.url} answered HTTP ${status}${hint}.`;
      }
      if (err instanceof TypeError) return `Could not connect to ${spec.url}: ${this.networkReason(err)}.`;
    }
    if (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number))
      return `The server did not answer within ${seconds(this.connectTimeoutMs)} s.`;
    if (err instanceof McpError && err.code === (ErrorCode.ConnectionClosed as number))
      return `The server exited before it was ready${this.lastOutputNote()}.`;
    return `The server could not be started: ${err instanceof Error ? err.message : String(err)}`;
  }
}
