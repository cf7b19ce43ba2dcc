import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate } from "../migrate";
import { migrations } from "./index";

/** A database at schema 7 with a conversation and an answer, then 0008. */
function upgraded(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version < 8),
  );
  db.prepare(
    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Timers', 1, 1)",
  ).run();
  db.prepare(
    "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m1', 'c1', 'assistant', 'done', 'complete', 1, 1)",
  ).run();
  expect(
    migrate(
      db,
      migrations.filter((m) => m.version <= 8),
    ),
  ).toEqual([8]);
  return db;
}

const insertStep = (db: Database, id: string, idx: number, state = "done"): void => {
  db.prepare(
    `INSERT INTO tool_steps (id, message_id, idx, server, tool, arguments_json, state, decision, result, truncated, error, duration_ms, created_at)
     VALUES (?, 'm1', ?, 'builtin', 'remember', '{}', ?, 'once', 'ok', 0, NULL, 3.5, 2)`,
  ).run(id, idx, state);
};

describe("migration 0008 (tool steps)", () => {
  it("stores one step per index of an answer, with checked states", () => {
    const db = upgraded();
    insertStep(db, "s1", 0);
    insertStep(db, "s2", 1, "denied");
    expect(() => insertStep(db, "s3", 1)).toThrow(/UNIQUE/);
    expect(() => insertStep(db, "s4", 2, "maybe")).toThrow(/CHECK/);
    expect(db.prepare("SELECT id FROM tool_steps ORDER BY idx").pluck().all()).toEqual(["s1", "s2"]);
  });

  it("deletes steps with their answer, and steps and grants with their conversation", () => {
    const db = upgraded();
    insertStep(db, "s1", 0);
    db.prepare("DELETE FROM messages WHERE id = 'm1'").run();
    expect(db.prepare("SELECT COUNT(*) FROM tool_steps").pluck().get()).toBe(0);

    db.prepare(
      "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m1', 'c1', 'assistant', 'again', 'complete', 1, 1)",
    ).run();
    insertStep(db, "s1", 0);
    db.prepare(
      "INSERT INTO tool_grants (conversation_id, server, tool, created_at) VALUES ('c1', 'builtin', 'remember', 1)",
    ).run();
    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    expect(db.prepare("SELECT COUNT(*) FROM tool_steps").pluck().get()).toBe(0);
    expect(db.prepare("SELECT COUNT(*) FROM tool_grants").pluck().get()).toBe(0);
  });
});
