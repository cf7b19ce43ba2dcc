/**
 * Memory, context fitting and crash safety through the whole of core, with a scripted engine
 * (the real one: core.memory.integration.test.ts).
 */
import BetterSqlite3 from "better-sqlite3";
import { join } from "node:path";
import { startFakeCore } from "../../testing/core/fake-core";
import { afterEach, describe, expect, it } from "vitest";
import type { Conversation, ConversationDetail, Memory, Message } from "../api";
import { assembleCore, type Core } from "./index";
import { type EventRecorder } from "../../testing/core/events";
import { FakeEngine } from "../../testing/engine/fake-engine";
import { testDir } from "../../testing/core/temp-dir";
import { value } from "../../testing/core/result-value";

const ctx = { transport: "ipc" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  core: Core;
  engine: FakeEngine;
  events: EventRecorder;
  dataDir: string;
  conv: Conversation;
  call<T>(method: string, input: unknown): Promise<T>;
  /** Send and wait for chat.done. */
  send(text: string): Promise<{ sent: { userMessage: Message; assistantMessage: Message }; done: Message }>;
}

async function setup(options: { flushIntervalMs?: number } = {}): Promise<Setup> {
  const { core, engine, events, dataDir, call } = await startFakeCore(options);
  const conv = await call<Conversation>("conversations.create", {});
  return {
    core,
    engine,
    events,
    dataDir,
    conv,
    call,
    send: async (text) => {
      const done = events.next("chat.done");
      const sent = await call<{ userMessage: Message; assistantMessage: Message }>("chat.send", {
        conversationId: conv.id,
        text,
        // Text turns: the router may pick the "ui" adapter for these texts (GenUI mode).
        format: "text",
      });
      return { sent, done: (await done).message };
    },
  };
}

const systemOf = (engine: FakeEngine): string => engine.calls.at(-1)!.history[0]!.text;

describe("memory through core", () => {
  it("puts relevant memories into the prompt and shows them on the answer everywhere", async () => {
    const s = await setup();
    const tea = await s.call<Memory>("memories.create", { text: "The user likes green tea" });
    const { sent, done } = await s.send("What tea would I like?");
    const used = [{ id: tea.id, text: tea.text }];
    expect(sent.assistantMessage.memoriesUsed).toEqual(used);
    expect(done.memoriesUsed).toEqual(used);
    const detail = await s.call<ConversationDetail>("conversations.get", { id: s.conv.id });
    expect(detail.messages[1]!.memoriesUsed).toEqual(used);
    expect(detail.messages[0]!.memoriesUsed).toEqual([]);
    expect(systemOf(s.engine)).toBe(
      "You are Macaron, a helpful local assistant.\n\nThings you know about the user:\n- The user likes green tea",
    );
    expect(s.engine.calls.at(-1)!.history.filter((t) => t.role === "system")).toHaveLength(1);
  });

  it("proposes facts after the answer (after chat.done), unused until accepted", async () => {
    const s = await setup();
    s.engine.jsonAnswers.push('{"facts":["The user lives in Oslo","\\u0007"]}');
    const changed = s.events.next("memories.changed");
    const { done } = await s.send("I live in Oslo");
    const doneIndex = s.events.events.findIndex((e) => e.event === "chat.done");
    await changed;
    expect(s.events.events.findIndex((e) => e.event === "memories.changed")).toBeGreaterThan(doneIndex);
    // Asked as the next turn of the same conversation, with the answer and a JSON schema.
    const ask = s.engine.jsonCalls[0]!;
    expect(ask.options.jsonSchema).toBeDefined();
    expect(ask.history.at(-2)).toEqual({ role: "assistant", text: done.content });
    expect(ask.history.at(-1)!.text).toContain("<<<\nI live in Oslo\n>>>");
    const [proposed] = await s.call<Memory[]>("memories.list", {});
    expect(proposed).toMatchObject({ text: "The user lives in Oslo", status: "proposed", source: "model" });

    const next = await s.send("Where do I live? Oslo?");
    expect(next.done.memoriesUsed).toEqual([]);
    expect(systemOf(s.engine)).not.toContain("Oslo");
    await s.call("memories.update", { id: proposed!.id, status: "active" });
    const after = await s.send("Where do I live? Oslo?");
    expect(after.done.memoriesUsed.map((m) => m.text)).toEqual(["The user lives in Oslo"]);
  });

  it("remembers 'remember that …' at once; with memory off nothing is remembered, retrieved or proposed", async () => {
    const s = await setup();
    const changed = s.events.next("memories.changed");
    await s.send("Remember that my cat is called Miso");
    await changed;
    expect((await s.call<Memory[]>("memories.list", {})).map((m) => [m.text, m.status, m.source])).toEqual([
      ["my cat is called Miso", "active", "user"],
    ]);
    await s.call("settings.update", { memoryEnabled: false });
    const off = await s.send("remember that I like jazz. What is my cat called? Miso?");
    expect(off.done.memoriesUsed).toEqual([]);
    expect(systemOf(s.engine)).not.toContain("Things you know");
    // Facts were asked about the first message only (that request may have been preempted
    // and retried), never about the one sent with memory off.
    expect(s.engine.jsonCalls.length).toBeGreaterThan(0);
    expect(s.engine.jsonCalls.some((c) => c.history.at(-1)!.text.includes("jazz"))).toBe(false);
    expect(await s.call<Memory[]>("memories.list", {})).toHaveLength(1);
  });

  it("deleting a conversation keeps its memories by default, or deletes them on request", async () => {
    const s = await setup();
    await s.send("remember that I ski");
    const keep = await s.call<Conversation>("conversations.create", {});
    await s.call("conversations.delete", { id: s.conv.id });
    const [kept] = await s.call<Memory[]>("memories.list", {});
    expect(kept).toMatchObject({ text: "I ski", conversationId: null, messageId: null });

    const done = s.events.next("chat.done");
    await s.call("chat.send", { conversationId: keep.id, text: "remember: I am left-handed" });
    await done;
    await s.call("memories.create", { text: "Typed in the panel" });
    expect(await s.call("conversations.delete", { id: keep.id, deleteMemories: true })).toEqual({
      deleted: true,
    });
    expect((await s.call<Memory[]>("memories.list", {})).map((m) => m.text).sort()).toEqual([
      "I ski",
      "Typed in the panel",
    ]);
  });
});

