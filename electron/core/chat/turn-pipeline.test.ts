import BetterSqlite3 from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { ApiError } from "../../api";
import { MessageStore } from "../conversations/message-store";
import { openDatabase } from "../db/database";
import { pipelineHarness } from "../../../testing/core/pipeline-harness";
import { crashed } from "../../../testing/engine/fake-engine";
import { testDir } from "../../../testing/core/temp-dir";
import { DEFAULT_SYSTEM_PROMPT, NO_MODEL_MESSAGE } from "./turn-pipeline";

async function expectApiError(fn: () => unknown, code: string, message?: string | RegExp): Promise<void> {
  let caught: unknown = null;
  try {
    await fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ApiError);
  expect((caught as ApiError).code).toBe(code);
  if (message) expect((caught as ApiError).message).toMatch(message);
}

describe("TurnPipeline", () => {
  it("commits the user message before generating, streams deltas, and saves the complete answer", async () => {
    const s = pipelineHarness();
    const conv = s.conversations.create(undefined);
    const seenAtGenerate: string[] = [];
    s.engine.onGenerate = () => {
      // Read through a fresh statement: what is committed, not what the pipeline holds.
      for (const m of s.messages.list(conv.id)) seenAtGenerate.push(`${m.role}:${m.status}:${m.content}`);
    };
    const done = s.events.next("chat.done");

    const { userMessage, assistantMessage } = await s.pipeline.send({
      conversationId: conv.id,
      text: "Tell me a story",
    });
    expect(userMessage).toMatchObject({
      role: "user",
      content: "Tell me a story",
      status: "complete",
      conversationId: conv.id,
    });
    expect(assistantMessage).toMatchObject({ role: "assistant", content: "", status: "streaming" });
    expect(s.engine.calls).toHaveLength(0); // send returned before generation began
    expect(s.pipeline.isGenerating(conv.id)).toBe(true);

    const { message } = await done;
    expect(seenAtGenerate).toEqual(["user:complete:Tell me a story", "assistant:streaming:"]);
    const deltas = s.events.of("chat.delta");
    for (const d of deltas)
      expect(d).toMatchObject({ conversationId: conv.id, messageId: assistantMessage.id });
    // The first piece at once; the ones right after it may be merged (DeltaBatcher), in order.
    expect(deltas[0]?.delta).toBe("Hello");
    expect(deltas.map((d) => d.delta).join("")).toBe("Hello world!");
    expect(message).toMatchObject({
      id: assistantMessage.id,
      content: "Hello world!",
      status: "complete",
      error: null,
    });
    expect(message.stats).toMatchObject({ tokens: 3, ttftMs: 1, contextTokens: 13, contextSize: 512 });
    expect(s.messages.get(assistantMessage.id)).toEqual(message);
    expect(s.pipeline.isGenerating(conv.id)).toBe(false);

    expect(s.engine.calls[0]?.history).toEqual([
      { role: "system", text: DEFAULT_SYSTEM_PROMPT },
      { role: "user", text: "Tell me a story" },
    ]);
    // Auto-titled from the first message, and announced.
    expect(s.conversations.get(conv.id)?.title).toBe("Tell me a story");
    expect(s.events.of("conversations.changed")[0]?.conversation?.title).toBe("Tell me a story");
  });

  it("sends the finished history in order, skipping failed answers, with sampling and defaults", async () => {
    const s = pipelineHarness({ deps: { systemPrompt: "Be brief.", defaultMaxTokens: 64 } });
    const conv = s.conversations.create("Named by the user");
    s.engine.scripts.push({ tokens: ["A1"] }, { tokens: ["part"], end: crashed() }, { tokens: ["A3"] });
    for (const text of ["Q1", "Q2", "Q3"]) {
      const done = s.events.next("chat.done");
      await s.pipeline.send({
        conversationId: conv.id,
        text,
        sampling: text === "Q3" ? { temperature: 0, maxTokens: 5 } : undefined,
      });
      await done;
    }
    expect(s.engine.calls[2]?.history).toEqual([
      { role: "system", text: "Be brief." },
      { role: "user", text: "Q1" },
      { role: "assistant", text: "A1" },
      { role: "user", text: "Q2" },
      { role: "user", text: "Q3" },
    ]);
    // The conversation id keys the engine's KV cache (reused across turns and restarts).
    expect(s.engine.calls[0]?.options).toEqual({ temperature: 0.7, maxTokens: 64, sessionKey: conv.id });
    expect(s.engine.calls[2]?.options).toEqual({ temperature: 0, maxTokens: 5, sessionKey: conv.id });
    expect(s.conversations.get(conv.id)?.title).toBe("Named by the user");
  });

  it("answers greedily with the demo model unless the turn sets a temperature", async () => {
    let demo = true;
    const s = pipelineHarness({ deps: { defaultMaxTokens: 64, isDemo: () => demo } });
    const conv = s.conversations.create(undefined);
    s.engine.scripts.push({ tokens: ["A1"] }, { tokens: ["A2"] }, { tokens: ["A3"] });
    for (const [text, sampling] of [
      ["Q1", undefined],
      ["Q2", { temperature: 0.9 }],
      ["Q3", undefined],
    ] as const) {
      if (text === "Q3") demo = false;
      const done = s.events.next("chat.done");
      await s.pipeline.send({ conversationId: conv.id, text, ...(sampling ? { sampling } : {}) });
      await done;
    }
    expect(s.engine.calls.map((c) => c.options.temperature)).toEqual([0, 0.9, 0.7]);
  });

  it("stops at once and keeps the partial answer as stopped", async () => {
    const s = pipelineHarness();
    const conv = s.conversations.create(undefined);
    s.engine.scripts.push({ tokens: ["Par", "tial"], end: "hang" });
    const secondDelta = s.events.next("chat.delta", (d) => d.delta === "tial");
    const done = s.events.next("chat.done");
    const { assistantMessage } = await s.pipeline.send({ conversationId: conv.id, text: "Go" });
    await secondDelta;

    expect(s.pipeline.stop(conv.id)).toBe(true);
    expect(s.pipeline.stop(conv.id)).toBe(false); // already stopping
    const { message } = await done;
    expect(message).toMatchObject({
      id: assistantMessage.id,
      content: "Partial",
      status: "stopped",
      error: null,
    });
    expect(s.messages.get(assistantMessage.id)?.status).toBe("stopped");
    expect(s.pipeline.stop(conv.id)).toBe(false); // nothing runs any more
    // A stopped answer is part of the history of the next turn.
    const next = s.events.next("chat.done");
    await s.pipeline.send({ conversationId: conv.id, text: "More" });
    await next;
    expect(s.engine.calls[1]?.history.slice(1)).toEqual([
      { role: "user", text: "Go" },
      { role: "assistant", text: "Partial" },
      { role: "user", text: "More" },
    ]);
  });

  it("marks the answer as error with the engine's message when the engine fails", async () => {
    const s = pipelineHarness({ deps: { log: () => undefined } });
    const conv = s.conversations.create(undefined);
    s.engine.scripts.push({ tokens: ["Half"], end: crashed() }, { tokens: [], end: new Error("boom") });

    let done = s.events.next("chat.done");
    await s.pipeline.send({ conversationId: conv.id, text: "One" });
    let { message } = await done;
    expect(message).toMatchObject({
      status: "error",
      content: "Half",
      error: crashed().message,
      stats: null,
    });

    done = s.events.next("chat.done");
    await s.pipeline.send({ conversationId: conv.id, text: "Two" });
    ({ message } = await done);
    expect(message).toMatchObject({ status: "error", error: "Generation failed: boom" });
  });

  it("refuses a second send in the same conversation (busy) without writing anything", async () => {
    const s = pipelineHarness();
    const conv = s.conversations.create(undefined);
    const other = s.conversations.create(undefined);
    s.engine.scripts.push({ tokens: ["x"], end: "hang" });
    const streaming = s.events.next("chat.delta");
    await s.pipeline.send({ conversationId: conv.id, text: "First" });
    await streaming;
    await expectApiError(() => s.pipeline.send({ conversationId: conv.id, text: "Second" }), "busy");
    expect(s.messages.list(conv.id)).toHaveLength(2);
    // Another conversation is accepted; its answer waits for the engine (one generation at a time).
    const otherDone = s.events.next("chat.done", (d) => d.conversationId === other.id);
    const firstDone = s.events.next("chat.done", (d) => d.conversationId === conv.id);
    const { assistantMessage } = await s.pipeline.send({ conversationId: other.id, text: "Elsewhere" });
    expect(assistantMessage.status).toBe("streaming");
    s.pipeline.stop(conv.id);
    expect((await firstDone).message.status).toBe("stopped");
    expect((await otherDone).message).toMatchObject({ status: "complete", content: "Hello world!" });
    expect(s.events.of("chat.done").map((d) => d.conversationId)).toEqual([conv.id, other.id]);
  });

  it("refuses when no model is loaded, before committing anything", async () => {
    const s = pipelineHarness();
    s.engine.loaded = null;
    const conv = s.conversations.create(undefined);
    await expectApiError(
      () => s.pipeline.send({ conversationId: conv.id, text: "Hi" }),
      "no_model",
      NO_MODEL_MESSAGE,
    );
    expect(NO_MODEL_MESSAGE).toBe("No model is loaded. Open a .gguf model or try the demo model.");
    expect(s.messages.list(conv.id)).toEqual([]);
    expect(s.conversations.get(conv.id)).toEqual(conv);
    expect(s.events.events).toEqual([]);
    await expectApiError(() => s.pipeline.send({ conversationId: "missing", text: "Hi" }), "not_found");
  });

  it("saves the partial answer while streaming, so a killed process leaves it for the next start", async () => {
    const path = join(testDir(), "macaron.db");
    const s = pipelineHarness({ path, deps: { flushIntervalMs: 20 } });
    const conv = s.conversations.create(undefined);
    s.engine.scripts.push({ tokens: ["Some", " words"], end: "hang" });
    const { assistantMessage } = await s.pipeline.send({ conversationId: conv.id, text: "Go" });

    // Another connection sees what a power cut right now would leave on disk.
    const other = new BetterSqlite3(path, { readonly: true });
    onTestFinished(() => void other.close());
    const read = other.prepare("SELECT content, status FROM messages WHERE id = ?");
    await vi.waitFor(() =>
      expect(read.get(assistantMessage.id)).toEqual({ content: "Some words", status: "streaming" }),
    );

    // The next start marks it interrupted and keeps the text.
    const reopened = openDatabase(path);
    onTestFinished(() => void reopened.close());
    const restarted = new MessageStore(reopened);
    expect(restarted.markStreamingInterrupted()).toBe(1);
    expect(restarted.get(assistantMessage.id)).toMatchObject({
      status: "interrupted",
      content: "Some words",
    });
  });

  it("on close, aborts running answers and saves them as interrupted", async () => {
    const s = pipelineHarness();
    const conv = s.conversations.create(undefined);
    s.engine.scripts.push({ tokens: ["Un", "finished"], end: "hang" });
    const delta = s.events.next("chat.delta", (d) => d.delta === "finished");
    const { assistantMessage } = await s.pipeline.send({ conversationId: conv.id, text: "Go" });
    await delta;
    await s.pipeline.close();
    expect(s.messages.get(assistantMessage.id)).toMatchObject({
      status: "interrupted",
      content: "Unfinished",
    });
    await expectApiError(() => s.pipeline.send({ conversationId: conv.id, text: "Again" }), "aborted");
  });

  it("titles a new conversation from about the first 40 characters of the first message", async () => {
    const s = pipelineHarness();
    const conv = s.conversations.create(undefined);
    const done = s.events.next("chat.done");
    await s.pipeline.send({
      conversationId: conv.id,
      text: "  How do I make\na sourdough starter from scratch at home?",
    });
    await done;
    const title = s.conversations.get(conv.id)?.title ?? "";
    expect(title).toBe("How do I make a sourdough starter from…");
    expect(title.length).toBeLessThanOrEqual(41);
  });
});
