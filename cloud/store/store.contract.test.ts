/**
 * The store contract: the same cases against SQLite and PostgreSQL. The PostgreSQL half starts
 * a throwaway cluster (cloud/testing/postgres.ts) and skips only when no server binaries are
 * installed; "replicas" there are two stores (two pools) on one database.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BatchResponse, FeedbackItem } from "../../common/feedback-protocol";
import { makeItem } from "../../testing/cloud/items";
import { postgresSkipReason, startPostgres, type PostgresCluster } from "../testing/postgres";
import { PostgresStore } from "./postgres-store";
import { SqliteStore } from "./sqlite-store";
import type { CloudStore, IngestRequest, StoredItem } from "./store";
import { testDir } from "../../testing/core/temp-dir";

interface Engine {
  /** A fresh, empty store, and a second handle on the same data (another replica). */
  open(): Promise<{ a: CloudStore; b: CloudStore }>;
}

const opened: CloudStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const sqlite: Engine = {
  open() {
    const dir = testDir("macaron-store-");
    const a = new SqliteStore(dir);
    const b = new SqliteStore(dir);
    opened.push(a, b);
    return Promise.resolve({ a, b });
  },
};

let cluster: PostgresCluster | null = null;
const postgres: Engine = {
  async open() {
    const url = await cluster!.createDatabase();
    const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
    opened.push(a, b);
    return { a, b };
  },
};

const skip = postgresSkipReason();
if (skip) console.warn(`store contract on PostgreSQL skipped: ${skip}`);

const INSTALL = "00000000-0000-4000-8000-000000000001";

function request(items: FeedbackItem[], over: Partial<IngestRequest> = {}): IngestRequest {
  return {
    installId: INSTALL,
    batchId: "batch-1",
    digest: items.map((i) => i.idempotencyKey).join(","),
    items,
    at: 1_700_000_001_000,
    limits: { maxStoredItems: null },
    answer: ({ accepted, duplicates }): BatchResponse => ({ accepted, duplicates, rejected: [] }),
    ...over,
  };
}

const keys = (n: number, prefix = "key") =>
  Array.from({ length: n }, (_, i) => makeItem(`${prefix}-${String(i).padStart(5, "0")}`));

async function collect(it: AsyncIterable<StoredItem>): Promise<string[]> {
  const out: string[] = [];
  for await (const row of it) out.push((JSON.parse(row.json) as FeedbackItem).idempotencyKey);
  return out;
}