describe("context fitting through core", () => {
  it("a conversation longer than the context keeps working (sliding window, then summary)", async () => {
    const s = await setup();
    // The scripted model has a 512-token context; each message is ~300 bytes (~100 tokens).
    for (let i = 0; i < 8; i++) {
      const { done } = await s.send(`Topic ${i}: ${"words ".repeat(50)}`);
      expect(done.status).toBe("complete");
    }
    const last = await s.send("And now?");
    expect(last.done.context).toMatchObject({ strategy: "sliding-window" });
    expect(last.done.context!.droppedMessages).toBeGreaterThan(0);
    expect(last.sent.assistantMessage.context).toEqual(last.done.context);
    const history = s.engine.calls.at(-1)!.history;
    expect(history[0]!.role).toBe("system");
    expect(history.at(-1)).toEqual({ role: "user", text: "And now?" });
    expect(history.length - 1).toBe(last.done.context!.includedMessages);

    await s.call("settings.update", { contextStrategy: "summary" });
    const summarized = await s.send("Summarize please");
    expect(summarized.done.context?.strategy).toBe("summary");
    // Extractive: the first lines of the dropped user messages, the newest ones kept.
    expect(systemOf(s.engine)).toMatch(/Earlier in this conversation.*\n- Topic \d: words/);
    const firstKept = s.engine.calls.at(-1)!.history[1]!.text;
    expect(firstKept).toMatch(/^Topic (\d)/);
    expect(systemOf(s.engine)).toContain(`- Topic ${Number(/^Topic (\d)/.exec(firstKept)![1]) - 1}:`);
    const detail = await s.call<ConversationDetail>("conversations.get", { id: s.conv.id });
    expect(detail.messages.at(-1)!.context?.strategy).toBe("summary");
    expect(detail.messages).toHaveLength(20); // nothing is deleted, only left out of the prompt
  });
});

describe("crash safety", () => {
  it("a committed message is visible to another connection at once; a partial answer is saved while it streams", async () => {
    const s = await setup({ flushIntervalMs: 5 });
    s.engine.scripts.push({ tokens: ["Half", " an", " answer"], end: "hang" });
    // Deltas may merge pieces (DeltaBatcher): wait until they add up to the whole text.
    let shown = "";
    const delta = s.events.next("chat.delta", (d) => (shown += d.delta) === "Half an answer");
    const sent = await s.call<{ userMessage: Message; assistantMessage: Message }>("chat.send", {
      conversationId: s.conv.id,
      text: "Tell me something long",
    });
    await delta;
    const path = join(s.dataDir, "macaron.db");
    const other = new BetterSqlite3(path, { readonly: true });
    const row = (id: string) => other.prepare("SELECT content, status FROM messages WHERE id = ?").get(id);
    expect(row(sent.userMessage.id)).toEqual({ content: "Tell me something long", status: "complete" });
    // The throttled save reaches the file while the answer is still streaming.
    await expect
      .poll(() => row(sent.assistantMessage.id), { timeout: 5000 })
      .toEqual({
        content: "Half an answer",
        status: "streaming",
      });
    // What a killed process leaves: a snapshot of the file right now, opened by a new core.
    const snapshot = testDir();
    await other.backup(join(snapshot, "macaron.db"));
    other.close();
    const restarted = await assembleCore({ dataDir: snapshot, log: () => undefined }, () => new FakeEngine());
    cleanups.push(() => restarted.close());
    const detail = value<ConversationDetail>(
      await restarted.dispatch("conversations.get", { id: s.conv.id }, ctx),
    );
    expect(detail.messages.map((m) => [m.content, m.status])).toEqual([
      ["Tell me something long", "complete"],
      ["Half an answer", "interrupted"],
    ]);
  });
});
