import BetterSqlite3, { type Database } from "better-sqlite3";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../../testing/core/temp-dir";
import { migrate0001 } from "./0001-conversations";
import { migrate0002 } from "./0002-settings";

function check(db: Database): void {
  migrate0001(db);
  migrate0002(db);
  db.prepare("INSERT INTO settings VALUES ('k', '1')").run();
  expect(() => db.prepare("INSERT INTO settings VALUES ('k', '2')").run()).toThrow(/UNIQUE|PRIMARY/);
  expect(db.prepare("SELECT value FROM settings WHERE key = 'k'").pluck().get()).toBe("1");
}

describe("migration 0002 (settings)", () => {
  let cleanup: (() => void) | null = null;
  afterEach(() => cleanup?.());

  it("creates the settings table in memory", () => {
    const db = new BetterSqlite3(":memory:");
    check(db);
    db.close();
  });

  it("creates the settings table in a file", () => {
    const dir = tempDir();
    cleanup = dir.remove;
    const db = new BetterSqlite3(join(dir.path, "t.db"));
    check(db);
    db.close();
  });
});
