import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate } from "../migrate";
import { migrations } from "./index";

/** A database at schema 6 with a conversation and an answer, then the rest (0007). */
function upgraded(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version < 7),
  );
  db.prepare(
    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Plans', 1, 1)",
  ).run();
  db.prepare(
    "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m1', 'c1', 'assistant', 'old text answer', 'complete', 1, 1)",
  ).run();
  expect(
    migrate(
      db,
      migrations.filter((m) => m.version <= 7),
    ),
  ).toEqual([7]);
  return db;
}

describe("migration 0007 (genui)", () => {
  it("leaves existing messages as text answers and adds the GenUI columns", () => {
    const db = upgraded();
    expect(
      db.prepare("SELECT format, ui_json, interaction_json FROM messages WHERE id = 'm1'").get(),
    ).toEqual({
      format: null,
      ui_json: null,
      interaction_json: null,
    });
    expect(() => db.prepare("UPDATE messages SET format = 'html' WHERE id = 'm1'").run()).toThrow(/CHECK/);
    db.prepare("UPDATE messages SET format = 'ui' WHERE id = 'm1'").run();
  });

  it("deletes a component's events with its answer", () => {
    const db = upgraded();
    db.prepare(
      "INSERT INTO genui_events (id, message_id, component_id, action, values_json, outcome, created_at) VALUES ('e1', 'm1', 'form', 'submit', '{}', 'completed', 2)",
    ).run();
    expect(() =>
      db
        .prepare(
          "INSERT INTO genui_events (id, message_id, component_id, action, values_json, outcome, created_at) VALUES ('e2', 'm1', 'form', 'x', '{}', 'great', 2)",
        )
        .run(),
    ).toThrow(/CHECK/);
    db.prepare("DELETE FROM messages WHERE id = 'm1'").run();
    expect(db.prepare("SELECT COUNT(*) FROM genui_events").pluck().get()).toBe(0);
  });
});
