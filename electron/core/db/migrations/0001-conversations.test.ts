import BetterSqlite3, { type Database } from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testDir } from "../../../../testing/core/temp-dir";
import { migrate0001 } from "./0001-conversations";

function check(db: Database): void {
  db.pragma("foreign_keys = ON");
  migrate0001(db);
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all();
  expect(tables).toEqual(["conversations", "messages"]);
  const indexes = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all();
  expect(indexes).toEqual(expect.arrayContaining(["conversations_updated_at", "messages_conversation_seq"]));

  db.prepare("INSERT INTO conversations VALUES ('c1', 'T', 1, 1)").run();
  const insert = db.prepare(
    "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES (?, ?, ?, '', ?, 1, ?)",
  );
  insert.run("m1", "c1", "user", "complete", 1);
  // Unknown conversation, role or status are refused.
  expect(() => insert.run("m2", "nope", "user", "complete", 2)).toThrow(/FOREIGN KEY/);
  expect(() => insert.run("m3", "c1", "robot", "complete", 2)).toThrow(/CHECK/);
  expect(() => insert.run("m4", "c1", "user", "weird", 2)).toThrow(/CHECK/);
  // Two messages cannot share a place in the order.
  expect(() => insert.run("m5", "c1", "user", "complete", 1)).toThrow(/UNIQUE/);
  // Deleting a conversation deletes its messages.
  db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
  expect(db.prepare("SELECT COUNT(*) FROM messages").pluck().get()).toBe(0);
}

describe("migration 0001 (conversations, messages)", () => {
  it("creates the schema in memory", () => {
    const db = new BetterSqlite3(":memory:");
    check(db);
    db.close();
  });

  it("creates the schema in a file", () => {
    const db = new BetterSqlite3(join(testDir(), "t.db"));
    check(db);
    db.close();
  });
});
