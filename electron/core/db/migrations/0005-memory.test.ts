import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate } from "../migrate";
import { migrations } from "./index";
import { migrate0005 } from "./0005-memory";

/** A database at schema 4 with a conversation, then migration 0005. */
function v5(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version < 5),
  );
  db.prepare(
    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Café plans', 1, 1)",
  ).run();
  db.prepare(
    "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m0', 'c1', 'user', 'existing words before', 'complete', 1, 1)",
  ).run();
  migrate0005(db);
  return db;
}

const addMessage = (db: Database, id: string, content: string, seq: number): void => {
  db.prepare(
    "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES (?, 'c1', 'user', ?, 'complete', 1, ?)",
  ).run(id, content, seq);
};
const matches = (db: Database, table: string, query: string): number[] =>
  db
    .prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`)
    .pluck()
    .all(query) as number[];
const plan = (db: Database, sql: string, ...params: unknown[]): string =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
    .map((r) => r.detail)
    .join(" | ");
const integrity = (db: Database, table: string): void => {
  // Throws "database disk image is malformed" when the index and its content disagree.
  db.prepare(`INSERT INTO ${table}(${table}) VALUES ('integrity-check')`).run();
};

describe("migration 0005 (full-text search, memories)", () => {
  it("indexes existing messages and titles, and keeps the index in sync by triggers", () => {
    const db = v5();
    expect(matches(db, "messages_fts", "existing")).toHaveLength(1);
    // remove_diacritics: "cafe" finds "Café".
    expect(matches(db, "conversations_fts", "cafe")).toHaveLength(1);
    addMessage(db, "m1", "the quick brown fox", 2);
    expect(matches(db, "messages_fts", "quick")).toHaveLength(1);
    db.prepare("UPDATE messages SET content = 'a slow turtle' WHERE id = 'm1'").run();
    expect(matches(db, "messages_fts", "quick")).toHaveLength(0);
    expect(matches(db, "messages_fts", "turtle")).toHaveLength(1);
    db.prepare("UPDATE conversations SET title = 'Tea' WHERE id = 'c1'").run();
    expect(matches(db, "conversations_fts", "cafe")).toHaveLength(0);
    integrity(db, "messages_fts");
    integrity(db, "conversations_fts");
    // Deleting the conversation cascades to its messages, and the cascade fires the triggers.
    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    expect(matches(db, "messages_fts", "turtle OR existing")).toHaveLength(0);
    expect(matches(db, "conversations_fts", "tea")).toHaveLength(0);
    integrity(db, "messages_fts");
    db.close();
  });

  it("keeps memories valid, unlinks them from deleted conversations, cascades usage links", () => {
    const db = v5();
    const insert = db.prepare(
      `INSERT INTO memories (id, text, source, status, conversation_id, message_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 1, 1)`,
    );
    insert.run("k1", "likes green tea", "user", "active", "c1", "m0");
    expect(() => insert.run("k2", "x", "robot", "active", null, null)).toThrow(/CHECK/);
    expect(() => insert.run("k3", "x", "user", "maybe", null, null)).toThrow(/CHECK/);
    expect(() => insert.run("k4", "", "user", "active", null, null)).toThrow(/CHECK/);
    expect(() => insert.run("k5", "x", "user", "active", "nope", null)).toThrow(/FOREIGN KEY/);
    expect(matches(db, "memories_fts", "green")).toHaveLength(1);

    db.prepare("INSERT INTO message_memories VALUES ('m0', 'k1')").run();
    expect(() => db.prepare("INSERT INTO message_memories VALUES ('m0', 'k1')").run()).toThrow(
      /UNIQUE|PRIMARY/,
    );
    db.prepare("INSERT INTO memory_vectors VALUES ('k1', 'model', 'hash', x'00000000')").run();

    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    expect(db.prepare("SELECT conversation_id, message_id FROM memories WHERE id = 'k1'").get()).toEqual({
      conversation_id: null,
      message_id: null,
    });
    expect(db.prepare("SELECT COUNT(*) FROM message_memories").pluck().get()).toBe(0);
    db.prepare("DELETE FROM memories WHERE id = 'k1'").run();
    expect(db.prepare("SELECT COUNT(*) FROM memory_vectors").pluck().get()).toBe(0);
    expect(matches(db, "memories_fts", "green")).toHaveLength(0);
    db.close();
  });

  it("adds messages.context_json", () => {
    const db = v5();
    expect(db.prepare("SELECT context_json FROM messages WHERE id = 'm0'").pluck().get()).toBeNull();
    db.close();
  });

  it("answers the hot queries from indexes (EXPLAIN QUERY PLAN)", () => {
    const db = v5();
    // A transcript: messages of one conversation in order.
    expect(
      plan(db, "SELECT * FROM messages WHERE conversation_id = ? AND replaced_by IS NULL ORDER BY seq", "c1"),
    ).toMatch(/SEARCH messages USING INDEX messages_conversation_seq \(conversation_id=\?\)/);
    // The sidebar: conversations by activity, without a sort step.
    const sidebar = plan(db, "SELECT * FROM conversations ORDER BY updated_at DESC");
    expect(sidebar).toMatch(/SCAN conversations USING INDEX conversations_updated_at/);
    expect(sidebar).not.toMatch(/TEMP B-TREE/);
    // Full-text search: the FTS5 index, then messages by rowid.
    const search = plan(
      db,
      `SELECT m.id FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
       WHERE messages_fts MATCH ? ORDER BY bm25(messages_fts)`,
      '"tea"',
    );
    expect(search).toMatch(/SCAN messages_fts VIRTUAL TABLE INDEX/);
    expect(search).toMatch(/SEARCH m USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    // Memories: the panel (by status), by conversation (delete with it), usage links by memory.
    expect(plan(db, "SELECT * FROM memories WHERE status = 'active' ORDER BY updated_at DESC")).toMatch(
      /SEARCH memories USING INDEX memories_status_updated \(status=\?\)/,
    );
    expect(plan(db, "SELECT id FROM memories WHERE conversation_id = ?", "c1")).toMatch(
      /SEARCH memories USING (COVERING )?INDEX memories_conversation \(conversation_id=\?\)/,
    );
    expect(plan(db, "SELECT * FROM message_memories WHERE memory_id = ?", "k")).toMatch(
      /SEARCH message_memories USING (COVERING )?INDEX message_memories_memory \(memory_id=\?\)/,
    );
    expect(plan(db, "SELECT * FROM message_memories WHERE message_id = ?", "m")).toMatch(
      /SEARCH message_memories USING PRIMARY KEY \(message_id=\?\)/,
    );
    expect(
      plan(
        db,
        `SELECT m.id FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
         WHERE memories_fts MATCH ? AND m.status = 'active' ORDER BY bm25(memories_fts)`,
        '"tea"',
      ),
    ).toMatch(/SCAN memories_fts VIRTUAL TABLE INDEX.*SEARCH m USING INTEGER PRIMARY KEY/);
    db.close();
  });
});
