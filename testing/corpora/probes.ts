/**
 * The probe corpus: hostile inputs kept as data under corpus/ (GenUI specs, GenUI
 * interactions, conversation imports, file paths), with the few that are too big to commit
 * written as placeholders ("@ROWS:20000") that `expand` turns into the real value. The
 * probe test (probe-corpus.engine.test.ts) feeds every one through the headless server.
 *
 * Hostile peers are cases too: a model hub (hub.json: faults of the loopback test hub,
 * testing/hub/hf-hub-server.ts), MCP servers (mcp.json: modes of
 * testing/mcp/hostile-mcp-server.mjs), and requests to the feedback cloud (cloud.json). Their
 * runners: electron/server/probes/probe-corpus-hostile.test.ts and cloud/probe-corpus.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const CORPUS_DIR = join(import.meta.dirname, "probes");

export interface SpecProbe {
  name: string;
  spec: unknown;
}
export interface InteractionProbe {
  name: string;
  componentId: string;
  action: string;
  values?: unknown;
}
export interface ImportProbe {
  name: string;
  json: string;
}
/** How the probe's file is made in a scratch folder before the call; "none": nothing is made. */
export type PathMake = "missing" | "folder" | "empty" | "text" | "fifo" | "socket" | "symlink" | "none";
export interface PathProbe {
  name: string;
  make: PathMake;
  /** Relative to the scratch folder (sent both absolute and relative to the working directory). */
  path?: string;
  /** Sent exactly as written. */
  absolute?: string;
  /** For symlinks: what the link points to (relative to the scratch folder, or absolute). */
  target?: string;
}

/** What the app answers to a hub case (see HubProbe). */
export type HubExpect = "download-error" | "download-unverified" | "download-done" | "refused" | "ok";

/** One hostile model hub answer and what the app, asked through the headless server, must make of it. */
export interface HubProbe {
  id: string;
  why: string;
  /** A repo file (`owner/name/file`) or an exact request path (`/api/models`) of the test hub. */
  at: string;
  /**
   * The test hub's fault(s) there (hf-hub-server.ts `Fault`); an "answer" may give `json` (sent
   * as JSON) instead of `body`. In strings `@HUB` is the hub's URL, `@OTHER` another host's.
   */
  fault: Record<string, unknown> | Record<string, unknown>[];
  /** The app's method and input. */
  call: { method: "hub.search" | "hub.repo" | "hub.download"; input: Record<string, unknown> };
  /** Set the hub token first (the gated repo's). */
  token?: boolean;
  /**
   * "refused": a clear error answer (`code` when given); "ok": a plain answer (`files`: the
   * files hub.repo lists); "download-*": the download starts and ends in that state.
   */
  expect: HubExpect;
  code?: string;
  /** A regular expression the refusal's or the download's error message matches. */
  message?: string;
  files?: string[];
  /** The other host got requests, none of them with the token. */
  noTokenElsewhere?: boolean;
}

/** One mode of the hostile MCP server, added through mcp.add and its tool called by an Agent turn. */
export interface McpProbe {
  id: string;
  why: string;
  mode: string;
  size?: number;
  /** The hostile tool of the mode. */
  tool: string;
  expect: "tool-refused" | "description-cut" | "flood-dropped" | "result-cut";
  /** For "tool-refused": a regular expression the tool's problem matches. */
  problem?: string;
}

/**
 * One request to the feedback cloud. Placeholders: `@VICTIM_ID` / `@VICTIM_TOKEN` (an install
 * registered before the case), `@OTHER_TOKEN` (another one), `@NEW_ID` (a fresh UUID each time);
 * `{"@item": KEY, ...fields}` is a valid item with that key and those fields; a `raw` body may be
 * `@BYTES:N`, `@ZEROS:N` or `@DEEP_BRACKETS:N`.
 */
export interface CloudProbe {
  id: string;
  why: string;
  request: {
    method: "POST" | "GET" | "DELETE";
    path: string;
    /** The Bearer token (a placeholder or a literal); none when absent. */
    auth?: string;
    headers?: Record<string, string>;
    json?: unknown;
    raw?: string;
    /** Gzip the body and say so (content-encoding). */
    gzip?: boolean;
  };
  /** Sent this many times (each with its own `@NEW_ID`); `expect` is about the last answer. */
  repeat?: number;
  expect: { status: number; error?: string; retryAfter?: boolean };
}

