/**
 * The bench's bulk seed must leave exactly what ingest leaves, or the numbers measured "at N
 * items stored" would be about another database: the same items, batches and install rows,
 * the same counts and the same export, on SQLite and PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BatchResponse, FeedbackItem } from "../../common/feedback-protocol";
import { makeItem } from "../../testing/cloud/items";
import { postgresSkipReason, startPostgres, type PostgresCluster } from "../testing/postgres";
import { createCloudApp } from "../server";
import { PostgresStore } from "./postgres-store";
import { batchDigest, seedStore, type SeedBatch } from "./seed";
import { SqliteStore } from "./sqlite-store";
import type { CloudStore } from "./store";
import { testDir } from "../../testing/core/temp-dir";

const ADMIN = "admin-key-seed-1";
const INSTALL = "00000000-0000-4000-8000-00000000005e";

/** Three batches over several domains and kinds, with equal createdAt ties across batches. */
function plannedBatches(): SeedBatch[] {
  const item = (k: string, i: number): FeedbackItem => {
    if (i % 5 === 1) return makeItem(k, { domain: null, createdAt: 1_700_000_000_000 + (i % 7) });
    if (i % 5 === 2)
      return makeItem(k, {
        domain: "coding",
        kind: "correction",
        correction: `fixed ${k}`,
        rating: undefined,
        createdAt: 1_700_000_000_000 + (i % 7),
      });
    return makeItem(k, { createdAt: 1_700_000_000_000 + (i % 7) });
  };
  return [0, 1, 2].map((b) => ({
    batchId: `seed-batch-${b}`,
    at: 1_700_000_100_000 + b,
    items: Array.from({ length: 40 + b }, (_, i) => item(`seed-${b}-${String(i).padStart(4, "0")}`, i)),
  }));
}

interface Dump {
  installs: unknown[];
  items: unknown[];
  batches: unknown[];
  count: number;
  countInstall: number;
  raw: Record<string, string>;
  report: unknown;
}

async function rows(store: CloudStore, sql: string): Promise<unknown[]> {
  if (store instanceof SqliteStore) return store.db.prepare(sql).all();
  if (store instanceof PostgresStore) return (await store.pool.query<Record<string, unknown>>(sql)).rows;
  throw new Error("unknown store");
}

/** Every table the two paths write, the counts, and what the export endpoints answer. */
async function dump(store: CloudStore, dataDir: string): Promise<Dump> {
  const installs = await rows(
    store,
    "SELECT install_id, token_hash, created_at, rotated_at, item_count FROM installs ORDER BY install_id",
  );
  const items = await rows(
    store,
    `SELECT install_id, idempotency_key, kind, domain, consent, created_at, received_at, batch_id, json
     FROM items ORDER BY install_id, idempotency_key`,
  );
  const batches = await rows(
    store,
    "SELECT install_id, batch_id, digest, response, received_at FROM batches ORDER BY install_id, batch_id",
  );
  const count = await store.count();
  const countInstall = await store.count(INSTALL);
  // The service on this store (not listening): the export sees the data as it would in production.
  // Not closed afterwards: closing the app closes the store, which the caller owns.
  const { app } = createCloudApp({ dataDir, store, adminKey: ADMIN });
  const auth = { authorization: `Bearer ${ADMIN}` };
  const raw: Record<string, string> = {};
  for (const domain of ["chat", "coding", "base"]) {
    const res = await app.inject({ url: `/v1/export/raw/${domain}.jsonl`, headers: auth });
    expect(res.statusCode).toBe(200);
    raw[domain] = res.body;
  }
  const report = await app.inject({ url: "/v1/export/chat.report.json", headers: auth });
  expect(report.statusCode).toBe(200);
  return { installs, items, batches, count, countInstall, raw, report: report.json() };
}

async function ingestAll(store: CloudStore, batches: SeedBatch[]): Promise<void> {
  await store.registerInstall(INSTALL, "token-hash-seed", 1_700_000_000_500);
  for (const b of batches) {
    const r = await store.ingest({
      installId: INSTALL,
      batchId: b.batchId,
      digest: batchDigest(b.items),
      items: b.items,
      at: b.at,
      limits: { maxStoredItems: null },
      answer: ({ accepted, duplicates }): BatchResponse => ({ accepted, duplicates, rejected: [] }),
    });
    expect(r.kind).toBe("stored");
  }
}

const seed = (store: CloudStore, batches: Iterable<SeedBatch>) =>
  seedStore(store, {
    installId: INSTALL,
    tokenHash: "token-hash-seed",
    registeredAt: 1_700_000_000_500,
    batches,
  });

const opened: CloudStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

let cluster: PostgresCluster | null = null;
const skip = postgresSkipReason();
if (skip) console.warn(`seed on PostgreSQL not tested: ${skip}`);

const engines: [string, () => Promise<CloudStore>][] = [
  [
    "sqlite",
    () => {
      const s = new SqliteStore(testDir("macaron-seed-"));
      opened.push(s);
      return Promise.resolve(s);
    },
  ],
];
if (!skip)
  engines.push([
    "postgres",
    async () => {
      const s = await PostgresStore.open(await cluster!.createDatabase());
      opened.push(s);
      return s;
    },
  ]);

describe("bulk seed", () => {
  if (!skip) {
    beforeAll(async () => {
      cluster = await startPostgres();
    });
    afterAll(async () => {
      await cluster?.stop();
    });
  }

  for (const [name, open] of engines) {
    it(`${name}: a seeded store equals one the same batches were ingested into`, async () => {
      const batches = plannedBatches();
      const ingested = await open();
      await ingestAll(ingested, batches);
      const seeded = await open();
      // A generator: the seed consumes the batches once, lazily, as the bench's 1M plan does.
      expect(
        await seed(
          seeded,
          (function* () {
            yield* plannedBatches();
          })(),
        ),
      ).toEqual({
        items: 123,
        batches: 3,
      });
      const want = await dump(ingested, testDir("macaron-seed-"));
      const got = await dump(seeded, testDir("macaron-seed-"));
      expect(want.count).toBe(123);
      expect(want.raw.chat!.split("\n").filter(Boolean).length).toBeGreaterThan(0);
      expect(got).toEqual(want);
      // The seeded batches are answered like ingested ones: the same batch again is a replay.
      const again = await seeded.ingest({
        installId: INSTALL,
        batchId: batches[1]!.batchId,
        digest: batchDigest(batches[1]!.items),
        items: batches[1]!.items,
        at: 1_800_000_000_000,
        limits: { maxStoredItems: null },
        answer: () => ({ accepted: [], duplicates: [], rejected: [] }),
      });
      expect(again).toEqual({
        kind: "replayed",
        response: {
          accepted: batches[1]!.items.map((i) => i.idempotencyKey),
          duplicates: [],
          rejected: [],
        },
      });
    });

    it(`${name}: a key already stored fails the whole seed and stores nothing`, async () => {
      const store = await open();
      const batches = plannedBatches();
      const clash: SeedBatch = { batchId: "clash", at: 1, items: [batches[0]!.items[3]!] };
      await expect(seed(store, [...batches, clash])).rejects.toThrow(/UNIQUE|duplicate key/i);
      expect(await store.count()).toBe(0);
      expect(await rows(store, "SELECT * FROM batches")).toEqual([]);
      expect(await rows(store, "SELECT * FROM installs")).toEqual([]);
    });
  }
});
