import BetterSqlite3 from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrations } from "./index";

function atVersion(version: number) {
  const db = new BetterSqlite3(":memory:");
  db.pragma("foreign_keys = ON");
  for (const m of migrations.filter((m) => m.version <= version)) m.up(db);
  return db;
}

describe("migration 0006 (adapter versions, releases)", () => {
  it("makes installed adapters their first live version and stamps new turns with the newest release", () => {
    const db = atVersion(5);
    db.prepare(
      `INSERT INTO adapters (id, name, domain, version, sha256, size_bytes, file_path, manifest_json, scale, installed_at)
       VALUES ('coding', 'Coding', 'coding', '1.0.0', 'sha-c', 10, '/x/coding.gguf', '{"defaultScale":1,"lineage":{"parent":null,"trainedFrom":"fixture"}}', 1, 5)`,
    ).run();
    db.prepare(
      "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 't', 1, 1)",
    ).run();
    db.prepare(
      "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m1', 'c1', 'assistant', 'a', 'complete', 1, 1)",
    ).run();
    db.prepare(
      "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m2', 'c1', 'assistant', 'b', 'complete', 2, 2)",
    ).run();
    const turn = db.prepare(
      "INSERT INTO turns (message_id, harness_version, adapters_json, router_json, sampling_json, kv_policy, created_at) VALUES (?, 'h', '[]', '{}', '{}', 'reevaluate', 1)",
    );
    turn.run("m1");
    migrations.find((m) => m.version === 6)!.up(db);

    const v = db.prepare("SELECT * FROM adapter_versions").get() as Record<string, unknown>;
    expect(v).toMatchObject({
      adapter_id: "coding",
      version: "1.0.0",
      status: "live",
      source: "install",
      file_path: "/x/coding.gguf",
    });
    expect(JSON.parse(v.manifest_json as string)).toMatchObject({
      name: "Coding",
      domain: "coding",
      defaultScale: 1,
    });
    expect(JSON.parse(v.lineage_json as string)).toEqual({ parent: null, trainedFrom: "fixture" });
    expect(db.prepare("SELECT release_id FROM turns WHERE message_id = 'm1'").pluck().get()).toBeNull();

    db.prepare(
      "INSERT INTO releases (harness_version, contract_version, adapters_json, reason, created_at) VALUES ('h', 'c@1', '[]', 'startup', 1)",
    ).run();
    turn.run("m2");
    expect(db.prepare("SELECT release_id FROM turns WHERE message_id = 'm2'").pluck().get()).toBe(1);
    // At most one live version per adapter; statuses are checked.
    const insert = db.prepare(
      "INSERT INTO adapter_versions (adapter_id, version, sha256, size_bytes, file_path, manifest_json, lineage_json, source, status, installed_at) VALUES ('coding', ?, 's', 1, '/y', '{}', '{}', 'registry', ?, 1)",
    );
    expect(() => insert.run("2.0.0", "live")).toThrow(/UNIQUE/);
    expect(() => insert.run("2.0.0", "maybe")).toThrow(/CHECK/);
    insert.run("2.0.0", "staged");
    db.close();
  });
});
