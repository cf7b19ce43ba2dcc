import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate } from "../migrate";
import { migrations } from "./index";

/** A database at schema 9: one conversation, a question, a replaced answer and its replacement. */
function atV9(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version < 10),
  );
  db.exec(`
    INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Zebra facts', 1, 1);
    INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES
      ('q', 'c1', 'user', 'tell me about stripes', 'complete', 1, 1),
      ('old', 'c1', 'assistant', 'zebras have stripes', 'complete', 2, 2),
      ('new', 'c1', 'assistant', 'stripes confuse flies', 'complete', 3, 3);
    UPDATE messages SET replaced_by = 'new' WHERE id = 'old';
  `);
  return db;
}

// Later migrations change what leaves the index (0011: the shown branch of the message tree).
const upTo10 = migrations.filter((m) => m.version <= 10);

const ids = (db: Database, query: string): string[] =>
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

describe("migration 0010 (the messages index holds the transcript only)", () => {
  it("drops replaced answers from the index, keeps everything else findable", () => {
    const db = atV9();
    expect(ids(db, "stripes")).toEqual(["new", "old", "q"]); // v9 indexes every message
    expect(migrate(db, upTo10)).toEqual([10]);
    expect(ids(db, "stripes")).toEqual(["new", "q"]);
    expect(ids(db, "zebras")).toEqual([]);
    expect(db.prepare("SELECT count(*) FROM messages").pluck().get()).toBe(3); // nothing deleted
    // Titles are untouched.
    expect(
      db
        .prepare("SELECT count(*) FROM conversations_fts WHERE conversations_fts MATCH 'zebra'")
        .pluck()
        .get(),
    ).toBe(1);
    integrity(db);
  });

  it("keeps the index equal to the transcript through inserts, edits, regenerations and deletes", () => {
    const db = atV9();
    migrate(db, upTo10);
    const run = (sql: string): void => void db.prepare(sql).run();
    run(
      "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('a', 'c1', 'assistant', 'partial', 'streaming', 4, 4)",
    );
    run("UPDATE messages SET content = 'partial answer grows' WHERE id = 'a'");
    run("UPDATE messages SET status = 'complete' WHERE id = 'a'");
    expect(ids(db, "grows")).toEqual(["a"]);
    expect(ids(db, "partial")).toEqual(["a"]);
    integrity(db);
    // A regeneration replaces it: it leaves the index; editing a replaced message keeps it out.
    run("UPDATE messages SET replaced_by = 'new' WHERE id = 'a'");
    expect(ids(db, "grows")).toEqual([]);
    run("UPDATE messages SET content = 'edited while replaced' WHERE id = 'a'");
    expect(ids(db, "edited")).toEqual([]);
    integrity(db);
    // Back in the transcript (replaced_by cleared): indexed again, with its current text.
    run("UPDATE messages SET replaced_by = NULL WHERE id = 'a'");
    expect(ids(db, "edited")).toEqual(["a"]);
    expect(ids(db, "grows")).toEqual([]);
    integrity(db);
    // Deleting a replaced message (never indexed) and a live one leaves a consistent index.
    run("DELETE FROM messages WHERE id = 'old'");
    run("DELETE FROM messages WHERE id = 'q'");
    expect(ids(db, "stripes")).toEqual(["new"]);
    integrity(db);
    // The cascade from a conversation delete goes through the same triggers.
    run("DELETE FROM conversations WHERE id = 'c1'");
    expect(ids(db, "stripes OR edited")).toEqual([]);
    integrity(db);
  });

  it("titles stay indexed and in sync (the index made again under 0005's triggers)", () => {
    const db = atV9();
    migrate(db, upTo10);
    const titles = (q: string): number =>
      db
        .prepare("SELECT count(*) FROM conversations_fts WHERE conversations_fts MATCH ?")
        .pluck()
        .get(q) as number;
    expect(titles("zeb*")).toBe(1);
    db.prepare("UPDATE conversations SET title = 'Horse facts' WHERE id = 'c1'").run();
    expect(titles("zebra")).toBe(0);
    expect(titles("ho*")).toBe(1);
    db.prepare("INSERT INTO conversations_fts(conversations_fts, rank) VALUES ('integrity-check', 1)").run();
    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    expect(titles("horse")).toBe(0);
  });

  it("a rebuild (needed after a VACUUM) indexes the same rows as the triggers", () => {
    const db = atV9();
    migrate(db, upTo10);
    db.exec("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')");
    expect(ids(db, "stripes")).toEqual(["new", "q"]);
    integrity(db);
  });
});
