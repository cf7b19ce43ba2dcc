/**
 * Issue 27's cloud items, on both engines: registering an id that is already registered needs
 * that install's current token (409 otherwise: no takeover by knowing an id); registration is
 * rate limited per address; a NUL in a key or batch id is a 400 (PostgreSQL answered 500); a
 * delete leaves the deleted text nowhere in SQLite's file or WAL, and PostgreSQL vacuums after it.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DeleteResponse, RegisterResponse } from "../common/feedback-protocol";
import { makeItem } from "../testing/cloud/items";
import { testDir } from "../testing/core/temp-dir";
import { startCloud, type RunningCloud, type RegistrationLimitOptions } from "./server";
import { CLOUD_DB_FILE, type SqliteStore } from "./store/sqlite-store";
import { type PostgresStore } from "./store/postgres-store";
import type { CloudStore } from "./store/store";
import { postgresSkipReason, startPostgres, type PostgresCluster } from "./testing/postgres";

const skip = postgresSkipReason();
if (skip) console.warn(`cloud hardening on PostgreSQL skipped: ${skip}`);

let cluster: PostgresCluster | null = null;
const running: RunningCloud<CloudStore>[] = [];
/** The data folder of the cloud started last. */
let dataDir = "";
afterEach(async () => {
  for (const c of running.splice(0)) await c.close();
});

async function start(
  engine: "sqlite" | "postgres",
  registration?: RegistrationLimitOptions,
  now?: () => number,
): Promise<RunningCloud<CloudStore>> {
  dataDir = testDir("macaron-hardening-");
  const database = engine === "postgres" ? await cluster!.createDatabase() : "sqlite";
  const cloud = await startCloud({
    dataDir,
    database,
    adminKey: "admin-key-1234",
    now,
    limits: { registration },
  });
  running.push(cloud);
  return cloud;
}

function register(url: string, installId: string, token?: string): Promise<Response> {
  return fetch(`${url}/v1/installs`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ installId }),
  });
}

async function registered(
  url: string,
  installId = randomUUID(),
): Promise<{ installId: string; token: string }> {
  const res = await register(url, installId);
  expect(res.status).toBe(200);
  return RegisterResponse.parse(await res.json());
}

