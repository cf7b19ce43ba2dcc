import BetterSqlite3 from "better-sqlite3";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testDir } from "../../../testing/core/temp-dir";
import { openDatabase } from "./database";
import { DatabaseFromFutureError, DatabaseOpenError } from "./errors";
import { migrate, schemaVersion } from "./migrate";
import { LATEST_SCHEMA_VERSION, type Migration } from "./migrations";

describe("openDatabase", () => {
  it("sets WAL, synchronous=FULL, foreign keys and a busy timeout, and migrates to the latest schema", () => {
    const path = join(testDir(), "macaron.db");
    const db = openDatabase(path);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(2); // FULL
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    db.close();
    // Reopening applies nothing and keeps the data.
    const again = openDatabase(path);
    expect(schemaVersion(again)).toBe(LATEST_SCHEMA_VERSION);
    again.close();
  });

  it("works in memory", () => {
    const db = openDatabase(":memory:");
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    db.close();
  });

  it("refuses a database from a newer app version and leaves it untouched", () => {
    const path = join(testDir(), "macaron.db");
    const raw = new BetterSqlite3(path);
    raw.pragma("user_version = 99");
    raw.close();
    const error = (() => {
      try {
        openDatabase(path);
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(DatabaseFromFutureError);
    expect((error as Error).message).toMatch(/newer version of Macaron \(schema 99/);
    const check = new BetterSqlite3(path);
    expect(check.pragma("user_version", { simple: true })).toBe(99);
    check.close();
  });

  it("gives a clear error for a file that is not a database and never deletes it", () => {
    const path = join(testDir(), "macaron.db");
    const junk = "this is not a database, just some text ".repeat(200);
    writeFileSync(path, junk);
    expect(() => openDatabase(path)).toThrow(DatabaseOpenError);
    expect(() => openDatabase(path)).toThrow(/not a database.*left untouched/);
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path, "utf8")).toBe(junk);
  });
});

describe("migrate", () => {
  it("applies all pending migrations in one transaction: a failure rolls back every one", () => {
    const db = new BetterSqlite3(":memory:");
    const list: Migration[] = [
      { version: 1, name: "a", up: (d) => d.exec("CREATE TABLE a (x)") },
      { version: 2, name: "b", up: (d) => d.exec("CREATE TABLE b (x)") },
      { version: 3, name: "broken", up: (d) => d.exec("CREATE TABLE a (x)") },
    ];
    expect(() => migrate(db, list)).toThrow(/already exists/);
    expect(schemaVersion(db)).toBe(0);
    expect(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").pluck().get()).toBe(0);
    db.close();
  });

  it("applies only what is pending", () => {
    const db = new BetterSqlite3(":memory:");
    const list: Migration[] = [
      { version: 1, name: "a", up: (d) => d.exec("CREATE TABLE a (x)") },
      { version: 2, name: "b", up: (d) => d.exec("CREATE TABLE b (x)") },
    ];
    expect(migrate(db, list.slice(0, 1))).toEqual([1]);
    expect(migrate(db, list)).toEqual([2]);
    expect(migrate(db, list)).toEqual([]);
    expect(schemaVersion(db)).toBe(2);
    db.close();
  });
});
