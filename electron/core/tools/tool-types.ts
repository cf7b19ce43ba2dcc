/**
 * What the Agent's tool calls go through: sources of callable tools (the MCP servers, the app's
 * built-in tools) behind one catalog, each call checked against its schema and the user's
 * permission before it runs (electron/core/chat, the agent loop).
 */

/** A tool a source can run now. `server` is the MCP server's name or "builtin". */
export interface CallableTool {
  server: string;
  name: string;
  description: string;
  /** JSON Schema (an object schema) of the arguments. */
  inputSchema: Record<string, unknown>;
}

/** What a call gave back: text for the model (cut at TOOL_RESULT_MAX_CHARS), or an error. */
export type ToolOutcome = { ok: true; text: string; truncated: boolean } | { ok: false; error: string };

export interface ToolSource {
  /** The tools usable now (enabled; for MCP, its server is ready). */
  tools(): CallableTool[];
  /**
   * Run one tool. Never throws: timeouts, crashes and tool errors come back as `ok: false`.
   * Aborting `signal` cancels the call (the outcome is then an error saying so).
   */
  call(tool: CallableTool, args: unknown, signal: AbortSignal): Promise<ToolOutcome>;
}

/** The name of the built-in tools' "server". */
export const BUILTIN_SERVER = "builtin";
