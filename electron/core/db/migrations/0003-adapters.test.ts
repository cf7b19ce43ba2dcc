import BetterSqlite3, { type Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate0001 } from "./0001-conversations";
import { migrate0002 } from "./0002-settings";
import { migrate0003 } from "./0003-adapters";

function v2WithData(): Database {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  migrate0001(db);
  migrate0002(db);
  // Data written by schema v2 must survive the migration.
  db.prepare("INSERT INTO conversations VALUES ('c1', 'Old chat', 1, 1)").run();
  db.prepare(
    "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m1', 'c1', 'assistant', 'hi', 'complete', 1, 1)",
  ).run();
  return db;
}

describe("migration 0003 (adapters, turns, router store)", () => {
  it("adds the columns with their defaults to existing rows", () => {
    const db = v2WithData();
    migrate0003(db);
    expect(db.prepare("SELECT adapters_json FROM conversations WHERE id = 'c1'").pluck().get()).toBe(
      '"auto"',
    );
    expect(db.prepare("SELECT replaced_by FROM messages WHERE id = 'm1'").pluck().get()).toBeNull();
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all();
    expect(tables).toEqual([
      "adapters",
      "conversations",
      "messages",
      "router_learned",
      "router_vectors",
      "settings",
      "turns",
    ]);
    db.close();
  });

  it("keeps adapters unique by id and sha256 and scales within 0..2", () => {
    const db = v2WithData();
    migrate0003(db);
    const insert = db.prepare(
      `INSERT INTO adapters (id, name, domain, version, sha256, size_bytes, file_path, manifest_json, scale, installed_at)
       VALUES (?, 'N', 'd', '1.0.0', ?, 10, '/x', '{}', ?, 1)`,
    );
    insert.run("a", "sha-a", 1);
    expect(() => insert.run("a", "sha-b", 1)).toThrow(/UNIQUE|PRIMARY/);
    expect(() => insert.run("b", "sha-a", 1)).toThrow(/UNIQUE/);
    expect(() => insert.run("c", "sha-c", 2.5)).toThrow(/CHECK/);
    expect(db.prepare("SELECT enabled, usage_count FROM adapters WHERE id = 'a'").get()).toEqual({
      enabled: 1,
      usage_count: 0,
    });
    db.close();
  });

  it("ties a turn record to its message: unknown messages are refused, deletes cascade", () => {
    const db = v2WithData();
    migrate0003(db);
    const insert = db.prepare(
      `INSERT INTO turns (message_id, model_sha256, harness_version, adapters_json, router_json, sampling_json, kv_policy, created_at)
       VALUES (?, 'sha', '0.1.0+abc', '[]', '{}', '{}', 'reevaluate', 1)`,
    );
    insert.run("m1");
    expect(() => insert.run("nope")).toThrow(/FOREIGN KEY/);
    expect(() => insert.run("m1")).toThrow(/UNIQUE|PRIMARY/);
    db.prepare("DELETE FROM conversations WHERE id = 'c1'").run();
    expect(db.prepare("SELECT COUNT(*) FROM turns").pluck().get()).toBe(0);
    db.close();
  });

  it("creates the router tables: vectors keyed by model and text, learned texts unique", () => {
    const db = v2WithData();
    migrate0003(db);
    const vec = db.prepare("INSERT INTO router_vectors VALUES (?, ?, ?, 1)");
    vec.run("m", "h", Buffer.alloc(8));
    vec.run("m2", "h", Buffer.alloc(8));
    expect(() => vec.run("m", "h", Buffer.alloc(8))).toThrow(/UNIQUE|PRIMARY/);
    const learned = db.prepare(
      "INSERT INTO router_learned (text_hash, text, adapter_id, created_at) VALUES (?, 't', 'ui', 1.5)",
    );
    learned.run("h1");
    expect(() => learned.run("h1")).toThrow(/UNIQUE/);
    const indexes = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'router_learned' AND name NOT LIKE 'sqlite_%'",
      )
      .pluck()
      .all();
    expect(indexes).toEqual(["router_learned_adapter"]);
    db.close();
  });
});
