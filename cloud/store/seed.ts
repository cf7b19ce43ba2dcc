/**
 * Bulk seeding of a store for benchmarks and tests: writes the rows that registering one install
 * and then `store.ingest` of each batch (no cap, every item new) would leave (the same items
 * columns and JSON, one `batches` row per batch with its sha256 digest and stored answer, and the
 * install's item_count), but in one transaction of large multi-row inserts instead of one
 * ingest transaction per batch: about 1500 items/s through ingest, far more here (see
 * bench/README.md), so a store with 1M items takes seconds, not minutes. It sits beside the
 * stores and uses their connections, so the CloudStore interface keeps only what the service
 * calls.
 */
import { createHash } from "node:crypto";
import type { BatchResponse, FeedbackItem } from "../../common/feedback-protocol";
import { PostgresStore } from "./postgres-store";
import { itemRow, SqliteStore } from "./sqlite-store";
import type { CloudStore } from "./store";

export interface SeedBatch {
  batchId: string;
  /** Fresh, distinct keys: a key already stored for the install fails the seed (see below). */
  items: FeedbackItem[];
  /** received_at of the batch's items and row. */
  at: number;
}

export interface SeedPlan {
  installId: string;
  tokenHash: string;
  registeredAt: number;
  /** Consumed once, lazily: a generator keeps memory flat at 1M items. */
  batches: Iterable<SeedBatch>;
}

/** Rows per multi-row insert: large enough that per-statement cost vanishes, small in memory. */
const CHUNK = 5000;

/** The digest the service gives a batch (cloud/server.ts): sha256 of its items' JSON as sent. */
export function batchDigest(items: FeedbackItem[]): string {
  return createHash("sha256").update(JSON.stringify(items)).digest("hex");
}

/** What ingest answers for a batch whose items were all new. */
function answer(items: FeedbackItem[]): BatchResponse {
  return { accepted: items.map((i) => i.idempotencyKey), duplicates: [], rejected: [] };
}

/**
 * Registers the install and stores every batch, all or nothing. Unlike ingest, a key already
 * stored is an error (plain INSERT, no ON CONFLICT), not a "duplicate": the seed is meant to
 * give a store exactly N items, and a silent difference from ingest would bias the bench.
 * Returns how many items and batches it stored.
 */
export async function seedStore(
  store: CloudStore,
  plan: SeedPlan,
): Promise<{ items: number; batches: number }> {
  if (store instanceof SqliteStore) return seedSqlite(store, plan);
  if (store instanceof PostgresStore) return seedPostgres(store, plan);
  throw new Error(`no seed path for this ${store.engine} store (not a SqliteStore or PostgresStore)`);
}

function seedSqlite(store: SqliteStore, plan: SeedPlan): { items: number; batches: number } {
  const db = store.db;
  const install = db.prepare(
    `INSERT INTO installs (install_id, token_hash, created_at, rotated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (install_id) DO UPDATE SET token_hash = excluded.token_hash, rotated_at = excluded.rotated_at`,
  );
  // Single-row prepared statements: in one transaction SQLite's cost is the B-tree work, so a
  // multi-row VALUES list would only add SQL text to parse.
  const insertItem = db.prepare(
    `INSERT INTO items (install_id, idempotency_key, kind, domain, consent, created_at, received_at, batch_id, json)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertBatch = db.prepare(
    "INSERT INTO batches (install_id, batch_id, digest, response, received_at) VALUES (?, ?, ?, ?, ?)",
  );
  const count = db.prepare("UPDATE installs SET item_count = item_count + ? WHERE install_id = ?");
  return db
    .transaction(() => {
      install.run(plan.installId, plan.tokenHash, plan.registeredAt, plan.registeredAt);
      let items = 0;
      let batches = 0;
      for (const b of plan.batches) {
        for (const item of b.items) insertItem.run(...itemRow(plan.installId, b.batchId, b.at, item));
        insertBatch.run(
          plan.installId,
          b.batchId,
          batchDigest(b.items),
          JSON.stringify(answer(b.items)),
          b.at,
        );
        items += b.items.length;
        batches++;
      }
      count.run(items, plan.installId);
      return { items, batches };
    })
    .immediate();
}

interface ItemColumns {
  keys: string[];
  kinds: string[];
  domains: (string | null)[];
  consents: string[];
  createdAt: number[];
  receivedAt: number[];
  batchIds: string[];
  json: string[];
}

const emptyColumns = (): ItemColumns => ({
  keys: [],
  kinds: [],
  domains: [],
  consents: [],
  createdAt: [],
  receivedAt: [],
  batchIds: [],
  json: [],
});

async function seedPostgres(
  store: PostgresStore,
  plan: SeedPlan,
): Promise<{ items: number; batches: number }> {
  return store.transaction(async (c) => {
    await c.query(
      `INSERT INTO installs (install_id, token_hash, created_at, rotated_at) VALUES ($1, $2, $3, $3)
       ON CONFLICT (install_id) DO UPDATE SET token_hash = excluded.token_hash, rotated_at = excluded.rotated_at`,
      [plan.installId, plan.tokenHash, plan.registeredAt],
    );
    let cols = emptyColumns();
    let batchRows = {
      ids: [] as string[],
      digests: [] as string[],
      responses: [] as string[],
      at: [] as number[],
    };
    let items = 0;
    let batches = 0;
    // One INSERT … SELECT FROM unnest per chunk: the same statement ingest runs, on 5000 rows.
    const flush = async () => {
      if (cols.keys.length > 0)
        await c.query(
          `INSERT INTO items (install_id, idempotency_key, kind, domain, consent, created_at, received_at, batch_id, json)
           SELECT $1, k, kind, d, c, ca, ra, b, j
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::text[])
             AS t(k, kind, d, c, ca, ra, b, j)`,
          [
            plan.installId,
            cols.keys,
            cols.kinds,
            cols.domains,
            cols.consents,
            cols.createdAt,
            cols.receivedAt,
            cols.batchIds,
            cols.json,
          ],
        );
      if (batchRows.ids.length > 0)
        await c.query(
          `INSERT INTO batches (install_id, batch_id, digest, response, received_at)
           SELECT $1, b, d, r, a FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]) AS t(b, d, r, a)`,
          [plan.installId, batchRows.ids, batchRows.digests, batchRows.responses, batchRows.at],
        );
      cols = emptyColumns();
      batchRows = { ids: [], digests: [], responses: [], at: [] };
    };
    for (const b of plan.batches) {
      for (const item of b.items) {
        cols.keys.push(item.idempotencyKey);
        cols.kinds.push(item.kind);
        cols.domains.push(item.domain);
        cols.consents.push(item.consent);
        cols.createdAt.push(item.createdAt);
        cols.receivedAt.push(b.at);
        cols.batchIds.push(b.batchId);
        cols.json.push(JSON.stringify(item));
      }
      batchRows.ids.push(b.batchId);
      batchRows.digests.push(batchDigest(b.items));
      batchRows.responses.push(JSON.stringify(answer(b.items)));
      batchRows.at.push(b.at);
      items += b.items.length;
      batches++;
      if (cols.keys.length >= CHUNK) await flush();
    }
    await flush();
    await c.query("UPDATE installs SET item_count = item_count + $2 WHERE install_id = $1", [
      plan.installId,
      items,
    ]);
    return { items, batches };
  });
}
