import type { Database } from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../db/database";
import { ConversationStore, DEFAULT_TITLE } from "./conversation-store";
import { MessageStore } from "./message-store";

let db: Database;
let conversations: ConversationStore;
let messages: MessageStore;

beforeEach(() => {
  db = openDatabase(":memory:");
  conversations = new ConversationStore(db);
  messages = new MessageStore(db);
});
afterEach(() => db.close());

describe("ConversationStore", () => {
  it("creates with a random id and a default title, gets and lists most recent first", () => {
    const a = conversations.create(undefined, 1000);
    const b = conversations.create("  Trip plans ", 2000);
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.id).not.toBe(b.id);
    expect(a).toEqual({ id: a.id, title: DEFAULT_TITLE, createdAt: 1000, updatedAt: 1000, adapters: "auto" });
    expect(b.title).toBe("Trip plans");
    expect(conversations.get(a.id)).toEqual(a);
    expect(conversations.get("missing")).toBeNull();
    expect(conversations.list().map((c) => c.id)).toEqual([b.id, a.id]);
    conversations.touch(a.id, 3000);
    expect(conversations.list().map((c) => c.id)).toEqual([a.id, b.id]);
  });

  it("renames and deletes (messages go with the conversation)", () => {
    const c = conversations.create("Old", 1);
    messages.append({ conversationId: c.id, role: "user", content: "hi", status: "complete" });
    expect(conversations.rename(c.id, "New", 5)).toEqual({ ...c, title: "New", updatedAt: 5 });
    expect(conversations.rename("missing", "x")).toBeNull();
    expect(conversations.delete(c.id)).toBe(true);
    expect(conversations.delete(c.id)).toBe(false);
    expect(messages.list(c.id)).toEqual([]);
  });

  it("keeps each conversation's adapter choice; unreadable values read as auto", () => {
    const c = conversations.create("Pinned", 1);
    expect(conversations.setAdapters(c.id, { pinned: "coding" }, 7)).toEqual({
      ...c,
      updatedAt: 7,
      adapters: { pinned: "coding" },
    });
    conversations.setAdapters(c.id, { blend: { ui: 0.5, chat: 1 } });
    expect(conversations.get(c.id)?.adapters).toEqual({ blend: { ui: 0.5, chat: 1 } });
    expect(conversations.setAdapters("missing", "base")).toBeNull();
    db.prepare("UPDATE conversations SET adapters_json = '{\"nonsense\":1}' WHERE id = ?").run(c.id);
    expect(conversations.get(c.id)?.adapters).toBe("auto");
  });

  it("filters by every word in titles and message contents (full-text, last word as a prefix)", () => {
    const cooking = conversations.create("Cooking pasta", 1);
    const discount = conversations.create("Shopping", 2);
    const snake = conversations.create("Python", 3);
    messages.append({
      conversationId: discount.id,
      role: "user",
      content: "Is 50% off a good deal?",
      status: "complete",
    });
    messages.append({
      conversationId: snake.id,
      role: "assistant",
      content: "use snake_case names",
      status: "complete",
    });

    expect(conversations.list("PASTA").map((c) => c.id)).toEqual([cooking.id]);
    expect(conversations.list("pas").map((c) => c.id)).toEqual([cooking.id]);
    expect(conversations.list("50%").map((c) => c.id)).toEqual([discount.id]);
    expect(conversations.list("good deal").map((c) => c.id)).toEqual([discount.id]);
    expect(conversations.list("snake_case").map((c) => c.id)).toEqual([snake.id]);
    // FTS5 syntax in user input is just text; punctuation alone matches nothing.
    expect(conversations.list('"')).toEqual([]);
    expect(conversations.list("%")).toEqual([]);
    expect(conversations.list("NEAR(snake case)").map((c) => c.id)).toEqual([]);
    expect(conversations.list("nothing like this")).toEqual([]);
    expect(conversations.list("   ")).toHaveLength(3);
  });
});

describe("MessageStore", () => {
  it("appends in order, finishes with stats, and marks leftovers of a killed process interrupted", () => {
    const c = conversations.create(undefined, 1);
    const u = messages.append({ conversationId: c.id, role: "user", content: "Hi", status: "complete" }, 10);
    const a = messages.append(
      { conversationId: c.id, role: "assistant", content: "", status: "streaming" },
      10,
    );
    expect(messages.list(c.id).map((m) => m.id)).toEqual([u.id, a.id]);
    expect(a).toEqual({
      id: a.id,
      conversationId: c.id,
      role: "assistant",
      content: "",
      status: "streaming",
      error: null,
      createdAt: 10,
      stats: null,
      routing: null,
      rating: null,
      corrected: false,
      memoriesUsed: [],
      context: null,
      steps: [],
    });
    expect(messages.countByRole(c.id, "user")).toBe(1);

    messages.saveContent(a.id, "Hel");
    expect(messages.get(a.id)?.content).toBe("Hel");
    expect(messages.markStreamingInterrupted()).toBe(1);
    expect(messages.get(a.id)).toMatchObject({ status: "interrupted", content: "Hel" });
    expect(messages.markStreamingInterrupted()).toBe(0);

    const stats = {
      tokens: 3,
      ttftMs: 5,
      durationMs: 20,
      tokensPerSecond: 100,
      contextTokens: 30,
      contextSize: 512,
    };
    expect(messages.finish(a.id, { content: "Hello", status: "complete", error: null, stats })).toBe(true);
    expect(messages.get(a.id)).toMatchObject({ content: "Hello", status: "complete", stats });
    expect(messages.finish("missing", { content: "", status: "error", error: "x", stats: null })).toBe(false);
  });

  it("hides replaced answers from the transcript and from search, but keeps them", () => {
    const c = conversations.create("T", 1);
    messages.append({ conversationId: c.id, role: "user", content: "Q", status: "complete" });
    const old = messages.append({
      conversationId: c.id,
      role: "assistant",
      content: "zebra",
      status: "complete",
    });
    messages.append(
      { conversationId: c.id, role: "assistant", content: "A2", status: "complete" },
      Date.now(),
      { versionOf: old.id },
    );
    expect(messages.list(c.id).map((m) => m.content)).toEqual(["Q", "A2"]);
    expect(messages.get(old.id)?.content).toBe("zebra");
    expect(conversations.list("zebra")).toEqual([]);
  });

  it("keeps a separate order per conversation", () => {
    const c1 = conversations.create(undefined);
    const c2 = conversations.create(undefined);
    for (const [c, text] of [
      [c1, "a"],
      [c2, "x"],
      [c1, "b"],
      [c2, "y"],
      [c1, "c"],
    ] as const) {
      messages.append({ conversationId: c.id, role: "user", content: text, status: "complete" }, 5);
    }
    expect(messages.list(c1.id).map((m) => m.content)).toEqual(["a", "b", "c"]);
    expect(messages.list(c2.id).map((m) => m.content)).toEqual(["x", "y"]);
  });
});
