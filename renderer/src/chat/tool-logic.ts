/**
 * Pure helpers for the Agent's tool calls in the UI: steps upserted into their answer as
 * `chat.toolStep` events arrive, how a step's arguments, result and duration read, and the
 * "Add server" form turned into an `McpServerSpec` (checked here so that a typo is explained
 * next to the field, before core is asked).
 */
import type { McpServerSpec, McpServerStatus, Message, ToolStep } from "../../../electron/api";
import type { MessagesByConversation } from "./messages-by-conversation";
import { streamingPlaceholder } from "./streaming-placeholder";

/**
 * How far a step has got. A step only moves forward (pending → running → an end state), so
 * when two copies of one step meet (an event and a fetched transcript), the further one wins.
 */
const STEP_RANK: Record<ToolStep["state"], number> = {
  pending: 0,
  running: 1,
  done: 2,
  error: 2,
  denied: 2,
  stopped: 2,
  invalid: 2,
};

/** The further of two copies of one step (ties: `incoming`, the newer copy). */
export function laterStep(current: ToolStep, incoming: ToolStep): ToolStep {
  return STEP_RANK[incoming.state] >= STEP_RANK[current.state] ? incoming : current;
}

/** `steps` with `step` put in by id (the further copy kept), in index order. */
export function upsertStep(steps: readonly ToolStep[], step: ToolStep): ToolStep[] {
  const index = steps.findIndex((s) => s.id === step.id);
  if (index === -1) return [...steps, step].sort((a, b) => a.index - b.index || a.createdAt - b.createdAt);
  const kept = laterStep(steps[index]!, step);
  if (kept === steps[index]) return steps as ToolStep[];
  const next = [...steps];
  next[index] = kept;
  return next;
}

/** Two lists of one answer's steps merged step by step (see laterStep). */
export function mergeSteps(base: readonly ToolStep[], other: readonly ToolStep[]): ToolStep[] {
  let merged = base as ToolStep[];
  for (const step of other) merged = upsertStep(merged, step);
  return merged;
}

/**
 * A `chat.toolStep` event: the step goes into its answer. An answer not seen yet (the event
 * overtook chat.send's reply) starts a streaming placeholder that the reply later fills in.
 */
export function applyToolStep(
  state: MessagesByConversation,
  conversationId: string,
  messageId: string,
  step: ToolStep,
  now = Date.now(),
): MessagesByConversation {
  const list = state[conversationId] ?? [];
  const index = list.findIndex((m) => m.id === messageId);
  if (index === -1) {
    return {
      ...state,
      [conversationId]: [...list, streamingPlaceholder(conversationId, messageId, now, { steps: [step] })],
    };
  }
  const message = list[index]!;
  const steps = upsertStep(message.steps, step);
  if (steps === message.steps) return state;
  const next = [...list];
  next[index] = { ...message, steps };
  return { ...state, [conversationId]: next };
}

/** The step waiting for the user's answer in `messages`, if any (the oldest first). */
export function pendingStep(messages: readonly Message[] | undefined): ToolStep | null {
  for (const message of messages ?? []) {
    const step = message.steps.find((s) => s.state === "pending");
    if (step) return step;
  }
  return null;
}

/** A tool's arguments as the user reads them: pretty JSON, or the model's raw text as it came. */
export function formatArguments(args: unknown): string {
  if (args === undefined || args === null) return "{}";
  if (typeof args === "string") return args;
  // It came over JSON, so it stringifies (no cycles, no BigInt).
  return JSON.stringify(args, null, 2) ?? "{}";
}

/** A result is folded beyond this many characters or lines (the rest behind "Show all"). */
export const RESULT_PREVIEW_CHARS = 600;
export const RESULT_PREVIEW_LINES = 12;

/** The folded view of a result: its opening, and whether anything was left out. */
export function resultPreview(
  result: string,
  maxChars = RESULT_PREVIEW_CHARS,
  maxLines = RESULT_PREVIEW_LINES,
): { text: string; folded: boolean } {
  let cut = result.length > maxChars ? maxChars : result.length;
  let lineEnd = -1;
  for (let line = 0; line < maxLines; line += 1) {
    lineEnd = result.indexOf("\n", lineEnd + 1);
    if (lineEnd === -1) break;
  }
  if (lineEnd !== -1 && lineEnd < cut) cut = lineEnd;
  return cut < result.length ? { text: result.slice(0, cut), folded: true } : { text: result, folded: false };
}

/** "12 ms", "1.4 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

/** Who runs a tool, for display: the server's name, or "built-in" for the app's own. */
export function serverLabel(server: string): string {
  return server === "builtin" ? "built-in" : server;
}

