import BetterSqlite3, { type Database } from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testDir } from "../../../../testing/core/temp-dir";
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
  it("creates the settings table in memory", () => {
    const db = new BetterSqlite3(":memory:");
    check(db);
    db.close();
  });

  it("creates the settings table in a file", () => {
    const db = new BetterSqlite3(join(testDir(), "t.db"));
    check(db);
    db.close();
  });
});