for (const [name, engine] of [
  ["sqlite", sqlite],
  ["postgres", postgres],
] as const) {
  describe.skipIf(name === "postgres" && skip !== null)(`store contract: ${name}`, () => {
    if (name === "postgres") {
      beforeAll(async () => {
        cluster = await startPostgres();
      });
      afterAll(async () => {
        await cluster?.stop();
      });
    }

    it("applies its migrations once, also when two handles open the same data at once", async () => {
      const { a, b } = await engine.open();
      expect(await a.ready()).toEqual({ ok: true, migrations: 3 });
      expect(await b.ready()).toEqual({ ok: true, migrations: 3 });
    });

    // Registered for PostgreSQL only (not registered-and-skipped for SQLite): a SQLite file
    // has no server to go away, and an open handle keeps reading an unlinked file.
    if (name === "postgres")
      it("is not ready once its database is gone", async () => {
        const url = await cluster!.createDatabase("gone_soon");
        const store = await PostgresStore.open(url);
        opened.push(store);
        expect((await store.ready()).ok).toBe(true);
        const { default: pg } = await import("pg");
        const admin = new pg.Client({ connectionString: cluster!.url });
        await admin.connect();
        await admin.query('DROP DATABASE "gone_soon" WITH (FORCE)');
        await admin.end();
        const r = await store.ready();
        expect(r.ok).toBe(false);
        expect(r.ok ? "" : r.reason).toMatch(/gone_soon|terminat|connection/i);
      });

    it("registers installs by token hash and rotates the token only with the current one", async () => {
      const { a, b } = await engine.open();
      expect(await a.registerInstall(INSTALL, "hash-1", 1)).toBe("created");
      expect(await b.installForTokenHash("hash-1")).toBe(INSTALL);
      // The id alone, or a token that is not the current one, changes nothing.
      expect(await b.registerInstall(INSTALL, "hash-x", 2)).toBe("taken");
      expect(await b.registerInstall(INSTALL, "hash-x", 2, "hash-wrong")).toBe("taken");
      expect(await a.installForTokenHash("hash-1")).toBe(INSTALL);
      expect(await a.installForTokenHash("hash-x")).toBeNull();
      expect(await b.registerInstall(INSTALL, "hash-2", 2, "hash-1")).toBe("rotated");
      expect(await a.installForTokenHash("hash-1")).toBeNull();
      expect(await a.installForTokenHash("hash-2")).toBe(INSTALL);
    });

    it("counts registrations per source in fixed windows shared by every handle", async () => {
      const { a, b } = await engine.open();
      expect(await a.hitRegisterWindow("10.0.0.1", 0)).toBe(1);
      expect(await b.hitRegisterWindow("10.0.0.1", 0)).toBe(2);
      expect(await b.hitRegisterWindow("10.0.0.2", 0)).toBe(1);
      // A new window starts from one, and the old ones are dropped.
      expect(await a.hitRegisterWindow("10.0.0.1", 60_000)).toBe(1);
      expect(await b.hitRegisterWindow("10.0.0.1", 0)).toBe(1);
    });

    it("stores a batch's items once by (install, key) and answers a repeated batch with its first answer", async () => {
      const { a, b } = await engine.open();
      await a.registerInstall(INSTALL, "h", 1);
      expect(await a.ingest(request([makeItem("unknown-1")], { installId: "nobody" }))).toEqual({
        kind: "unknown-install",
      });
      const first = await a.ingest(request(keys(3)));
      expect(first).toEqual({
        kind: "stored",
        response: { accepted: ["key-00000", "key-00001", "key-00002"], duplicates: [], rejected: [] },
      });
      // The same batch again, on the other replica: the first answer, not "3 duplicates".
      expect(await b.ingest(request(keys(3)))).toEqual({
        kind: "replayed",
        response: first.kind === "stored" && first.response,
      });
      // Another batch reusing two keys: those are duplicates, the new one is stored.
      const other = await b.ingest(
        request([...keys(2), makeItem("key-new01")], { batchId: "batch-2", digest: "d2" }),
      );
      expect(other).toEqual({
        kind: "stored",
        response: { accepted: ["key-new01"], duplicates: ["key-00000", "key-00001"], rejected: [] },
      });
      expect(await a.count()).toBe(4);
      expect(await b.count(INSTALL)).toBe(4);
    });

    it("stores a batch sent to two replicas at once exactly once", async () => {
      const { a, b } = await engine.open();
      await a.registerInstall(INSTALL, "h", 1);
      const items = keys(50);
      const results = await Promise.all([a, b, a, b, a, b].map((s) => s.ingest(request(items))));
      expect(results.filter((r) => r.kind === "stored")).toHaveLength(1);
      expect(results.filter((r) => r.kind === "replayed")).toHaveLength(5);
      const responses = results.map((r) => ("response" in r ? r.response : null));
      for (const r of responses) expect(r).toEqual(responses[0]);
      expect(responses[0]?.accepted).toHaveLength(50);
      expect(await a.count()).toBe(50);
    });

    it("refuses a batch that would pass the install's cap, storing none of it", async () => {
      const { a } = await engine.open();
      await a.registerInstall(INSTALL, "h", 1);
      const limits = { maxStoredItems: 5 };
      expect((await a.ingest(request(keys(4), { limits }))).kind).toBe("stored");
      const over = await a.ingest(request(keys(3, "more"), { limits, batchId: "b2", digest: "d2" }));
      expect(over).toEqual({ kind: "over-quota", stored: 4, max: 5 });
      expect(await a.count()).toBe(4);
      // Duplicates only cost nothing; one new item still fits.
      expect(
        (
          await a.ingest(
            request([...keys(4), makeItem("last-0001")], { limits, batchId: "b3", digest: "d3" }),
          )
        ).kind,
      ).toBe("stored");
      expect(await a.count()).toBe(5);
    });

    it("deletes an install's items, frees its cap and forgets its answered batches", async () => {
      const { a } = await engine.open();
      await a.registerInstall(INSTALL, "h", 1);
      const limits = { maxStoredItems: 3 };
      await a.ingest(request(keys(3), { limits }));
      expect(await a.deleteItems(INSTALL)).toBe(3);
      expect(await a.count()).toBe(0);
      const again = await a.ingest(request(keys(3), { limits }));
      expect(again.kind).toBe("stored");
      expect(await a.count()).toBe(3);
    });

    it("counts requests per install in fixed windows shared by replicas", async () => {
      const { a, b } = await engine.open();
      expect(await a.hitRateWindow(INSTALL, 60_000)).toBe(1);
      expect(await b.hitRateWindow(INSTALL, 60_000)).toBe(2);
      expect(await a.hitRateWindow("other", 60_000)).toBe(1);
      expect(await b.hitRateWindow(INSTALL, 120_000)).toBe(1);
    });

    it("pages items in one order without skipping or repeating, filtered by domain and kind", async () => {
      const { a } = await engine.open();
      await a.registerInstall(INSTALL, "h", 1);
      // Equal created_at on purpose: the keyset order's tie-breakers decide page boundaries.
      const items = [
        ...keys(7, "chat"),
        ...Array.from({ length: 4 }, (_, i) => makeItem(`base-${i}0000`, { domain: null })),
        makeItem("code-00001", {
          domain: "coding",
          kind: "correction",
          correction: "fixed",
          rating: undefined,
        }),
      ];
      await a.ingest(request(items));
      const got = await a.withSnapshot(async (snap) => ({
        chat: await collect(snap.items({ domain: "chat" }, 3)),
        base: await collect(snap.items({ domain: null }, 2)),
        ratings: await collect(snap.items({ kind: "rating" }, 5)),
        counts: await snap.domainCounts(),
      }));
      expect(got.chat).toEqual(keys(7, "chat").map((i) => i.idempotencyKey));
      expect(got.base).toEqual(["base-00000", "base-10000", "base-20000", "base-30000"]);
      expect(got.ratings).toHaveLength(11);
      expect(new Set(got.ratings).size).toBe(11);
      const counts = Object.fromEntries(got.counts.map((c) => [`${c.domain}/${c.kind}`, c.n]));
      expect(counts).toEqual({ "chat/rating": 7, "null/rating": 4, "coding/correction": 1 });
    });

    it("reads one snapshot while another replica ingests", async () => {
      const { a, b } = await engine.open();
      await a.registerInstall(INSTALL, "h", 1);
      await a.ingest(request(keys(10)));
      const seen = await a.withSnapshot(async (snap) => {
        const rows: string[] = [];
        for await (const row of snap.items({ domain: "chat" }, 4)) {
          rows.push(row.json);
          // Written and committed between two pages: the snapshot must not see it.
          if (rows.length === 4)
            await b.ingest(request(keys(5, "late"), { batchId: "late", digest: "late" }));
        }
        return { rows: rows.length, counts: await snap.domainCounts() };
      });
      expect(seen.rows).toBe(10);
      expect(seen.counts).toEqual([{ domain: "chat", kind: "rating", n: 10 }]);
      expect(await a.count()).toBe(15);
    });
  });
}