function post(url: string, token: string, body: unknown): Promise<Response> {
  return fetch(`${url}/v1/feedback/batches`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
}

const batch = (installId: string, items: unknown[], batchId = "batch-0001") => ({
  protocol: 1,
  installId,
  batchId,
  items,
});

for (const engine of ["sqlite", "postgres"] as const) {
  describe.skipIf(engine === "postgres" && skip !== null)(`cloud hardening: ${engine}`, () => {
    if (engine === "postgres") {
      beforeAll(async () => {
        cluster = await startPostgres();
      });
      afterAll(async () => {
        await cluster?.stop();
      });
    }

    it("refuses to re-register a known install id without its current token (no takeover)", async () => {
      const cloud = await start(engine);
      const victim = await registered(cloud.url);
      expect(
        (await post(cloud.url, victim.token, batch(victim.installId, [makeItem("key-00001")]))).status,
      ).toBe(200);

      // The attacker knows the id (it is in every batch) but not the token.
      const takeover = await register(cloud.url, victim.installId);
      expect(takeover.status).toBe(409);
      expect(((await takeover.json()) as { error: string }).error).toMatch(/already registered/);
      const wrongToken = await register(cloud.url, victim.installId, "not-the-token-of-this-install");
      expect(wrongToken.status).toBe(409);
      // Another install's valid token is no proof either.
      const other = await registered(cloud.url);
      expect((await register(cloud.url, victim.installId, other.token)).status).toBe(409);

      // The victim's token still works, and its data cannot be deleted by the attacker.
      expect(
        (await post(cloud.url, victim.token, batch(victim.installId, [makeItem("key-00002")], "batch-0002")))
          .status,
      ).toBe(200);
      const del = await fetch(`${cloud.url}/v1/installs/${victim.installId}/data`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${other.token}` },
      });
      expect(del.status).toBe(403);
      expect(await cloud.store.count(victim.installId)).toBe(2);

      // With its current token the install rotates it: the old one stops working.
      const rotated = await register(cloud.url, victim.installId, victim.token);
      expect(rotated.status).toBe(200);
      const fresh = RegisterResponse.parse(await rotated.json());
      expect(fresh.token).not.toBe(victim.token);
      expect(
        (await post(cloud.url, victim.token, batch(victim.installId, [makeItem("key-00003")], "batch-0003")))
          .status,
      ).toBe(401);
      expect(
        (await post(cloud.url, fresh.token, batch(victim.installId, [makeItem("key-00003")], "batch-0003")))
          .status,
      ).toBe(200);
    });

    it("takes a proposed token as proof: a retry after a lost answer is idempotent", async () => {
      const cloud = await start(engine);
      const installId = randomUUID();
      const token = "t".repeat(43);
      const send = (t: string) =>
        fetch(`${cloud.url}/v1/installs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ installId, token: t }),
        });
      const first = await send(token);
      expect(first.status).toBe(200);
      expect(RegisterResponse.parse(await first.json()).token).toBe(token);
      const again = await send(token);
      expect(again.status).toBe(200);
      expect(RegisterResponse.parse(await again.json()).token).toBe(token);
      expect((await send("u".repeat(43))).status).toBe(409);
      // Another id may not take a token that is in use (nor learn that it is).
      const clash = await fetch(`${cloud.url}/v1/installs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ installId: randomUUID(), token }),
      });
      expect(clash.status).toBe(409);
      expect((await send("short")).status).toBe(400);
      expect((await post(cloud.url, token, batch(installId, [makeItem("key-00001")]))).status).toBe(200);
    });

    it("rate limits registration per address, with Retry-After", async () => {
      let t = 1_700_000_000_000;
      const cloud = await start(engine, { perWindow: 3, windowMs: 60_000 }, () => t);
      for (let i = 0; i < 3; i++) expect((await register(cloud.url, randomUUID())).status).toBe(200);
      const over = await register(cloud.url, randomUUID());
      expect(over.status).toBe(429);
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
      // Failed attempts count too (a takeover by guessing gains nothing from retrying).
      t += 60_000;
      expect((await register(cloud.url, randomUUID())).status).toBe(200);
    });

    it("keeps the default registration cap", async () => {
      const cloud = await start(engine);
      const codes: number[] = [];
      for (let i = 0; i < 70; i++) codes.push((await register(cloud.url, randomUUID())).status);
      expect(codes.filter((c) => c === 200)).toHaveLength(60);
      expect(codes.slice(60).every((c) => c === 429)).toBe(true);
    });

    it("answers 400 to a NUL or control character in an idempotency key or batch id", async () => {
      const cloud = await start(engine);
      const a = await registered(cloud.url);
      const nulKey = await post(cloud.url, a.token, batch(a.installId, [makeItem("key-\u0000-0001")]));
      expect(nulKey.status).toBe(400);
      expect(((await nulKey.json()) as { error: string }).error).toMatch(/idempotencyKey.*control/);
      const tabKey = await post(cloud.url, a.token, batch(a.installId, [makeItem("key-\t-00001")]));
      expect(tabKey.status).toBe(400);
      const nulBatch = await post(
        cloud.url,
        a.token,
        batch(a.installId, [makeItem("key-00001")], "batch-\u0000-01"),
      );
      expect(nulBatch.status).toBe(400);
      expect(((await nulBatch.json()) as { error: string }).error).toMatch(/batchId/);
      expect(await cloud.store.count()).toBe(0);
      expect((await post(cloud.url, a.token, batch(a.installId, [makeItem("key-00001")]))).status).toBe(200);
    });

    if (engine === "sqlite")
      it("leaves no deleted text in the SQLite file or its WAL", async () => {
        const cloud = await start(engine);
        const store = cloud.store as SqliteStore;
        const a = await registered(cloud.url);
        const b = await registered(cloud.url);
        const secret = (i: number) => `SECRET-${i}-zebra-quartz-${"x".repeat(i % 50)}`;
        const itemsOf = (prefix: string, n: number, text: (i: number) => string) =>
          Array.from({ length: n }, (_, i) =>
            makeItem(`${prefix}-${String(i).padStart(5, "0")}`, { response: text(i) }),
          );
        // Enough rows for many pages (splits, freed pages), some of them checkpointed already.
        for (let k = 0; k < 4; k++) {
          const r = await post(
            cloud.url,
            a.token,
            batch(a.installId, itemsOf(`a${k}`, 150, secret), `batch-a-000${k}`),
          );
          expect(r.status).toBe(200);
          expect(((await r.json()) as { accepted: string[] }).accepted).toHaveLength(150);
          if (k === 1) store.db.pragma("wal_checkpoint(PASSIVE)");
        }
        const keep = (i: number) => `KEPT-${i}-other-install`;
        expect((await post(cloud.url, b.token, batch(b.installId, itemsOf("bb", 50, keep)))).status).toBe(
          200,
        );

        const dbPath = join(dataDir, CLOUD_DB_FILE);
        const files = () =>
          [dbPath, `${dbPath}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f));
        const contains = (needle: string) => files().some((buf) => buf.includes(Buffer.from(needle)));
        // Without the fix the text is there, in the file or the WAL (the test is meaningful).
        expect(contains("zebra-quartz")).toBe(true);

        const del = await fetch(`${cloud.url}/v1/installs/${a.installId}/data`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${a.token}` },
        });
        expect(DeleteResponse.parse(await del.json()).deletedItems).toBe(600);
        expect(contains("zebra-quartz")).toBe(false);
        // The other install's data is untouched.
        expect(contains("KEPT-49-other-install")).toBe(true);
        expect(await store.count()).toBe(50);
      });

    if (engine === "sqlite")
      it("checkpoints the WAL once an export snapshot that held it ends", async () => {
        const cloud = await start(engine);
        const store = cloud.store as SqliteStore;
        const a = await registered(cloud.url);
        const item = makeItem("key-00001", { response: "WALSECRET-held-by-reader" });
        expect((await post(cloud.url, a.token, batch(a.installId, [item]))).status).toBe(200);
        const walPath = join(dataDir, `${CLOUD_DB_FILE}-wal`);
        await store.withSnapshot(async (snap) => {
          for await (const _ of snap.items({})) break;
          expect(await store.deleteItems(a.installId)).toBe(1);
          // The reader still sees the old pages: the WAL cannot be reset yet.
          expect(store.checkpointPending).toBe(true);
        });
        expect(store.checkpointPending).toBe(false);
        expect(readFileSync(walPath).includes(Buffer.from("WALSECRET"))).toBe(false);
        expect(readFileSync(join(dataDir, CLOUD_DB_FILE)).includes(Buffer.from("WALSECRET"))).toBe(false);
      });

    if (engine === "postgres")
      it("vacuums the items table after a delete", async () => {
        const cloud = await start(engine);
        const store = cloud.store as PostgresStore;
        const a = await registered(cloud.url);
        expect(
          (await post(cloud.url, a.token, batch(a.installId, [makeItem("key-00001"), makeItem("key-00002")])))
            .status,
        ).toBe(200);
        const del = await fetch(`${cloud.url}/v1/installs/${a.installId}/data`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${a.token}` },
        });
        expect(DeleteResponse.parse(await del.json()).deletedItems).toBe(2);
        await store.vacuumed();
        expect(store.vacuums).toBe(1);
        // PostgreSQL's own record: a manual VACUUM ran on the table (not autovacuum).
        const { rows } = await store.pool.query<{ n: number }>(
          "SELECT vacuum_count::bigint AS n FROM pg_stat_user_tables WHERE relname = 'items'",
        );
        expect(rows[0]!.n).toBeGreaterThanOrEqual(1);
      });
  });
}
