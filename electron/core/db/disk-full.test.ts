/**
 * Real full-disk failures are recognised and become `disk_full` through dispatch: SQLite's
 * SQLITE_FULL (a database at its `max_page_count`) and ENOSPC from a file write (/dev/full,
 * which fails every write with it), also when wrapped as an error's `cause`; other errors stay
 * "internal".
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ApiError, methodNames } from "../../api";
import { dispatch } from "../dispatch";
import type { Handlers } from "../handlers";
import { DISK_FULL_MESSAGE, isDiskFull } from "./disk-full";

/** The SqliteError a write into a database at its page limit throws. */
function sqliteFull(): unknown {
  const db = new BetterSqlite3(":memory:");
  try {
    db.exec("CREATE TABLE t (x BLOB)");
    db.pragma(`max_page_count = ${Number(db.pragma("page_count", { simple: true }))}`);
    db.prepare("INSERT INTO t VALUES (?)").run(Buffer.alloc(1 << 16));
  } catch (err) {
    return err;
  } finally {
    db.close();
  }
  throw new Error("the insert should have failed");
}

// /dev/full (every write fails with ENOSPC) exists on Linux; elsewhere these two tests skip, as their names say.
const hasDevFull = existsSync("/dev/full");

function enospc(): unknown {
  try {
    writeFileSync("/dev/full", "x");
  } catch (err) {
    return err;
  }
  throw new Error("writing /dev/full should have failed");
}

function handlersThrowing(err: unknown): Handlers {
  const base = Object.fromEntries(
    methodNames.map((m) => [
      m,
      () => {
        throw err;
      },
    ]),
  );
  return base as unknown as Handlers;
}

describe("isDiskFull", () => {
  it("knows SQLITE_FULL, ENOSPC (also as a cause) and the disk_full ApiError", () => {
    expect((sqliteFull() as { code?: string }).code).toBe("SQLITE_FULL");
    expect(isDiskFull(sqliteFull())).toBe(true);
    expect(isDiskFull(new Error("saving failed", { cause: sqliteFull() }))).toBe(true);
    expect(isDiskFull(new ApiError("disk_full", DISK_FULL_MESSAGE))).toBe(true);
    expect(isDiskFull(Object.assign(new Error("quota"), { code: "EDQUOT" }))).toBe(true);
  });

  it.skipIf(!hasDevFull)("knows ENOSPC from a real write (/dev/full; skipped where there is none)", () => {
    expect((enospc() as NodeJS.ErrnoException).code).toBe("ENOSPC");
    expect(isDiskFull(enospc())).toBe(true);
  });

  it("does not take other failures for a full disk", () => {
    expect(isDiskFull(new Error("database or disk is full"))).toBe(false);
    expect(isDiskFull(Object.assign(new Error("busy"), { code: "SQLITE_BUSY" }))).toBe(false);
    expect(isDiskFull(new ApiError("internal", "x"))).toBe(false);
    expect(isDiskFull(null)).toBe(false);
    expect(isDiskFull("ENOSPC")).toBe(false);
  });
});

describe("dispatch on a full disk", () => {
  it("answers disk_full with a sentence saying so and what to do, not internal", async () => {
    const logged: string[] = [];
    const result = await dispatch(
      handlersThrowing(sqliteFull()),
      "conversations.list",
      {},
      { transport: "http" },
      (m) => logged.push(m),
    );
    expect(result).toEqual({ ok: false, error: { code: "disk_full", message: DISK_FULL_MESSAGE } });
    expect(DISK_FULL_MESSAGE).toMatch(/disk is full.*free some disk space/i);
    // The server log keeps the original error.
    expect(logged).toEqual(["conversations.list failed"]);
  });

  it.skipIf(!hasDevFull)(
    "answers disk_full for ENOSPC from a file write (/dev/full; skipped where there is none)",
    async () => {
      const result = await dispatch(
        handlersThrowing(enospc()),
        "conversations.list",
        {},
        { transport: "http" },
        () => {},
      );
      expect(result.ok || result.error.code).toBe("disk_full");
    },
  );

  it("still answers internal for other errors", async () => {
    const result = await dispatch(
      handlersThrowing(new Error("boom")),
      "conversations.list",
      {},
      { transport: "http" },
      () => {},
    );
    expect(result).toEqual({
      ok: false,
      error: { code: "internal", message: "Internal error in conversations.list." },
    });
  });
});
