import {
  LlamaText,
  type ChatHistoryItem,
  type ChatModelFunctionCall,
  type ChatModelResponse,
} from "node-llama-cpp";
import type { ChatTurn, ToolCallFormat } from "../../common/engine-protocol";

/**
 * Convert protocol turns into node-llama-cpp chat history, ending with the model item that
 * LlamaChat completes. A trailing assistant turn is continued (prefill) rather than answered.
 *
 * An assistant turn's `calls` become `functionCall` items (name, arguments, result) after its
 * text, which the chat wrapper lays out in its own call and result syntax. Consecutive
 * assistant turns are one model response (text, calls, text, calls, …): the agent loop's
 * rounds of one answer. Each turn's calls start a new chunk, so two rounds of calls with no text
 * between them stay two rounds rather than one parallel group.
 *
 * With an adapter's `callFormat`, past calls are written exactly as the adapter writes them
 * (compact JSON arguments, as it was trained), not with node-llama-cpp's spaced JSON: the model
 * sees its own syntax, and the prompt repeats the tokens it generated, so the cache holds.
 */
export function toChatHistory(turns: readonly ChatTurn[], callFormat?: ToolCallFormat): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = [];
  for (const turn of turns) {
    switch (turn.role) {
      case "system":
        items.push({ type: "system", text: turn.text });
        break;
      case "user":
        items.push({ type: "user", text: turn.text });
        break;
      case "assistant": {
        const last = items.at(-1);
        const response = last?.type === "model" ? last.response : [];
        if (last?.type !== "model") items.push({ type: "model", response });
        appendAssistant(response, turn, callFormat);
        break;
      }
    }
  }
  if (items.at(-1)?.type !== "model") items.push({ type: "model", response: [] });
  return items;
}

function appendAssistant(
  response: ChatModelResponse["response"],
  turn: ChatTurn,
  callFormat: ToolCallFormat | undefined,
): void {
  const calls = turn.calls ?? [];
  if (turn.text !== "" || calls.length === 0) response.push(turn.text);
  calls.forEach((call, i) => {
    const item: ChatModelFunctionCall = {
      type: "functionCall",
      name: call.name,
      params: call.arguments,
      // node-llama-cpp writes `undefined` as "void"; a tool that returned nothing says so.
      result: call.result === undefined ? "" : call.result,
      ...(i === 0 ? { startsNewChunk: true } : {}),
      ...(callFormat
        ? {
            rawCall: LlamaText([
              callFormat.callPrefix,
              call.name,
              callFormat.paramsPrefix,
              JSON.stringify(call.arguments ?? {}),
              callFormat.callSuffix,
            ]).toJSON(),
          }
        : {}),
    };
    response.push(item);
  });
}
