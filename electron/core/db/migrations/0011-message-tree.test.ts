import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MessageStore } from "../../conversations/message-store";
import { migrate } from "../migrate";
import { migrations } from "./index";

/**
 * A database at schema 10: c1 has a question, an answer regenerated twice (old1 → old2 → a1),
 * a second question and its answer; c2 a plain exchange.
 */
function atV10(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version < 11),
  );
  db.exec(`
    INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Zebras', 1, 1), ('c2', 'Other', 1, 1);
    INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES
      ('q1', 'c1', 'user', 'tell me about stripes', 'complete', 1, 1),
      ('old1', 'c1', 'assistant', 'zebras have stripes', 'complete', 2, 2),
      ('old2', 'c1', 'assistant', 'stripes are black', 'complete', 3, 3),
      ('a1', 'c1', 'assistant', 'stripes confuse flies', 'complete', 4, 4),
      ('q2', 'c1', 'user', 'and horses', 'complete', 5, 5),
      ('a2', 'c1', 'assistant', 'horses have none', 'complete', 6, 6),
      ('x1', 'c2', 'user', 'hello stripes', 'complete', 1, 1),
      ('x2', 'c2', 'assistant', 'hi', 'complete', 2, 2);
    UPDATE messages SET replaced_by = 'old2' WHERE id = 'old1';
    UPDATE messages SET replaced_by = 'a1' WHERE id = 'old2';
  `);
  return db;
}

const upTo11 = migrations.filter((m) => m.version <= 11);

const matches = (db: Database, query: string): string[] =>
  db
    .prepare(
      `SELECT m.id FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
       WHERE messages_fts MATCH ? ORDER BY m.id`,
    )
    .pluck()
    .all(query) as string[];

/** Throws "database disk image is malformed" when the index and its content rows disagree. */
const integrity = (db: Database): void => {
  db.prepare("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)").run();
};

interface TreeRow {
  id: string;
  parent_id: string | null;
  chosen: number;
  shown: number;
}

const tree = (db: Database, conversationId: string): TreeRow[] =>
  db
    .prepare("SELECT id, parent_id, chosen, shown FROM messages WHERE conversation_id = ? ORDER BY seq")
    .all(conversationId) as TreeRow[];

describe("migration 0011 (messages form a tree of versions)", () => {
  it("makes the transcript a chain and a replaced answer an earlier version of its replacement", () => {
    const db = atV10();
    const transcriptBefore = db
      .prepare("SELECT id FROM messages WHERE conversation_id = 'c1' AND replaced_by IS NULL ORDER BY seq")
      .pluck()
      .all();
    expect(migrate(db, upTo11)).toEqual([11]);
    expect(tree(db, "c1")).toEqual([
      { id: "q1", parent_id: null, chosen: 1, shown: 1 },
      { id: "old1", parent_id: "q1", chosen: 0, shown: 0 },
      { id: "old2", parent_id: "q1", chosen: 0, shown: 0 },
      { id: "a1", parent_id: "q1", chosen: 1, shown: 1 },
      { id: "q2", parent_id: "a1", chosen: 1, shown: 1 },
      { id: "a2", parent_id: "q2", chosen: 1, shown: 1 },
    ]);
    expect(tree(db, "c2")).toEqual([
      { id: "x1", parent_id: null, chosen: 1, shown: 1 },
      { id: "x2", parent_id: "x1", chosen: 1, shown: 1 },
    ]);
    // The store (at the latest schema) shows the old transcript unchanged, and the answer's
    // versions, oldest first.
    migrate(db);
    const messages = new MessageStore(db);
    const list = messages.list("c1");
    expect(list.map((m) => m.id)).toEqual(transcriptBefore);
    expect(list.find((m) => m.id === "a1")?.versions).toEqual(["old1", "old2", "a1"]);
    expect(list.find((m) => m.id === "q1")?.versions).toBeUndefined();
    expect(db.pragma("foreign_key_check")).toEqual([]);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  });

  it("keeps the search index equal to the shown branch, through a version switch", () => {
    const db = atV10();
    expect(matches(db, "stripes")).toEqual(["a1", "q1", "x1"]);
    migrate(db, upTo11);
    expect(matches(db, "stripes")).toEqual(["a1", "q1", "x1"]);
    expect(matches(db, "zebras")).toEqual([]);
    integrity(db);
    migrate(db);
    const messages = new MessageStore(db);
    messages.showVersion("old1");
    // The earlier answer is shown and searchable; the later one and what followed it are not.
    expect(messages.list("c1").map((m) => m.id)).toEqual(["q1", "old1"]);
    expect(matches(db, "zebras")).toEqual(["old1"]);
    expect(matches(db, "confuse")).toEqual([]);
    expect(matches(db, "horses")).toEqual([]);
    integrity(db);
    messages.showVersion("a1");
    expect(messages.list("c1").map((m) => m.id)).toEqual(["q1", "a1", "q2", "a2"]);
    expect(matches(db, "horses")).toEqual(["a2", "q2"]);
    expect(matches(db, "zebras")).toEqual([]);
    integrity(db);
    // Deleting a conversation takes its whole tree, hidden versions too, and its index rows.
    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    expect(db.prepare("SELECT count(*) FROM messages WHERE conversation_id = 'c1'").pluck().get()).toBe(0);
    expect(matches(db, "stripes")).toEqual(["x1"]);
    integrity(db);
  });
});
