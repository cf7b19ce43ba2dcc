/**
 * An Anthropic Messages request in the OpenAI-shaped internal form that /v1 already maps onto
 * the engine (openai/tool-calls.ts): `system` becomes a system message, assistant `tool_use`
 * blocks become `tool_calls`, user `tool_result` blocks become `tool` messages, and `tools` /
 * `tool_choice` become OpenAI's. The pairing of uses and results is checked here first, in
 * Anthropic's terms (its message indices and field names), so the shared code never has to
 * explain an index the client did not send.
 */
import { OpenAiError } from "../openai/errors";
import {
  historyTurns,
  toolRequest,
  type FunctionTool,
  type HistoryMessage,
  type ToolRequest,
} from "../openai/tool-calls";
import type { ChatTurn } from "../../core/engine/types";
import type { z } from "zod";
import type { AnthropicMessage, ContentBlock, MessagesRequest } from "./schemas";

function invalid(message: string, param: string): OpenAiError {
  return new OpenAiError(400, "invalid_request_error", "invalid_request", message, param);
}

type TextLike = { type: "text"; text: string };

function textOf(content: string | readonly TextLike[] | undefined): string {
  if (content == null) return "";
  return typeof content === "string" ? content : content.map((b) => b.text).join("\n");
}

function blocksOf(message: AnthropicMessage): ContentBlock[] {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

/** A message's text blocks joined (as /v1 chat joins text parts); uses and results left out. */
function blocksText(blocks: readonly ContentBlock[]): string {
  return blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
}

/** The text the router decides on: the last user message with text (tool results answer it). */
export function routeText(messages: readonly AnthropicMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "user") continue;
    const text = blocksText(blocksOf(m));
    if (text) return text;
  }
  return "";
}

/**
 * Anthropic's rules for tool use in the history: every `tool_use` of an assistant message is
 * answered by a `tool_result` in the user message right after it (results first in that
 * message), each once, and a result answers a use of that assistant message. Throws a 400
 * naming the message and block.
 */
function checkToolPairing(messages: readonly AnthropicMessage[]): void {
  let open = new Map<string, boolean>();
  let openAt = -1;
  messages.forEach((m, i) => {
    const blocks = blocksOf(m);
    if (m.role === "assistant") {
      if (open.size > 0) throw missingResults(open, openAt, i);
      open = new Map();
      blocks.forEach((b, j) => {
        if (b.type === "tool_result") {
          throw invalid(
            `messages.${i}.content.${j}: tool_result blocks belong in user messages.`,
            `messages.${i}.content.${j}`,
          );
        }
        if (b.type !== "tool_use") return;
        if (open.has(b.id)) {
          throw invalid(
            `messages.${i}.content.${j}.id: two tool_use blocks have the id '${b.id}'.`,
            `messages.${i}.content.${j}.id`,
          );
        }
        open.set(b.id, false);
      });
      openAt = i;
      return;
    }
    let seenOther = false;
    blocks.forEach((b, j) => {
      const at = `messages.${i}.content.${j}`;
      if (b.type === "tool_use") throw invalid(`${at}: tool_use blocks belong in assistant messages.`, at);
      if (b.type !== "tool_result") {
        seenOther = true;
        return;
      }
      if (!open.has(b.tool_use_id)) {
        const ids = [...open.keys()];
        throw invalid(
          ids.length === 0
            ? `${at}.tool_use_id: '${b.tool_use_id}' answers no tool_use; a tool_result must follow the assistant message that used the tool.`
            : `${at}.tool_use_id: '${b.tool_use_id}' answers no tool_use of messages.${openAt} (its ids: ${ids.join(", ")}).`,
          `${at}.tool_use_id`,
        );
      }
      if (open.get(b.tool_use_id)) {
        throw invalid(
          `${at}.tool_use_id: tool_use '${b.tool_use_id}' is answered a second time.`,
          `${at}.tool_use_id`,
        );
      }
      if (seenOther) {
        throw invalid(`${at}: tool_result blocks must come before any other content in the message.`, at);
      }
      open.set(b.tool_use_id, true);
    });
    if ([...open.values()].some((answered) => !answered)) throw missingResults(open, openAt, i);
    open = new Map();
  });
}