/** A chain of `depth` Cards around a Text (iterative: the point is input too deep to recurse over). */
function deepCards(depth: number): unknown {
  let node: unknown = { type: "Text", id: "leaf", props: { markdown: "deep" } };
  for (let i = 0; i < depth; i++) node = { type: "Card", id: `d${i}`, props: {}, children: [node] };
  return { version: 1, blocks: [{ kind: "ui", root: node }] };
}

/** Replaces the placeholders of the corpus files by the values they stand for. */
export function expand(value: unknown): unknown {
  if (typeof value === "string") {
    const [tag, a, b] = value.split(":");
    switch (tag) {
      case "@REPEAT":
        return (a ?? "x").repeat(Number(b));
      case "@ROWS":
        return Array.from({ length: Number(a) }, (_, i) => [i]);
      case "@BLOCKS":
        return Array.from({ length: Number(a) }, (_, i) => ({ kind: "text", markdown: `block ${i}` }));
      case "@DEEP":
        return deepCards(Number(a));
      case "@FIELDS":
        return Object.fromEntries(Array.from({ length: Number(a) }, (_, i) => [`f${i}`, i]));
      case "@TREE":
        return Array.from({ length: Number(a) }, (_, i) => ({ type: "file", path: `d/f${i}.txt`, size: 1 }));
      case "@LONGPATH": {
        // Folders of 200 characters, so that no single name is over NAME_MAX.
        const length = Number(a);
        const parts: string[] = [];
        while (parts.join("/").length < length) parts.push("d".repeat(200));
        return parts.join("/").slice(0, length);
      }
      default:
        return value;
    }
  }
  if (Array.isArray(value)) return value.map(expand);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v)]));
  }
  return value;
}

function readJson<T>(name: string): T {
  return JSON.parse(readFileSync(join(CORPUS_DIR, name), "utf8")) as T;
}

export function specProbes(): SpecProbe[] {
  return readJson<SpecProbe[]>("genui-specs.json").map((p) => ({ name: p.name, spec: expand(p.spec) }));
}

export function interactionProbes(): InteractionProbe[] {
  return readJson<InteractionProbe[]>("genui-interactions.json").map((p) => expand(p) as InteractionProbe);
}

/** Hostile `model` values for /v1/chat/completions. */
export function openAiModelProbes(): string[] {
  return readJson<string[]>("openai-models.json").map((m) => expand(m) as string);
}

export function pathProbes(): PathProbe[] {
  return readJson<PathProbe[]>("paths.json").map((p) => expand(p) as PathProbe);
}

export function hubProbes(): HubProbe[] {
  return readJson<HubProbe[]>("hub.json").map((p) => expand(p) as HubProbe);
}

export function mcpProbes(): McpProbe[] {
  return readJson<McpProbe[]>("mcp.json");
}

export function cloudProbes(): CloudProbe[] {
  return readJson<CloudProbe[]>("cloud.json").map((p) => expand(p) as CloudProbe);
}

/** The committed import files, as raw text, plus the generated ones too big to commit. */
export function importProbes(): ImportProbe[] {
  const dir = join(CORPUS_DIR, "imports");
  const files = readdirSync(dir)
    .sort()
    .map((name) => ({ name, json: readFileSync(join(dir, name), "utf8") }));
  const head = '{"format":"macaron-export","version":1,"exportedAt":0,"conversations":';
  const conversation = (id: string, content: string) =>
    JSON.stringify({
      id,
      title: id,
      createdAt: 0,
      updatedAt: 0,
      messages: [{ id: `${id}-m`, role: "user", content, status: "complete", createdAt: 0 }],
    });
  return [
    ...files,
    { name: "brackets nested 100k deep", json: "[".repeat(100_000) + "]".repeat(100_000) },
    { name: "objects nested 65 deep", json: '{"a":'.repeat(65) + "1" + "}".repeat(65) },
    { name: "content over 1M characters", json: `${head}[${conversation("big", "x".repeat(1_000_001))}]}` },
    {
      name: "10,001 conversations",
      json: `${head}[${Array.from({ length: 10_001 }, (_, i) => conversation(`c${i}`, "x")).join(",")}]}`,
    },
    { name: "a number of 100k digits", json: `${head}[],"exportedAt":${"9".repeat(100_000)}}` },
    {
      name: "a string of 2M backslash escapes",
      json: `${head}[${conversation("esc", "\\n".repeat(1_000_000))}]}`,
    },
  ];
}