export const STEP_STATE_LABEL: Record<ToolStep["state"], string> = {
  pending: "Waiting for your permission",
  running: "Running…",
  done: "Done",
  error: "Failed",
  denied: "Denied",
  stopped: "Stopped",
  invalid: "Invalid arguments",
};

export const DECISION_LABEL: Record<NonNullable<ToolStep["decision"]>, string> = {
  once: "Allowed once",
  always: "Always allowed in this conversation",
  remembered: "Allowed (always, in this conversation)",
  deny: "Denied by you",
};

export const SERVER_STATE_LABEL: Record<McpServerStatus["state"], string> = {
  starting: "Starting",
  ready: "Ready",
  failed: "Failed",
  crashed: "Crashed",
  stopped: "Stopped",
};

/** What the "Add server" form holds (text as typed). */
export interface ServerForm {
  name: string;
  transport: "stdio" | "http";
  command: string;
  /** One argument per line (no shell quoting to get wrong). */
  args: string;
  /** KEY=VALUE lines. */
  env: string;
  cwd: string;
  url: string;
  /** "Name: value" lines. */
  headers: string;
}

export const EMPTY_SERVER_FORM: ServerForm = {
  name: "",
  transport: "stdio",
  command: "",
  args: "",
  env: "",
  cwd: "",
  url: "",
  headers: "",
};

export type FormResult = { ok: true; name: string; spec: McpServerSpec } | { ok: false; error: string };

const NAME_PATTERN = /^[A-Za-z0-9][\w.-]*$/;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The form as an mcp.add input, or the first thing wrong with it (which field, and why). */
export function serverFromForm(form: ServerForm): FormResult {
  const name = form.name.trim();
  if (!name) return { ok: false, error: "Give the server a name." };
  if (name.length > 64 || !NAME_PATTERN.test(name)) {
    return {
      ok: false,
      error:
        "The name may use letters, digits, '_', '-' and '.', starting with a letter or digit (64 at most).",
    };
  }
  if (form.transport === "stdio") {
    const command = form.command.trim();
    if (!command) return { ok: false, error: "Enter the command that starts the server." };
    const env = parseLines(form.env, "=", (key) =>
      ENV_KEY.test(key) ? null : `"${key}" is not a variable name (letters, digits and '_').`,
    );
    if (!env.ok) return { ok: false, error: `Environment, line ${env.line}: ${env.error}` };
    const args = form.args
      .split("\n")
      .map((a) => a.trim())
      .filter((a) => a.length > 0);
    const cwd = form.cwd.trim();
    return {
      ok: true,
      name,
      spec: { type: "stdio", command, args, env: env.values, ...(cwd ? { cwd } : {}) },
    };
  }
  const url = form.url.trim();
  if (!url) return { ok: false, error: "Enter the server's URL." };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, error: `"${url}" is not a URL (for example http://127.0.0.1:3001/mcp).` };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { ok: false, error: "The URL must start with http:// or https://." };
  }
  const headers = parseLines(form.headers, ":", (key) =>
    HEADER_NAME.test(key) ? null : `"${key}" is not a header name.`,
  );
  if (!headers.ok) return { ok: false, error: `Headers, line ${headers.line}: ${headers.error}` };
  return { ok: true, name, spec: { type: "http", url, headers: headers.values } };
}

type Lines = { ok: true; values: Record<string, string> } | { ok: false; line: number; error: string };

/** "KEY<sep>VALUE" lines (blank lines skipped; the value keeps its inner spaces). */
export function parseLines(
  text: string,
  separator: "=" | ":",
  checkKey: (key: string) => string | null,
): Lines {
  const values: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!.trim();
    if (!line) continue;
    const at = line.indexOf(separator);
    if (at <= 0) {
      const shape = separator === "=" ? "KEY=VALUE" : "Name: value";
      return { ok: false, line: i + 1, error: `write it as ${shape}.` };
    }
    const key = line.slice(0, at).trim();
    const problem = checkKey(key);
    if (problem) return { ok: false, line: i + 1, error: problem };
    if (key in values) return { ok: false, line: i + 1, error: `"${key}" is given twice.` };
    values[key] = line.slice(at + 1).trim();
  }
  return { ok: true, values };
}

/** Put a server's new status into the list by name (null: removed), keeping the list's order. */
export function upsertServer(
  list: readonly McpServerStatus[],
  name: string,
  server: McpServerStatus | null,
): McpServerStatus[] {
  const index = list.findIndex((s) => s.name === name);
  if (server === null) return index === -1 ? [...list] : list.filter((s) => s.name !== name);
  if (index === -1) return [...list, server];
  const next = [...list];
  next[index] = server;
  return next;
}
