/**
 * A database that cannot be used (garbage, truncated, from a newer Macaron) never crashes
 * core: it starts degraded, explains, and recovers from a backup or a fresh start without a
 * restart, keeping the bad file.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Conversation, DatabaseStatus } from "../api";
import { BackupFolder } from "./db/backups";
import { openDatabase } from "./db/database";
import { migrate } from "./db/migrate";
import { migrations } from "./db/migrations";
import { assembleCore, type Core } from "./index";
import { FakeEngine } from "../../testing/engine/fake-engine";
import { testDir } from "../../testing/core/temp-dir";
import { value } from "../../testing/core/result-value";

const ctx = { transport: "ipc" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(dir: string): Promise<{ core: Core; makeEngine: ReturnType<typeof vi.fn> }> {
  const makeEngine = vi.fn(() => new FakeEngine());
  const core = await assembleCore({ dataDir: dir, log: () => undefined }, makeEngine);
  cleanups.push(() => core.close());
  return { core, makeEngine };
}

/** A real database with one conversation, checkpointed into the main file. */
function realDatabase(path: string, title = "Kept chat"): void {
  const db = openDatabase(path);
  db.prepare("INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', ?, 1, 1)").run(
    title,
  );
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

async function expectDegraded(
  core: Core,
  state: DatabaseStatus["state"],
  message: RegExp,
): Promise<DatabaseStatus> {
  const status = value<DatabaseStatus>(await core.dispatch("database.status", {}, ctx));
  expect(status.state).toBe(state);
  expect(status.message).toMatch(message);
  for (const [method, input] of [
    ["conversations.list", {}],
    ["settings.get", {}],
    ["memories.list", {}],
    ["models.status", {}],
  ] as const) {
    const result = await core.dispatch(method, input, ctx);
    expect(result).toMatchObject({ ok: false, error: { code: "database_unavailable" } });
    expect(!result.ok && result.error.message).toMatch(/^The conversation database could not be opened: /);
  }
  expect(core.engineStatus().state).toBe("idle");
  await expect(
    core.engine.generate([], { temperature: 0, maxTokens: 1 }, () => undefined),
  ).rejects.toMatchObject({
    code: "database_unavailable",
  });
  return status;
}

describe("core with an unusable database", () => {
  it("starts degraded on a garbage file, then starts fresh: the bad file (and its WAL) are kept", async () => {
    const dir = testDir();
    const path = join(dir, "macaron.db");
    const junk = "definitely not SQLite ".repeat(500);
    writeFileSync(path, junk);
    writeFileSync(`${path}-wal`, "wal of the bad file");
    const { core, makeEngine } = await start(dir);
    const status = await expectDegraded(core, "corrupt", /not a database/);
    expect(status.path).toBe(path);
    expect(makeEngine).not.toHaveBeenCalled();
    // Repairing needs the database to be broken.
    const fresh = value<DatabaseStatus>(await core.dispatch("database.startFresh", {}, ctx));
    expect(fresh).toMatchObject({ state: "ok", message: null });
    expect(makeEngine).toHaveBeenCalledTimes(1);

    const names = readdirSync(dir);
    const bad = names.find((n) => /^macaron\.db\.bad-\d{8}T\d{9}Z$/.test(n));
    expect(bad).toBeDefined();
    expect(readFileSync(join(dir, bad!), "utf8")).toBe(junk);
    expect(readFileSync(join(dir, `${bad!}-wal`), "utf8")).toBe("wal of the bad file");
    // Fully up, without a restart.
    const conv = value<Conversation>(await core.dispatch("conversations.create", { title: "New" }, ctx));
    expect(value<Conversation[]>(await core.dispatch("conversations.list", {}, ctx))).toEqual([conv]);
    expect(await core.dispatch("database.startFresh", {}, ctx)).toMatchObject({
      ok: false,
      error: { code: "invalid_input" },
    });
  });

  it("detects a truncated database (quick_check) and restores a backup", async () => {
    const dir = testDir();
    const path = join(dir, "macaron.db");
    // A backup from an older version, as a migration would have written it.
    const backups = new BackupFolder(dir);
    const old = new BetterSqlite3(join(dir, "v3.db"));
    migrate(old, migrations.slice(0, 3));
    old
      .prepare(
        "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c0', 'From the backup', 1, 1)",
      )
      .run();
    await backups.create(old, 3);
    old.close();

    realDatabase(path);
    const db = new BetterSqlite3(path);
    const insert = db.prepare(
      "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES (?, 'c1', 'user', ?, 'complete', 1, ?)",
    );
    db.transaction(() => {
      for (let i = 0; i < 200; i++) insert.run(`m${i}`, `${i} ${"x".repeat(2000)}`, i);
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    truncateSync(path, Math.floor(statSync(path).size / 2));

    const { core } = await start(dir);
    const status = await expectDegraded(core, "corrupt", /damaged|malformed|corrupt/i);
    expect(status.backups).toHaveLength(1);
    const [backup] = status.backups;
    expect(backup!.id).toMatch(/^macaron-v3-/);

    expect(await core.dispatch("database.restoreBackup", { id: "../../etc/passwd" }, ctx)).toMatchObject({
      ok: false,
      error: { code: "not_found" },
    });
    const restored = value<DatabaseStatus>(
      await core.dispatch("database.restoreBackup", { id: backup!.id }, ctx),
    );
    expect(restored.state).toBe("ok");
    const list = value<Conversation[]>(await core.dispatch("conversations.list", {}, ctx));
    expect(list.map((c) => c.title)).toEqual(["From the backup"]);
    // The backup itself is untouched (a copy was restored), the truncated file kept aside.
    expect(existsSync(join(dir, "backups", backup!.id))).toBe(true);
    expect(readdirSync(dir).some((n) => n.startsWith("macaron.db.bad-"))).toBe(true);
  });

  it("refuses a database from a newer version, leaves it untouched, and starts fresh on request", async () => {
    const dir = testDir();
    const path = join(dir, "macaron.db");
    const raw = new BetterSqlite3(path);
    raw.exec("CREATE TABLE future_things (x); INSERT INTO future_things VALUES (1);");
    raw.pragma("user_version = 99");
    raw.close();
    const { core, makeEngine } = await start(dir);
    await expectDegraded(core, "from_future", /newer version of Macaron \(schema 99/);
    expect(makeEngine).not.toHaveBeenCalled();
    const check = new BetterSqlite3(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(99);
    check.close();
    expect(value<DatabaseStatus>(await core.dispatch("database.startFresh", {}, ctx)).state).toBe("ok");
    expect(value<Conversation[]>(await core.dispatch("conversations.list", {}, ctx))).toEqual([]);
  });

  it("reports ok with the backups list for a healthy database", async () => {
    const dir = testDir();
    realDatabase(join(dir, "macaron.db"));
    const { core } = await start(dir);
    expect(value<DatabaseStatus>(await core.dispatch("database.status", {}, ctx))).toEqual({
      state: "ok",
      message: null,
      path: join(dir, "macaron.db"),
      backups: [],
    });
    expect(await core.dispatch("database.restoreBackup", { id: "x" }, ctx)).toMatchObject({
      ok: false,
      error: { code: "invalid_input" },
    });
  });
});
