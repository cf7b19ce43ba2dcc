import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate } from "../migrate";
import { migrations } from "./index";

/** A database at schema 8 with an answer, a rating event, its queued and its rejected item. */
function atV8(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version < 9),
  );
  db.exec(`
    INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Tools', 1, 1);
    INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m1', 'c1', 'assistant', 'done', 'complete', 1, 1);
    INSERT INTO feedback_events (id, kind, message_id, conversation_id, created_at, payload_json, versions_json) VALUES ('e1', 'rating', 'm1', 'c1', 5, '{}', '{}');
    INSERT INTO feedback_outbox (key, event_id, item_json, created_at, attempts) VALUES ('k-queued', 'e1', '{"a":1}', 5, 2);
    INSERT INTO feedback_rejected (key, event_id, item_json, reason, rejected_at) VALUES ('k-refused', 'e1', '{"b":2}', 'bad', 6);
  `);
  return db;
}

describe("migration 0009 (feedback kinds for tool calls)", () => {
  it("keeps every event and item, accepts the new kinds, and deletes still cascade", () => {
    const db = atV8();
    expect(() =>
      db.prepare("INSERT INTO feedback_events VALUES ('e0', 'trajectory', 'm1', 'c1', 1, '{}', '{}')").run(),
    ).toThrow(/CHECK/);
    expect(migrate(db)).toContain(9);
    expect(db.prepare("SELECT id, kind FROM feedback_events").all()).toEqual([{ id: "e1", kind: "rating" }]);
    expect(db.prepare("SELECT key, event_id, attempts FROM feedback_outbox").all()).toEqual([
      { key: "k-queued", event_id: "e1", attempts: 2 },
    ]);
    expect(db.prepare("SELECT key, reason FROM feedback_rejected").all()).toEqual([
      { key: "k-refused", reason: "bad" },
    ]);
    for (const [id, kind] of [
      ["e2", "trajectory"],
      ["e3", "follow_up"],
    ])
      db.prepare("INSERT INTO feedback_events VALUES (?, ?, 'm1', 'c1', 7, '{}', '{}')").run(id, kind);
    expect(() =>
      db.prepare("INSERT INTO feedback_events VALUES ('e4', 'bogus', 'm1', 'c1', 1, '{}', '{}')").run(),
    ).toThrow(/CHECK/);
    expect(db.pragma("foreign_key_check")).toEqual([]);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE '%_v8'").all()).toEqual([]);
    // Deleting the conversation still takes its events and their items along.
    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    for (const table of ["feedback_events", "feedback_outbox", "feedback_rejected"])
      expect(db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get()).toBe(0);
  });
});
