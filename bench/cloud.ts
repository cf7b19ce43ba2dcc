/**
 * The cloud service's ingest and export on its two stores: items/s and p50/p99 batch latency
 * with 1, 2 and 3 replicas (real processes) on one PostgreSQL against 1 on SQLite (the
 * baseline, measured in the same run), and raw-export rows/s, each at N items already stored.
 * Like for like: both engines durable (SQLite synchronous=FULL, PostgreSQL fsync and
 * synchronous_commit on), the same clients, batches and payloads; configurations interleaved
 * round by round.
 *
 *   npm run bench -- cloud [--sizes 10000,100000] [--clients 8] [--batches 40] [--batch 100]
 *                          [--replicas 1,2,3] [--rounds 1]
 * `--sizes 1000000` is the large option (its preload alone takes minutes).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { FeedbackItem } from "../common/feedback-protocol";
import { PostgresStore } from "../cloud/store/postgres-store";
import { SqliteStore } from "../cloud/store/sqlite-store";
import type { CloudStore } from "../cloud/store/store";
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

/** Stores `n` items straight through the store (not measured), under one install. */
async function preload(store: CloudStore, n: number): Promise<void> {
  const installId = randomUUID();
  await store.registerInstall(installId, `preload-${installId}`, Date.now());
  for (let done = 0; done < n; done += 1000) {
    const items = Array.from({ length: Math.min(1000, n - done) }, (_, i) =>
      item(`pre-${done + i}-${installId.slice(0, 8)}`, 1_700_000_000_000 + done + i),
    );
    await store.ingest({
      installId,
      batchId: `pre-${done}`,
      digest: `pre-${done}`,
      items,
      at: Date.now(),
      limits: { maxStoredItems: null },
      answer: ({ accepted, duplicates }) => ({ accepted, duplicates, rejected: [] }),
    });
  }
}

async function measure(
  cfg: Config,
  size: number,
  opts: { clients: number; batches: number; batch: number },
  cluster: PostgresCluster | null,
): Promise<Measured> {
  const dataDir = mkdtempSync(join(tmpdir(), "macaron-bench-cloud-"));
  let database = "sqlite";
  const replicas: Replica[] = [];
  try {
    if (cfg.engine === "postgres") {
      database = await cluster!.createDatabase();
      const store = await PostgresStore.open(database);
      await preload(store, size);
      await store.pool.query("VACUUM ANALYZE");
      await store.close();
    } else {
      const store = new SqliteStore(dataDir);
      await preload(store, size);
      store.db.exec("ANALYZE");
      await store.close();
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
  try {
    for (let round = 0; round < Number(values.rounds); round++)
      for (const size of sizes) {
        // Alternate the order each round so no configuration always runs first (warm caches).
        const order = round % 2 === 0 ? configs : [...configs].reverse();
        for (const cfg of order) {
          const m = await measure(cfg, size, opts, cluster);
          console.log(
            `${cfg.name} @ ${size}: ${Math.round(m.itemsPerS)} items/s, p50 ${m.p50Ms.toFixed(1)} ms`,
          );
          const key = `${cfg.name}@${size}`;
          results.set(key, [...(results.get(key) ?? []), m]);
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
  report("cloud", rows, { options: { sizes, ...opts, rounds: Number(values.rounds) } });
}
