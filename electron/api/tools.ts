/**
 * Tools the Agent specialist can call: MCP servers (stdio or Streamable HTTP, configured by the
 * user), the app's built-in tools, and each call's step in an answer's trajectory (call,
 * arguments, permission, result or error, duration).
 */
import { z } from "zod";

/** A server's name: its key in the `mcpServers` config. */
export const McpServerName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][\w.-]*$/, "letters, digits, '_', '-' and '.'");

/**
 * One server as the `mcpServers` JSON format of other apps writes it (Claude Desktop, LM
 * Studio, Cursor): a command to start (stdio) or a URL (Streamable HTTP). The process gets only
 * the `env` given here (and PATH, to find the command).
 */
export const McpServerSpec = z.union([
  z
    .object({
      type: z.literal("stdio").optional(),
      command: z.string().min(1).max(4096),
      args: z.array(z.string().max(4096)).max(256).default([]),
      env: z.record(z.string(), z.string().max(32_768)).default({}),
      cwd: z.string().min(1).max(4096).optional(),
    })
    .strict(),
  z
    .object({
      type: z.enum(["http", "streamable-http", "streamableHttp"]).optional(),
      url: z.string().url().max(4096),
      headers: z.record(z.string(), z.string().max(8192)).default({}),
    })
    .strict(),
]);
export type McpServerSpec = z.infer<typeof McpServerSpec>;

/** The `mcpServers` file format. */
export const McpConfigFile = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

export const McpServerState = z.enum(["starting", "ready", "failed", "crashed", "stopped"]);
export type McpServerState = z.infer<typeof McpServerState>;

/** A tool as the user sees it: from a server (or "builtin"), on or off. */
export const ToolInfo = z.object({
  /** The MCP server's name, or "builtin" for the app's own tools. */
  server: z.string(),
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  enabled: z.boolean(),
});
export type ToolInfo = z.infer<typeof ToolInfo>;

export const McpServerStatus = z.object({
  name: McpServerName,
  transport: z.enum(["stdio", "http"]),
  /** What starts it, for display: "command arg…" or the URL. Env values are never shown. */
  target: z.string(),
  /** The env variable names the config gives (values stay hidden). */
  envKeys: z.array(z.string()),
  state: McpServerState,
  /** Why it failed or crashed, for the user. */
  error: z.string().nullable(),
  tools: z.array(ToolInfo),
  /** Lines kept of the server's stderr and the connection's events (see mcp.logs). */
  logLines: z.number().int().nonnegative(),
});
export type McpServerStatus = z.infer<typeof McpServerStatus>;

export const ToolDecision = z.enum(["once", "always", "deny"]);
export type ToolDecision = z.infer<typeof ToolDecision>;

/**
 * One step of an answer's trajectory. "pending": waiting for the user's permission;
 * "running": allowed and called; "done"/"error": its result; "denied": the user said no (the
 * tool never saw the call); "stopped": Stop ended the answer before or during the call;
 * "invalid": the model's arguments did not match the tool's schema (nothing was called).
 */
export const ToolStep = z.object({
  id: z.string(),
  messageId: z.string(),
  /** 0, 1, … within the answer. */
  index: z.number().int().nonnegative(),
  server: z.string(),
  tool: z.string(),
  arguments: z.unknown(),
  state: z.enum(["pending", "running", "done", "error", "denied", "stopped", "invalid"]),
  /** How it was allowed: "once", "always" (this call granted it), "remembered" (an earlier "always" in this conversation), or "deny". */
  decision: z.enum(["once", "always", "remembered", "deny"]).nullable(),
  /** The result as given to the model (text; JSON results stringified), truncated at the limit. */
  result: z.string().nullable(),
  /** The result was longer than the limit and was cut (the model saw the cut version). */
  truncated: z.boolean(),
  error: z.string().nullable(),
  /** From the call to its result; null while pending. */
  durationMs: z.number().nonnegative().nullable(),
  createdAt: z.number().int(),
});
export type ToolStep = z.infer<typeof ToolStep>;

/** The most steps (tool calls) one answer may take before it must answer in text. */
export const MAX_TOOL_STEPS = 8;
/** Longer tool results are cut to this many characters (and marked truncated). */
export const TOOL_RESULT_MAX_CHARS = 16_000;
/** A tool call that takes longer fails with a timeout error. */
export const TOOL_CALL_TIMEOUT_MS = 60_000;
