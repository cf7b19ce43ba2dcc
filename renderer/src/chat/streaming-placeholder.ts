import { messageDefaults, type Message } from "../../../electron/api";

/**
 * The assistant message shown for an answer whose first event (a delta, a tool step) arrived
 * before the message itself (chat.send's reply or a reload): streaming, empty but for `over`.
 */
export function streamingPlaceholder(
  conversationId: string,
  id: string,
  now: number,
  over: Partial<Pick<Message, "content" | "steps">>,
): Message {
  return {
    ...messageDefaults(),
    id,
    conversationId,
    role: "assistant",
    content: "",
    status: "streaming",
    error: null,
    createdAt: now,
    stats: null,
    ...over,
  };
}
