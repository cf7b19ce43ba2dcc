/**
 * OpenAI function calling on /v1, mapped onto the engine's tools: the request's `tools` and
 * `tool_choice` become GenerateOptions, a history of assistant `tool_calls` and `tool` messages
 * becomes ChatTurn.calls (results matched by `tool_call_id`), and the engine's calls become
 * `message.tool_calls` with `call_…` ids. The client runs the tools; /v1 never does.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { checkArguments, schemaProblem } from "../../core/tools/argument-check";
import type {
  ChatTurn,
  GenerateOptions,
  ToolCallOut,
  ToolCallRecord,
  ToolChoice,
  ToolDefinition,
} from "../../core/engine/types";
import { toolProblems, type ChoiceWithoutTools } from "../../../common/generate-rules";
import { OpenAiError } from "./errors";

/** OpenAI's rule for function names. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** OpenAI's limit on `tools`. */
export const MAX_TOOLS = 128;

export const FunctionTool = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string().regex(TOOL_NAME, "must be 1 to 64 letters, digits, underscores or dashes"),
    description: z.string().max(100_000).nullish(),
    // Checked by schemaProblem (ajv) after parsing, for a message naming the JSON Schema fault.
    parameters: z.unknown().optional(),
    // Generation is always grammar-constrained: `strict` changes nothing, and is accepted.
    strict: z.boolean().nullish(),
  }),
});

export const ToolChoiceField = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) }),
]);
export type ToolChoiceField = z.infer<typeof ToolChoiceField>;

export const AssistantToolCall = z.object({
  id: z.string().min(1).max(256),
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1).max(256), arguments: z.string() }),
});

/** What the engine is asked for: no tools at all, or these under this choice. */
export type ToolRequest = Pick<GenerateOptions, "tools" | "toolChoice" | "parallelToolCalls">;

function invalid(message: string, param: string): OpenAiError {
  return new OpenAiError(400, "invalid_request_error", "invalid_request", message, param);
}

/**
 * The request's tools as engine definitions. Throws a 400 naming the field for a bad schema, or
 * a broken tool rule (common/generate-rules.ts, in `tool_choice`'s name): a duplicate name, or a
 * `tool_choice` the tools cannot satisfy. `tool_choice: "none"` and an empty `tools` list
 * generate plain text. `rules`: for another API mapped onto this one (Anthropic's), which
 * choices need tools and the word its client wrote for the choice.
 */
export function toolRequest(
  body: {
    tools?: Array<z.infer<typeof FunctionTool>> | null;
    tool_choice?: ToolChoiceField | null;
    parallel_tool_calls?: boolean | null;
  },
  rules: { withoutTools?: ChoiceWithoutTools; choiceWord?: string } = {},
): ToolRequest {
  const tools = body.tools ?? [];
  const choice = body.tool_choice;
  const definitions: ToolDefinition[] = tools.map((tool, i) => {
    const { name, description, parameters } = tool.function;
    if (parameters !== undefined) {
      const problem = schemaProblem(parameters, `tools[${i}].function.parameters`);
      if (problem) throw invalid(`Tool '${name}': ${problem}`, `tools[${i}].function.parameters`);
    }
    return {
      name,
      ...(description ? { description } : {}),
      ...(parameters !== undefined ? { parameters: parameters as Record<string, unknown> } : {}),
    };
  });
  // What the client asked for: absent and "none" ask nothing of the tools.
  const toolChoice: ToolChoice | undefined =
    choice == null || choice === "none"
      ? undefined
      : typeof choice === "object"
        ? { name: choice.function.name }
        : choice;
  const [problem] = toolProblems(
    definitions.map((d) => d.name),
    toolChoice,
    {
      tools: "tools",
      toolChoice: "tool_choice",
      ...(rules.choiceWord ? { choiceWord: rules.choiceWord } : {}),
    },
    rules.withoutTools,
  );
  if (problem)
    throw invalid(
      problem.message,
      problem.rule === "duplicateName" ? `tools[${problem.index}].function.name` : "tool_choice",
    );
  if (choice === "none" || definitions.length === 0) return {};
  return {
    tools: definitions,
    toolChoice: toolChoice ?? "auto",
    parallelToolCalls: body.parallel_tool_calls ?? true,
  };
}

/** Message content as text: a string, text parts joined by newlines, or null (none). */
export type MessageContent = string | Array<{ type: "text"; text: string }> | null | undefined;

export function contentText(content: MessageContent): string {
  if (content == null) return "";
  return typeof content === "string" ? content : content.map((p) => p.text).join("\n");
}

/** The shapes of messages this module reads (schemas.ts parses them). */
export type HistoryMessage =
  | { role: "system" | "developer" | "user"; content: MessageContent }
  | {
      role: "assistant";
      content?: MessageContent;
      tool_calls?: Array<z.infer<typeof AssistantToolCall>> | null;
    }
  | { role: "tool"; content: MessageContent; tool_call_id: string };

