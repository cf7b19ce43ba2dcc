/**
 * Every old schema version upgrades to the latest with its data, a failing migration leaves
 * the file as it was, and an existing database is backed up before it is migrated.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testDir } from "../../../testing/core/temp-dir";
import { BackupFolder, KEEP_BACKUPS } from "./backups";
import { openDatabase } from "./database";
import { openAppDatabase } from "./database-file";
import { migrate, schemaVersion } from "./migrate";
import { LATEST_SCHEMA_VERSION, type Migration, migrations } from "./migrations";

/** Rows a database at `version` can hold; each version's rows are written while it is current. */
const seeds: Record<number, (db: Database) => void> = {
  1: (db) => {
    db.prepare(
      "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Old trip', 1, 2)",
    ).run();
    db.prepare(
      `INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq)
       VALUES ('m1', 'c1', 'user', 'Where is Lyon?', 'complete', 1, 1),
              ('m2', 'c1', 'assistant', 'In France.', 'complete', 2, 2)`,
    ).run();
  },
  2: (db) => db.prepare("INSERT INTO settings (key, value) VALUES ('model.last', '\"/m.gguf\"')").run(),
  3: (db) => {
    db.prepare(
      `INSERT INTO turns (message_id, model_sha256, harness_version, adapters_json, router_json, sampling_json, kv_policy, created_at)
       VALUES ('m2', 'sha', '0.1.0+x', '[]', '{"mode":"base","confidence":1,"reason":"r","latencyMs":0}', '{}', 'reevaluate', 2)`,
    ).run();
  },
  4: (db) => {
    db.prepare(
      `INSERT INTO feedback_events (id, kind, message_id, conversation_id, created_at, payload_json, versions_json)
       VALUES ('f1', 'rating', 'm2', 'c1', 3, '{}', '{}')`,
    ).run();
  },
};

/** A database file at schema `version`, with the rows of every version up to it. */
function databaseAt(path: string, version: number, list: readonly Migration[] = migrations): void {
  const db = new BetterSqlite3(path);
  db.pragma("foreign_keys = ON");
  for (const m of list.filter((x) => x.version <= version)) {
    migrate(
      db,
      list.filter((x) => x.version <= m.version),
    );
    seeds[m.version]?.(db);
  }
  expect(schemaVersion(db)).toBe(version);
  db.close();
}

function expectDataOf(db: Database, version: number): void {
  if (version >= 1) {
    expect(db.prepare("SELECT title FROM conversations WHERE id = 'c1'").pluck().get()).toBe("Old trip");
    expect(db.prepare("SELECT content FROM messages ORDER BY seq").pluck().all()).toEqual([
      "Where is Lyon?",
      "In France.",
    ]);
  }
  if (version >= 2) expect(db.prepare("SELECT value FROM settings").pluck().get()).toBe('"/m.gguf"');
  if (version >= 3) expect(db.prepare("SELECT model_sha256 FROM turns").pluck().get()).toBe("sha");
  if (version >= 4) expect(db.prepare("SELECT kind FROM feedback_events").pluck().get()).toBe("rating");
}

describe("upgrading old databases", () => {
  it("the registry is ordered, contiguous and ends at the latest version", () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    expect(LATEST_SCHEMA_VERSION).toBe(migrations.length);
  });

  for (let version = 0; version < LATEST_SCHEMA_VERSION; version++) {
    it(`migrates schema ${version} to ${LATEST_SCHEMA_VERSION} keeping every row`, () => {
      const path = join(testDir(), "macaron.db");
      databaseAt(path, version);
      const db = openDatabase(path);
      expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
      expectDataOf(db, version);
      if (version >= 1) {
        // Rows written before the search index existed are found too.
        const found = db
          .prepare(
            "SELECT m.id FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid WHERE messages_fts MATCH 'lyon'",
          )
          .pluck()
          .all();
        expect(found).toEqual(["m1"]);
      }
      db.close();
    });
  }

  it("a migration failing midway leaves the old version and its data intact", () => {
    const path = join(testDir(), "macaron.db");
    databaseAt(path, 3);
    const broken: Migration[] = [
      ...migrations,
      {
        version: LATEST_SCHEMA_VERSION + 1,
        name: "broken",
        up: (db) => {
          db.exec("CREATE TABLE half_done (x); DELETE FROM messages;");
          throw new Error("disk on fire");
        },
      },
    ];
    const db = new BetterSqlite3(path);
    expect(() => migrate(db, broken)).toThrow(/disk on fire/);
    db.close();
    const check = new BetterSqlite3(path, { readonly: true });
    expect(schemaVersion(check)).toBe(3);
    expectDataOf(check, 3);
    // Not even the earlier, successful migrations of the same run were kept.
    expect(
      check
        .prepare("SELECT name FROM sqlite_master WHERE name IN ('memories', 'half_done', 'feedback_events')")
        .all(),
    ).toEqual([]);
    check.close();
  });

  it("backs an existing database up before migrating it, and keeps the last five backups", async () => {
    const dataDir = testDir();
    const path = join(dataDir, "macaron.db");
    const backups = new BackupFolder(dataDir);
    const log = (): void => undefined;
    // A brand-new database has nothing to lose: no backup.
    (await openAppDatabase(join(dataDir, "fresh.db"), backups, log)).close();
    expect(backups.list()).toEqual([]);

    databaseAt(path, 3);
    const db = await openAppDatabase(path, backups, log);
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    db.close();
    const [backup] = backups.list();
    expect(backup!.schemaVersion).toBe(3);
    expect(backup!.id).toMatch(/^macaron-v3-\d{8}T\d{9}Z\.db$/);
    expect(backup!.path).toBe(join(dataDir, "backups", backup!.id));
    const copy = new BetterSqlite3(backup!.path, { readonly: true });
    expect(schemaVersion(copy)).toBe(3);
    expectDataOf(copy, 3);
    copy.close();

    // Up to date: nothing to back up.
    (await openAppDatabase(path, backups, log)).close();
    expect(backups.list()).toHaveLength(1);

    for (let i = 0; i < KEEP_BACKUPS + 2; i++) {
      const old = join(dataDir, `old-${i}.db`);
      databaseAt(old, 2);
      (await openAppDatabase(old, backups, log)).close();
    }
    const kept = backups.list();
    expect(kept).toHaveLength(KEEP_BACKUPS);
    expect(kept.every((b) => b.schemaVersion === 2)).toBe(true);
    expect(existsSync(backup!.path)).toBe(false);
    expect(backups.find("../macaron.db")).toBeNull();
  });
});