function missingResults(open: Map<string, boolean>, openAt: number, at: number): OpenAiError {
  const missing = [...open].filter(([, answered]) => !answered).map(([id]) => id);
  return invalid(
    `messages.${openAt}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(", ")}. Each tool_use must have a tool_result in messages.${at}.`,
    `messages.${openAt}`,
  );
}

/** The conversation in the OpenAI-shaped form historyTurns reads. */
function historyMessages(body: MessagesRequest): HistoryMessage[] {
  const out: HistoryMessage[] = [];
  const system = textOf(body.system);
  if (system) out.push({ role: "system", content: system });
  for (const m of body.messages) {
    const blocks = blocksOf(m);
    const text = blocksText(blocks);
    if (m.role === "assistant") {
      const calls = blocks.flatMap((b) =>
        b.type === "tool_use"
          ? [
              {
                id: b.id,
                type: "function" as const,
                function: { name: b.name, arguments: JSON.stringify(b.input) },
              },
            ]
          : [],
      );
      out.push({ role: "assistant", content: text, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
      continue;
    }
    for (const b of blocks) {
      if (b.type !== "tool_result") continue;
      const result = textOf(b.content);
      // The model reads a failed tool as such; Anthropic has no separate channel for it.
      out.push({
        role: "tool",
        tool_call_id: b.tool_use_id,
        content: b.is_error ? `Error: ${result}` : result,
      });
    }
    if (text || blocks.every((b) => b.type !== "tool_result")) out.push({ role: "user", content: text });
  }
  return out;
}

/** `tools` / `tool_choice` as OpenAI's, for toolRequest. */
function openAiTools(body: MessagesRequest): Parameters<typeof toolRequest>[0] {
  const tools: Array<z.infer<typeof FunctionTool>> = (body.tools ?? []).map((t) => ({
    type: "function",
    function: {
      name: t.name,
      ...(t.description != null ? { description: t.description } : {}),
      parameters: t.input_schema,
    },
  }));
  const choice = body.tool_choice;
  if (!choice) return { tools };
  if (choice.type === "none") return { tools, tool_choice: "none" };
  return {
    tools,
    tool_choice:
      choice.type === "tool"
        ? { type: "function", function: { name: choice.name } }
        : choice.type === "any"
          ? "required"
          : "auto",
    parallel_tool_calls: !choice.disable_parallel_tool_use,
  };
}

/** toolRequest's OpenAI field names in Anthropic's (`tools[1].function.parameters` → `tools.1.input_schema`). */
function anthropicParam(param: string): string {
  return param
    .replace(/\[(\d+)\]/g, ".$1")
    .replace(".function.parameters", ".input_schema")
    .replace(".function.name", ".name");
}

export interface EngineTurn {
  history: ChatTurn[];
  tools: ToolRequest;
}

/** The request as engine turns and tools. Throws a 400 (OpenAiError) naming the field. */
export function engineTurn(body: MessagesRequest): EngineTurn {
  const last = body.messages[body.messages.length - 1]!;
  if (last.role !== "user") {
    throw invalid(
      `messages.${body.messages.length - 1}: the last message must be a user message (prefilling the assistant's answer is not supported).`,
      "messages",
    );
  }
  // The tools before the history's pairing, as this route always checked tool_choice first.
  // Anthropic's API refuses any tool_choice but "none" without tools ("auto" too, which OpenAI's
  // allows): the shared tool-choice rule's "any" form (common/generate-rules.ts).
  let tools: ToolRequest;
  try {
    tools = toolRequest(openAiTools(body), {
      withoutTools: "any",
      ...(body.tool_choice ? { choiceWord: body.tool_choice.type } : {}),
    });
  } catch (error) {
    if (!(error instanceof OpenAiError) || !error.param) throw error;
    const param = anthropicParam(error.param);
    const message = error.message.replaceAll(error.param, param);
    throw invalid(`${param}: ${message}`, param);
  }
  checkToolPairing(body.messages);
  const history = historyTurns(historyMessages(body));
  return { history, tools };
}
