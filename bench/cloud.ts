/**
 * The cloud service's ingest and export on its two stores: items/s and p50/p99 batch latency
 * with 1, 2 and 3 replicas (real processes) on one PostgreSQL against 1 on SQLite (the
 * baseline, measured in the same run), and raw-export rows/s, each at N items already stored.
 * Like for like: both engines durable (SQLite synchronous=FULL, PostgreSQL fsync and
 * synchronous_commit on), the same clients, batches and payloads; configurations interleaved
 * round by round. The N stored items are bulk-seeded once per size and engine
 * (cloud/store/seed.ts: the rows ingest would leave, ~1M in 16 s on SQLite, ~65 s on
 * PostgreSQL here) and every measurement runs on a fresh copy of that seed.
 *
 *   npm run bench -- cloud [--sizes 10000,100000] [--clients 8] [--batches 40] [--batch 100]
 *                          [--replicas 1,2,3] [--rounds 1]
 * `--sizes 1000000` is the large option (the export of 1M rows dominates each configuration).
 */
import { randomUUID } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { FeedbackItem } from "../common/feedback-protocol";
import pg from "pg";
import { PostgresStore } from "../cloud/store/postgres-store";
import { seedStore, type SeedBatch } from "../cloud/store/seed";
import { CLOUD_DB_FILE, SqliteStore } from "../cloud/store/sqlite-store";
import { postgresSkipReason, startPostgres, type PostgresCluster } from "../cloud/testing/postgres";
import { startReplica, type Replica } from "../cloud/testing/replica";
import { encodeBatch, FeedbackEndpoint } from "../electron/core/feedback/sync/transport";
import { makeItem, registerInstall } from "../testing/cloud/items";
import { median, percentile, report, type BenchRow } from "./stats";

const ADMIN = "admin-key-1234";

interface Config {
  name: string;
  engine: "sqlite" | "postgres";
  replicas: number;
}

interface Measured {
  itemsPerS: number;
  p50Ms: number;
  p99Ms: number;
  exportRowsPerS: number;
  exportRows: number;
}

const item = (key: string, at: number): FeedbackItem => makeItem(key, { createdAt: at });

/**
 * The items already stored, as 1000-item batches of one install, generated lazily (1M items
 * never sit in memory at once); prints progress every 100k.
 */
