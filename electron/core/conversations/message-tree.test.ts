import type { Database } from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../db/database";
import { MessageContext } from "../feedback/message-context";
import { MemoryStore } from "../memory/memory-store";
import { ConversationTransfer } from "./conversation-transfer";
import { ConversationStore } from "./conversation-store";
import { MessageStore, SHOW_BRANCH_SQL } from "./message-store";

let db: Database;
let conversations: ConversationStore;
let messages: MessageStore;
let conversationId: string;

beforeEach(() => {
  db = openDatabase(":memory:");
  conversations = new ConversationStore(db);
  messages = new MessageStore(db);
  conversationId = conversations.create("T", 1).id;
});
afterEach(() => db.close());

let clock = 10;
function say(role: "user" | "assistant", content: string, versionOf?: string): string {
  const place = versionOf === undefined ? {} : { versionOf };
  return messages.append({ conversationId, role, content, status: "complete" }, clock++, place).id;
}

const shown = (): string[] => messages.list(conversationId).map((m) => m.content);
const versionsOf = (id: string): string[] | undefined =>
  messages.get(id)?.versions?.map((v) => messages.get(v)?.content ?? "?");

describe("MessageStore: versions as a tree", () => {
  it("appends a linear chain without versions", () => {
    say("user", "Q1");
    say("assistant", "A1");
    say("user", "Q2");
    expect(shown()).toEqual(["Q1", "A1", "Q2"]);
    expect(messages.list(conversationId).every((m) => m.versions === undefined)).toBe(true);
    const parents = db
      .prepare("SELECT content, parent_id FROM messages WHERE conversation_id = ? ORDER BY seq")
      .all(conversationId) as { content: string; parent_id: string | null }[];
    expect(parents.map((p) => p.parent_id === null)).toEqual([true, false, false]);
  });

  it("an edit shows a new branch in place of the old one and keeps the old one whole", () => {
    const q1 = say("user", "Q1");
    say("assistant", "A1");
    const q2 = say("user", "Q2");
    say("assistant", "A2");
    const edited = messages.append(
      { conversationId, role: "user", content: "Q2 edited", status: "complete" },
      clock++,
      { versionOf: q2 },
    );
    expect(edited.versions).toEqual([q2, edited.id]);
    expect(shown()).toEqual(["Q1", "A1", "Q2 edited"]);
    say("assistant", "A2 for the edit");
    expect(shown()).toEqual(["Q1", "A1", "Q2 edited", "A2 for the edit"]);
    expect(versionsOf(edited.id)).toEqual(["Q2", "Q2 edited"]);
    expect(messages.list(conversationId).find((m) => m.content === "Q2 edited")?.versions).toEqual([
      q2,
      edited.id,
    ]);
    // Flip back: the old question and its answer are the transcript again, and searchable.
    expect(messages.showVersion(q2)).toBe(conversationId);
    expect(shown()).toEqual(["Q1", "A1", "Q2", "A2"]);
    expect(conversations.list("edit").map((c) => c.id)).toEqual([]);
    expect(messages.showVersion(edited.id)).toBe(conversationId);
    expect(conversations.list("edit").map((c) => c.id)).toEqual([conversationId]);
    // Editing the first message: versions at the root.
    const q1b = say("user", "Q1 again", q1);
    expect(shown()).toEqual(["Q1 again"]);
    expect(versionsOf(q1b)).toEqual(["Q1", "Q1 again"]);
    expect(messages.showVersion("missing")).toBeNull();
  });

  it("remembers the versions chosen below a branch while it is hidden", () => {
    const q1 = say("user", "Q1");
    const a1 = say("assistant", "A1");
    say("assistant", "A1 again", a1); // a regeneration
    say("user", "Q2");
    const q1b = say("user", "Q1 edited", q1);
    say("assistant", "B1");
    expect(shown()).toEqual(["Q1 edited", "B1"]);
    messages.showVersion(q1);
    // The regenerated answer is still the one shown under Q1, with what followed it.
    expect(shown()).toEqual(["Q1", "A1 again", "Q2"]);
    messages.showVersion(a1);
    expect(shown()).toEqual(["Q1", "A1"]);
    // A new message follows the end of the shown branch.
    say("user", "Q2 after A1");
    expect(shown()).toEqual(["Q1", "A1", "Q2 after A1"]);
    messages.showVersion(q1b);
    expect(shown()).toEqual(["Q1 edited", "B1"]);
    // The search index holds the shown branch only.
    expect(conversations.list("again").map((c) => c.id)).toEqual([]);
    messages.showVersion(q1);
    expect(conversations.list("after").map((c) => c.id)).toEqual([conversationId]);
    db.prepare("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)").run();
  });

  it("feedback on a version carries that version's own branch", () => {
    const q1 = say("user", "Q1");
    const a1 = say("assistant", "A1");
    say("user", "Q2");
    say("user", "Q1 edited", q1);
    const b1 = say("assistant", "B1");
    const context = new MessageContext(db);
    expect(context.conversationUpTo(a1)).toEqual([
      { role: "user", text: "Q1" },
      { role: "assistant", text: "A1" },
    ]);
    expect(context.conversationUpTo(b1)).toEqual([
      { role: "user", text: "Q1 edited" },
      { role: "assistant", text: "B1" },
    ]);
  });

  it("exports the shown branch, and an import of it is a chain without versions", () => {
    const q1 = say("user", "Q1");
    say("assistant", "A1");
    say("user", "Q1 edited", q1);
    say("assistant", "B1");
    const transfer = new ConversationTransfer(db, {
      conversations,
      messages,
      memories: new MemoryStore(db),
    });
    const { json } = transfer.export(conversationId);
    const exported = JSON.parse(json) as { conversations: { messages: { content: string }[] }[] };
    expect(exported.conversations[0]?.messages.map((m) => m.content)).toEqual(["Q1 edited", "B1"]);
    const [imported] = transfer.import(json).conversationIds;
    const list = messages.list(imported!);
    expect(list.map((m) => m.content)).toEqual(["Q1 edited", "B1"]);
    expect(list.every((m) => m.versions === undefined)).toBe(true);
    // Editing the imported question works on the chain like on any transcript.
    messages.append(
      { conversationId: imported!, role: "user", content: "Q1 again", status: "complete" },
      clock++,
      { versionOf: list[0]!.id },
    );
    expect(messages.list(imported!).map((m) => m.content)).toEqual(["Q1 again"]);
  });
});

describe("MessageStore: switching cost", () => {
  it("walks the branch through the parent index, never an index built over the whole table", () => {
    const db = openDatabase(":memory:");
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN ${SHOW_BRANCH_SQL}`)
      .all({ c: "x" })
      .map((r) => (r as { detail: string }).detail);
    expect(plan).toContain("SEARCH m USING INDEX messages_parent (parent_id=?)");
    expect(plan.filter((d) => /AUTOMATIC|SCAN messages\b|SCAN m\b/.test(d))).toEqual([]);
    db.close();
  });
});
