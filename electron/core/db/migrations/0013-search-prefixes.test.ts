import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate } from "../migrate";
import { migrations } from "./index";

/**
 * A database at schema 12 whose rows were written at schema 10 (a replaced answer, so that one
 * message is outside the transcript whatever the later schema calls it).
 */
function atV12(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version <= 10),
  );
  db.exec(`
    INSERT INTO conversations (id, title, created_at, updated_at) VALUES
      ('c1', 'Teapots and tendons', 1, 1), ('c2', 'Tenders', 1, 1);
    INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES
      ('q', 'c1', 'user', 'tell me about teapots', 'complete', 1, 1),
      ('old', 'c1', 'assistant', 'tendons hold a teapotful', 'complete', 2, 2),
      ('new', 'c1', 'assistant', 'a teapot is for tea, tenderly', 'complete', 3, 3),
      ('x', 'c2', 'user', 'Café tendency: tendon, TENDER', 'complete', 1, 1);
    UPDATE messages SET replaced_by = 'new' WHERE id = 'old';
  `);
  migrate(
    db,
    migrations.filter((m) => m.version <= 12),
  );
  return db;
}

const messageIds = (db: Database, query: string): string[] =>
  db
    .prepare(
      `SELECT m.id FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
       WHERE messages_fts MATCH ? ORDER BY m.id`,
    )
    .pluck()
    .all(query) as string[];

const titleIds = (db: Database, query: string): string[] =>
  db
    .prepare(
      `SELECT c.id FROM conversations_fts JOIN conversations c ON c.rowid = conversations_fts.rowid
       WHERE conversations_fts MATCH ? ORDER BY c.id`,
    )
    .pluck()
    .all(query) as string[];

/** Throws "database disk image is malformed" when an index and its content rows disagree. */
const integrity = (db: Database): void => {
  db.prepare("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)").run();
  db.prepare("INSERT INTO conversations_fts(conversations_fts, rank) VALUES ('integrity-check', 1)").run();
};

// Prefixes of every length the new indexes serve (1-6), longer ones, words and a phrase.
const QUERIES = [
  "t*",
  "te*",
  "ten*",
  "tend*",
  "tendo*",
  "tender*",
  "tenderl*",
  "teapot*",
  "teapot",
  "cafe*",
  '"tell me"',
];

describe("migration 0013 (prefix indexes for 1 to 6 characters)", () => {
  it("finds exactly what it found before, in messages and titles, and the indexes are sound", () => {
    const db = atV12();
    const before = QUERIES.map((q) => [messageIds(db, q), titleIds(db, q)]);
    expect(migrate(db)).toContain(13);
    expect(QUERIES.map((q) => [messageIds(db, q), titleIds(db, q)])).toEqual(before);
    // The replaced answer stays out; the prefix reads hit the new 4-6 letter indexes.
    expect(messageIds(db, "tendo*")).toEqual(["x"]);
    expect(messageIds(db, "tende*")).toEqual(["new", "x"]);
    expect(titleIds(db, "tendo*")).toEqual(["c1"]);
    const sql = (name: string): string =>
      db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").pluck().get(name) as string;
    expect(sql("messages_fts")).toContain("prefix='1 2 3 4 5 6'");
    expect(sql("conversations_fts")).toContain("prefix='1 2 3 4 5 6'");
    integrity(db);
  });

  it("the earlier triggers keep both indexes in sync after it", () => {
    const db = atV12();
    migrate(db);
    const run = (sql: string): void => void db.prepare(sql).run();
    run(
      "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('a', 'c2', 'assistant', 'partial', 'streaming', 2, 2)",
    );
    run("UPDATE messages SET content = 'partial tendril' WHERE id = 'a'");
    expect(messageIds(db, "tendri*")).toEqual(["a"]);
    expect(messageIds(db, "partia*")).toEqual(["a"]);
    integrity(db);
    run("DELETE FROM messages WHERE id = 'x'");
    expect(messageIds(db, "tendo*")).toEqual([]);
    run("UPDATE conversations SET title = 'Horseshoes' WHERE id = 'c2'");
    expect(titleIds(db, "horses*")).toEqual(["c2"]);
    expect(titleIds(db, "tender*")).toEqual([]);
    integrity(db);
    run("DELETE FROM conversations WHERE id = 'c1'");
    expect(messageIds(db, "teapot*")).toEqual([]);
    expect(titleIds(db, "teapot*")).toEqual([]);
    integrity(db);
    // A rebuild (needed after a VACUUM) reads the same content the triggers index.
    run("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')");
    expect(messageIds(db, "tendri*")).toEqual(["a"]);
    integrity(db);
  });
});