function* preloadBatches(n: number, tag: string): Generator<SeedBatch> {
  const t0 = performance.now();
  for (let done = 0; done < n; done += 1000) {
    if (done > 0 && done % 100_000 === 0)
      console.log(`  seeded ${done}/${n} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    yield {
      batchId: `pre-${done}`,
      at: 1_700_000_000_000 + done,
      items: Array.from({ length: Math.min(1000, n - done) }, (_, i) =>
        item(`pre-${done + i}-${tag}`, 1_700_000_000_000 + done + i),
      ),
    };
  }
}

/**
 * One seeded store per engine and size, copied for each configuration: every measurement
 * starts from a byte-identical store of N items (none sees an earlier one's 32k ingested items),
 * without seeding N items four times. SQLite: the checkpointed file is copied; PostgreSQL:
 * CREATE DATABASE … TEMPLATE with FILE_COPY (the planner statistics and visibility map of the
 * VACUUM ANALYZE come along). Both copies are fresh files in the OS cache.
 */
interface Seeded {
  size: number;
  sqliteDir: string;
  postgresDb: string | null;
  seedS: { sqlite: number; postgres: number | null };
}

async function seedSize(size: number, cluster: PostgresCluster | null): Promise<Seeded> {
  const tag = randomUUID().slice(0, 8);
  const plan = () => ({
    installId: randomUUID(),
    tokenHash: `preload-${randomUUID()}`,
    registeredAt: 1_700_000_000_000,
    batches: preloadBatches(size, tag),
  });
  const sqliteDir = mkdtempSync(join(tmpdir(), "macaron-bench-cloud-seed-"));
  console.log(`seeding sqlite with ${size} items`);
  let t = performance.now();
  const lite = new SqliteStore(sqliteDir);
  await seedStore(lite, plan());
  lite.db.exec("ANALYZE");
  // Everything in the main file: the copy needs no -wal beside it.
  lite.db.pragma("wal_checkpoint(TRUNCATE)");
  await lite.close();
  const sqliteS = (performance.now() - t) / 1000;
  console.log(`  sqlite seeded in ${sqliteS.toFixed(1)} s`);
  if (!cluster) return { size, sqliteDir, postgresDb: null, seedS: { sqlite: sqliteS, postgres: null } };
  const name = `seed_${size}_${tag}`;
  console.log(`seeding postgres with ${size} items`);
  t = performance.now();
  const pgStore = await PostgresStore.open(await cluster.createDatabase(name));
  await seedStore(pgStore, plan());
  await pgStore.pool.query("VACUUM ANALYZE");
  // A template must have no connection open when it is copied.
  await pgStore.close();
  const postgresS = (performance.now() - t) / 1000;
  console.log(`  postgres seeded in ${postgresS.toFixed(1)} s`);
  return { size, sqliteDir, postgresDb: name, seedS: { sqlite: sqliteS, postgres: postgresS } };
}

async function adminQuery(cluster: PostgresCluster, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: cluster.url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function dropSeeded(seeded: Seeded, cluster: PostgresCluster | null): Promise<void> {
  rmSync(seeded.sqliteDir, { recursive: true, force: true });
  if (cluster && seeded.postgresDb) await adminQuery(cluster, `DROP DATABASE "${seeded.postgresDb}"`);
}

let copies = 0;

async function measure(
  cfg: Config,
  seeded: Seeded,
  opts: { clients: number; batches: number; batch: number },
  cluster: PostgresCluster | null,
): Promise<Measured> {
  const size = seeded.size;
  const dataDir = mkdtempSync(join(tmpdir(), "macaron-bench-cloud-"));
  let database = "sqlite";
  let copy: string | null = null;
  const replicas: Replica[] = [];
  try {
    if (cfg.engine === "postgres") {
      copy = `run_${process.pid}_${++copies}`;
      await adminQuery(
        cluster!,
        `CREATE DATABASE "${copy}" TEMPLATE "${seeded.postgresDb!}" STRATEGY FILE_COPY`,
      );
      database = cluster!.url.replace(/\/postgres$/, `/${copy}`);
    } else {
      copyFileSync(join(seeded.sqliteDir, CLOUD_DB_FILE), join(dataDir, CLOUD_DB_FILE));
    }
    const extraArgs = ["--batches-per-minute", "100000000", "--max-stored-items", "100000000"];
    replicas.push(
      ...(await Promise.all(
        Array.from({ length: cfg.replicas }, () =>
          startReplica({ database, dataDir, adminKey: ADMIN, extraArgs }),
        ),
      )),
    );
    const installs = await Promise.all(
      Array.from({ length: opts.clients }, (_, i) => registerInstall(replicas[i % replicas.length]!.url)),
    );
    // Bodies built before the clock starts: the client's gzip is not the service's time.
    const bodies = await Promise.all(
      installs.map((ins, c) =>
        Promise.all(
          Array.from({ length: opts.batches }, (_, b) =>
            encodeBatch(
              ins.installId,
              Array.from({ length: opts.batch }, (_, k) =>
                item(`c${c}-b${b}-k${k}-bench`, 1_800_000_000_000 + b),
              ),
            ),
          ),
        ),
      ),
    );
    const latencies: number[] = [];
    const signal = new AbortController().signal;
    const t0 = performance.now();
    await Promise.all(
      installs.map(async (ins, c) => {
        for (let b = 0; b < opts.batches; b++) {
          // Round-robin over the replicas, as a load balancer would.
          const endpoint = new FeedbackEndpoint({
            endpoint: replicas[(c + b) % replicas.length]!.url,
            fetch,
            now: Date.now,
            requestTimeoutMs: 60_000,
          });
          const s = performance.now();
          const r = await endpoint.postBatch(ins.token, bodies[c]![b]!, signal);
          latencies.push(performance.now() - s);
          if (r.kind !== "ok" || r.value.accepted.length !== opts.batch)
            throw new Error(`${cfg.name}: batch not stored: ${JSON.stringify(r)}`);
        }
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const e0 = performance.now();
    const res = await fetch(`${replicas[0]!.url}/v1/export/raw/chat.jsonl`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    let rows = 0;
    const decoder = new TextDecoder();
    for await (const chunk of res.body!)
      for (const ch of decoder.decode(chunk as Uint8Array, { stream: true })) if (ch === "\n") rows++;
    const exportS = (performance.now() - e0) / 1000;
    const expected = size + opts.clients * opts.batches * opts.batch;
    if (rows !== expected) throw new Error(`${cfg.name}: exported ${rows} rows, expected ${expected}`);
    return {
      itemsPerS: (opts.clients * opts.batches * opts.batch) / wall,
      p50Ms: median(latencies),
      p99Ms: percentile(latencies, 99),
      exportRowsPerS: rows / exportS,
      exportRows: rows,
    };
  } finally {
    await Promise.all(replicas.map((r) => r.stop("SIGTERM")));
    rmSync(dataDir, { recursive: true, force: true });
    if (copy) await adminQuery(cluster!, `DROP DATABASE "${copy}"`);
  }
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "10000,100000" },
      clients: { type: "string", default: "8" },
      batches: { type: "string", default: "40" },
      batch: { type: "string", default: "100" },
      replicas: { type: "string", default: "1,2,3" },
      rounds: { type: "string", default: "1" },
    },
    strict: false,
  });
  const sizes = String(values.sizes).split(",").map(Number);
  const opts = {
    clients: Number(values.clients),
    batches: Number(values.batches),
    batch: Number(values.batch),
  };
  const skip = postgresSkipReason();
  const configs: Config[] = [
    { name: "sqlite x1", engine: "sqlite", replicas: 1 },
    ...(skip
      ? []
      : String(values.replicas)
          .split(",")
          .map((n): Config => ({ name: `postgres x${n}`, engine: "postgres", replicas: Number(n) }))),
  ];
  if (skip) console.warn(`PostgreSQL configurations skipped: ${skip}`);
  const cluster = skip ? null : await startPostgres({ durable: true });
  const results = new Map<string, Measured[]>();
  const seeds: Seeded["seedS"][] = [];
  const t0 = performance.now();
  const elapsed = () => `${((performance.now() - t0) / 60_000).toFixed(1)} min`;
  try {
    // Seeded once per size (the slow part at 1M), then every round copies it.
    for (const size of sizes) {
      const seeded = await seedSize(size, cluster);
      seeds.push(seeded.seedS);
      try {
        for (let round = 0; round < Number(values.rounds); round++) {
          // Alternate the order each round so no configuration always runs first (warm caches).
          const order = round % 2 === 0 ? configs : [...configs].reverse();
          for (const cfg of order) {
            const m = await measure(cfg, seeded, opts, cluster);
            console.log(
              `${cfg.name} @ ${size} (round ${round + 1}, ${elapsed()}): ${Math.round(m.itemsPerS)} items/s, ` +
                `p50 ${m.p50Ms.toFixed(1)} ms, p99 ${m.p99Ms.toFixed(1)} ms, export ${Math.round(m.exportRowsPerS)} rows/s`,
            );
            const key = `${cfg.name}@${size}`;
            results.set(key, [...(results.get(key) ?? []), m]);
          }
        }
      } finally {
        await dropSeeded(seeded, cluster);
      }
    }
  } finally {
    await cluster?.stop();
  }
  const rows: BenchRow[] = [];
  for (const size of sizes) {
    const base = results.get(`sqlite x1@${size}`)!;
    const baseItems = median(base.map((m) => m.itemsPerS));
    const baseExport = median(base.map((m) => m.exportRowsPerS));
    for (const cfg of configs) {
      const ms = results.get(`${cfg.name}@${size}`)!;
      const itemsPerS = median(ms.map((m) => m.itemsPerS));
      const exportRowsPerS = median(ms.map((m) => m.exportRowsPerS));
      rows.push({
        name: `${cfg.name} @ ${size} stored`,
        "ingest items/s": itemsPerS,
        "vs sqlite x1": itemsPerS / baseItems,
        "p50 batch ms": median(ms.map((m) => m.p50Ms)),
        "p99 batch ms": median(ms.map((m) => m.p99Ms)),
        "export rows/s": exportRowsPerS,
        "export vs sqlite": exportRowsPerS / baseExport,
      });
    }
  }
  report("cloud", rows, {
    options: { sizes, ...opts, rounds: Number(values.rounds) },
    // Seconds to seed each size (seed + ANALYZE/VACUUM ANALYZE), not part of any measurement.
    seedSeconds: Object.fromEntries(sizes.map((n, i) => [n, seeds[i]])),
    minutes: (performance.now() - t0) / 60_000,
  });
}
