/**
 * chat.regenerate's format: "Answer as text" under a UI answer that failed to show answers the
 * same question again as text (no catalog grammar, no UI prompt); without a format, a UI answer
 * is answered again as UI (what "Regenerate" did before).
 */
import { describe, expect, it } from "vitest";
import { startFakeCore } from "../../../testing/core/fake-core";
import type { Conversation, ConversationDetail, Message } from "../../api";
import { GENUI_INSTRUCTIONS } from "../../../common/prompts";

async function failedUiAnswer() {
  const s = await startFakeCore();
  await s.call("settings.update", { memoryEnabled: false });
  const conversation = await s.call<Conversation>("conversations.create", {});
  s.engine.jsonAnswers.push("]]]");
  const sent = await s.call<{ assistantMessage: Message }>("chat.send", {
    conversationId: conversation.id,
    text: "Log my run",
    format: "ui",
  });
  const { message } = await s.events.next("chat.done", (d) => d.message.id === sent.assistantMessage.id);
  expect(message.ui?.blocks[0]).toMatchObject({ root: { type: "Invalid" } });
  return { ...s, conversation, failed: message };
}

describe("chat.regenerate format", () => {
  it('answers a failed UI answer again as text with format "text", replacing it', async () => {
    const s = await failedUiAnswer();
    const jsonCalls = s.engine.jsonCalls.length;
    const { assistantMessage } = await s.call<{ assistantMessage: Message }>("chat.regenerate", {
      conversationId: s.conversation.id,
      format: "text",
    });
    expect(assistantMessage.format).toBeUndefined();
    const { message } = await s.events.next("chat.done", (d) => d.message.id === assistantMessage.id);
    expect(message.format).toBeUndefined();
    expect(message.ui ?? null).toBeNull();
    // No grammar request: the text answer went through the plain generation path.
    expect(s.engine.jsonCalls).toHaveLength(jsonCalls);
    const detail = await s.call<ConversationDetail>("conversations.get", { id: s.conversation.id });
    expect(detail.messages.map((m) => m.id)).toEqual([detail.messages[0]!.id, assistantMessage.id]);
    expect(detail.messages[0]!.content).toBe("Log my run");
  });

  it("keeps a UI answer UI when regenerated without a format", async () => {
    const s = await failedUiAnswer();
    s.engine.jsonAnswers.push("]]]");
    const { assistantMessage } = await s.call<{ assistantMessage: Message }>("chat.regenerate", {
      conversationId: s.conversation.id,
    });
    expect(assistantMessage.format).toBe("ui");
    await s.events.next("chat.done", (d) => d.message.id === assistantMessage.id);
    expect(s.engine.jsonCalls.at(-1)!.history[0]!.text).toContain(GENUI_INSTRUCTIONS);
  });

  it("refuses a format that is not text or ui", async () => {
    const s = await failedUiAnswer();
    await expect(
      s.call("chat.regenerate", { conversationId: s.conversation.id, format: "html" }),
    ).rejects.toThrow();
  });
});