/** A call's arguments as the history gives them (a JSON string); kept as text if it does not parse. */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A tool message's content as the engine shows it: a JSON object or array as that JSON (the
 * engine writes results as JSON, and a string of JSON would be escaped into one long string),
 * anything else as the text it is.
 */
function resultValue(text: string): unknown {
  const start = text.trimStart()[0];
  if (start !== "{" && start !== "[") return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The request's messages as engine turns. Each `tool` message must answer a call of an earlier
 * assistant message in the same run of tool messages, once; every call must get its result
 * before the next user, system or assistant message. Throws a 400 naming the message otherwise.
 */
export function historyTurns(messages: readonly HistoryMessage[]): ChatTurn[] {
  const turns: ChatTurn[] = [];
  /** Calls of the last assistant message still waiting for a result, by id. */
  let open = new Map<string, { record: ToolCallRecord; answered: boolean }>();
  let openAt = -1;

  const closeOpen = (at: number) => {
    const missing = [...open].filter(([, c]) => !c.answered).map(([id]) => id);
    if (missing.length > 0) {
      throw invalid(
        `The assistant message with 'tool_calls' at messages[${openAt}] must be followed by tool messages answering each call; no result for ${missing.join(", ")} before messages[${at}].`,
        `messages[${openAt}].tool_calls`,
      );
    }
    open = new Map();
  };

  messages.forEach((m, i) => {
    if (m.role === "tool") {
      const call = open.get(m.tool_call_id);
      if (open.size === 0) {
        throw invalid(
          `messages[${i}] is a tool result with no assistant message with 'tool_calls' before it.`,
          `messages[${i}]`,
        );
      }
      if (!call) {
        throw invalid(
          `messages[${i}].tool_call_id '${m.tool_call_id}' answers no call of messages[${openAt}] (its ids: ${[...open.keys()].join(", ")}).`,
          `messages[${i}].tool_call_id`,
        );
      }
      if (call.answered) {
        throw invalid(
          `messages[${i}] answers call '${m.tool_call_id}' a second time.`,
          `messages[${i}].tool_call_id`,
        );
      }
      call.answered = true;
      call.record.result = resultValue(contentText(m.content));
      return;
    }
    closeOpen(i);
    if (m.role !== "assistant") {
      turns.push({ role: m.role === "developer" ? "system" : m.role, text: contentText(m.content) });
      return;
    }
    const calls = m.tool_calls ?? [];
    const turn: ChatTurn = { role: "assistant", text: contentText(m.content) };
    if (calls.length > 0) {
      turn.calls = [];
      calls.forEach((c, j) => {
        if (open.has(c.id)) {
          throw invalid(
            `Two tool calls of messages[${i}] have the id '${c.id}'.`,
            `messages[${i}].tool_calls[${j}].id`,
          );
        }
        const record: ToolCallRecord = {
          name: c.function.name,
          arguments: parseArguments(c.function.arguments),
          result: "",
        };
        turn.calls!.push(record);
        open.set(c.id, { record, answered: false });
      });
      openAt = i;
    }
    turns.push(turn);
  });
  closeOpen(messages.length);
  return turns;
}

/** A call as OpenAI returns it: `arguments` is a JSON string. */
export interface OpenAiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** `call_` + 24 random alphanumerics, as OpenAI's ids look. */
export function newCallId(): string {
  return `call_${randomBytes(18).toString("base64url").replace(/[-_]/g, "").slice(0, 24).padEnd(24, "0")}`;
}

/**
 * The engine's calls for the response. The grammar keeps names and arguments to the tools, but
 * it enforces syntax only (ARCHITECTURE.md): each call is checked against its tool's schema
 * again, and a call that does not match is a server error, never handed to the client as valid.
 */
export function responseToolCalls(calls: readonly ToolCallOut[], request: ToolRequest): OpenAiToolCall[] {
  const tools = new Map((request.tools ?? []).map((t) => [t.name, t]));
  const kept = request.parallelToolCalls === false ? calls.slice(0, 1) : calls;
  return kept.map((call) => {
    const tool = tools.get(call.name);
    if (!tool) {
      throw new OpenAiError(
        500,
        "server_error",
        "invalid_tool_call",
        `The model called '${call.name}', which is not in 'tools'.`,
      );
    }
    const args = call.arguments ?? {};
    const check = checkArguments(tool.parameters ?? { type: "object" }, args);
    if (!check.ok) {
      throw new OpenAiError(
        500,
        "server_error",
        "invalid_tool_call",
        `The model's call of '${call.name}' does not match its schema: ${check.message}.`,
      );
    }
    return {
      id: newCallId(),
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(args) },
    };
  });
}
