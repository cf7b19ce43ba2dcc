import type { ChatHistoryItem } from "node-llama-cpp";
import type { ChatTurn } from "./protocol";

/**
 * Convert protocol turns into node-llama-cpp chat history, ending with the model item that
 * LlamaChat completes. A trailing assistant turn is continued (prefill) rather than answered.
 */
export function toChatHistory(turns: readonly ChatTurn[]): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = turns.map((turn): ChatHistoryItem => {
    switch (turn.role) {
      case "system":
        return { type: "system", text: turn.text };
      case "user":
        return { type: "user", text: turn.text };
      case "assistant":
        return { type: "model", response: [turn.text] };
    }
  });
  if (items.at(-1)?.type !== "model") items.push({ type: "model", response: [] });
  return items;
}
