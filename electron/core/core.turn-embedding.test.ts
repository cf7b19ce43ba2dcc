/**
 * One embedding of the user's text per turn through the whole of core: the adapter router
 * (auto) and memory retrieval share it (chat/query-embeddings.ts).
 */
import { describe, expect, it } from "vitest";
import type { Conversation, Memory, Message } from "../api";
import { startFakeCore } from "../../testing/core/fake-core";

describe("the user's text of a turn", () => {
  it("is embedded once for routing (auto) and memory retrieval, with their usual results", async () => {
    const { engine, events, call } = await startFakeCore();
    const embedded: string[][] = [];
    const embed = engine.embed.bind(engine);
    engine.embed = (texts) => {
      embedded.push([...texts]);
      return embed(texts);
    };
    const tea = await call<Memory>("memories.create", { text: "The user likes green tea" });
    const conv = await call<Conversation>("conversations.create", {});
    const send = async (text: string) => {
      const done = events.next("chat.done");
      const sent = await call<{ assistantMessage: Message }>("chat.send", {
        conversationId: conv.id,
        text,
        format: "text",
      });
      await done;
      return sent.assistantMessage;
    };
    const question = "What tea would I like?";
    const answer = await send(question);
    expect(answer.routing?.mode).toBe("auto");
    expect(answer.routing?.reason).toMatch(/^auto: /);
    expect(answer.routing?.reason).not.toMatch(/embedding failed|fallback/);
    expect(answer.memoriesUsed).toEqual([{ id: tea.id, text: tea.text }]);
    expect(embedded.filter((texts) => texts.includes(question))).toHaveLength(1);

    // The next turn's text: once again, the first one not again.
    const next = "And which coffee?";
    await send(next);
    expect(embedded.filter((texts) => texts.includes(next))).toHaveLength(1);
    expect(embedded.filter((texts) => texts.includes(question))).toHaveLength(1);
  });
});
