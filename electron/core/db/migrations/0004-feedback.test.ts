import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate, schemaVersion } from "../migrate";
import { migrations } from "./index";
import { migrate0004 } from "./0004-feedback";

/** Schema v3 with data, as an existing install has it, then migration 0004. */
function v4(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version <= 3),
  );
  expect(schemaVersion(db)).toBe(3);
  db.prepare(
    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Old', 1, 1)",
  ).run();
  db.prepare(
    "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m1', 'c1', 'assistant', 'hi', 'complete', 1, 1)",
  ).run();
  migrate0004(db);
  return db;
}

const insertEvent = (db: Database, id: string, messageId: string | null, kind = "rating"): void => {
  db.prepare(
    "INSERT INTO feedback_events (id, kind, message_id, conversation_id, created_at, payload_json, versions_json) VALUES (?, ?, ?, 'c1', 1, '{}', '{}')",
  ).run(id, kind, messageId);
};

describe("migration 0004 (feedback)", () => {
  it("adds the feedback tables on top of schema v3 and keeps the existing data", () => {
    const db = v4();
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'feedback_%' ORDER BY name")
      .pluck()
      .all();
    expect(tables).toEqual(["feedback_events", "feedback_outbox", "feedback_rejected"]);
    expect(db.prepare("SELECT content FROM messages WHERE id = 'm1'").pluck().get()).toBe("hi");
    db.close();
  });

  it("refuses unknown kinds and messages, and duplicate keys", () => {
    const db = v4();
    insertEvent(db, "e1", "m1");
    expect(() => insertEvent(db, "e2", "m1", "telepathy")).toThrow(/CHECK/);
    expect(() => insertEvent(db, "e3", "nope")).toThrow(/FOREIGN KEY/);
    const outbox = db.prepare(
      "INSERT INTO feedback_outbox (key, event_id, item_json, created_at) VALUES (?, ?, '{}', 1)",
    );
    outbox.run("k1", "e1");
    expect(() => outbox.run("k1", "e1")).toThrow(/UNIQUE|PRIMARY/);
    expect(() => outbox.run("k2", "missing")).toThrow(/FOREIGN KEY/);
    expect(db.prepare("SELECT attempts, last_error, next_attempt_at FROM feedback_outbox").get()).toEqual({
      attempts: 0,
      last_error: null,
      next_attempt_at: null,
    });
    db.close();
  });

  it("deleting a conversation deletes its events and their queued and rejected items", () => {
    const db = v4();
    insertEvent(db, "e1", "m1");
    db.prepare(
      "INSERT INTO feedback_outbox (key, event_id, item_json, created_at) VALUES ('k1', 'e1', '{}', 1)",
    ).run();
    db.prepare(
      "INSERT INTO feedback_rejected (key, event_id, item_json, reason, rejected_at) VALUES ('k0', 'e1', '{}', 'no', 1)",
    ).run();
    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    for (const t of ["feedback_events", "feedback_outbox", "feedback_rejected"]) {
      expect(db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get()).toBe(0);
    }
    db.close();
  });

  it("runs in the migration transaction after 0001–0003 as version 4", () => {
    const db = new BetterSqlite3(":memory:");
    const list = [
      ...migrations.filter((m) => m.version < 4),
      { version: 4, name: "feedback", up: migrate0004 },
    ];
    expect(migrate(db, list)).toEqual([1, 2, 3, 4]);
    expect(schemaVersion(db)).toBe(4);
    expect(migrate(db, list)).toEqual([]);
    db.close();
  });
});
