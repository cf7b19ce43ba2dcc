import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate } from "../migrate";
import { migrations } from "./index";

/** A database just before v12 with one conversation, a question and an answer with its turn. */
function beforeV12(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(
    db,
    migrations.filter((m) => m.version < 12),
  );
  db.exec(`
    INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Old chat', 1, 1);
    INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES
      ('q', 'c1', 'user', 'hi', 'complete', 1, 1),
      ('a', 'c1', 'assistant', 'hello', 'complete', 2, 2);
    INSERT INTO turns (message_id, harness_version, adapters_json, router_json, sampling_json, kv_policy, created_at)
      VALUES ('a', 'h1', '[]', '{}', '{"temperature":0.7,"maxTokens":1024}', 'reevaluate', 2);
  `);
  return db;
}

describe("migration 0012 (conversation settings and sampling presets)", () => {
  it("keeps old turns as they were, with no system prompt recorded (the app's default)", () => {
    const db = beforeV12();
    expect(migrate(db)[0]).toBe(12); // later migrations may follow
    expect(db.prepare("SELECT sampling_json, system_prompt FROM turns WHERE message_id = 'a'").get()).toEqual(
      {
        sampling_json: '{"temperature":0.7,"maxTokens":1024}',
        system_prompt: null,
      },
    );
    // No conversation has settings until it is given some.
    expect(db.prepare("SELECT count(*) FROM conversation_settings").pluck().get()).toBe(0);
  });

  it("settings belong to one existing conversation and go when it is deleted", () => {
    const db = beforeV12();
    migrate(db);
    const insert = db.prepare(
      "INSERT INTO conversation_settings (conversation_id, system_prompt, sampling_json, updated_at) VALUES (?, ?, ?, 3)",
    );
    insert.run("c1", "Be brief.", '{"seed":7}');
    expect(() => insert.run("c1", null, "{}")).toThrow(/UNIQUE|PRIMARY KEY/);
    expect(() => insert.run("missing", null, "{}")).toThrow(/FOREIGN KEY/);
    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    expect(db.prepare("SELECT count(*) FROM conversation_settings").pluck().get()).toBe(0);
  });

  it("preset names are unique regardless of case", () => {
    const db = beforeV12();
    migrate(db);
    const insert = db.prepare(
      "INSERT INTO sampling_presets (id, name, system_prompt, sampling_json, created_at, updated_at) VALUES (?, ?, NULL, '{}', 1, 1)",
    );
    insert.run("p1", "Precise");
    expect(() => insert.run("p2", "precise")).toThrow(/UNIQUE/);
    insert.run("p3", "Creative");
    expect(db.prepare("SELECT name FROM sampling_presets ORDER BY name").pluck().all()).toEqual([
      "Creative",
      "Precise",
    ]);
  });
});
