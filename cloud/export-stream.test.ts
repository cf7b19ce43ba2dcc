/**
 * The service's dataset export (streamDataset) on both engines: the same lines and report as
 * the in-memory export (exportDataset) of the same snapshot, ingest going on meanwhile neither
 * blocked nor seen, and a dataset bigger than the heap exported in a small-heap process.
 */
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { FeedbackItem } from "../common/feedback-protocol";
import { makeItem } from "../testing/cloud/items";
import { atSignScan } from "../testing/cloud/prepare";
import { testDir } from "../testing/core/temp-dir";
import { exportDataset, streamDataset, type PrepareOptions } from "./export";
import { postgresSkipReason, startPostgres, type PostgresCluster } from "./testing/postgres";
import { PostgresStore } from "./store/postgres-store";
import { SqliteStore } from "./store/sqlite-store";
import type { CloudStore } from "./store/store";

const INSTALL = "00000000-0000-4000-8000-00000000ab01";
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let cluster: PostgresCluster | null = null;
const skip = postgresSkipReason();
beforeAll(async () => {
  if (!skip) cluster = await startPostgres();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

const engines: { name: string; open(): Promise<CloudStore>; skip: boolean }[] = [
  {
    name: "sqlite",
    skip: false,
    open() {
      const store = new SqliteStore(testDir("macaron-export-"));
      cleanups.push(() => store.close());
      return Promise.resolve(store);
    },
  },
  {
    name: "postgres",
    skip: skip !== null,
    async open() {
      const store = await PostgresStore.open(await cluster!.createDatabase());
      cleanups.push(() => store.close());
      return store;
    },
  },
];

let batch = 0;
async function ingest(store: CloudStore, items: FeedbackItem[]): Promise<void> {
  const r = await store.ingest({
    installId: INSTALL,
    batchId: `b-${++batch}`,
    digest: `d-${batch}`,
    items,
    at: 1_700_000_100_000 + batch,
    limits: { maxStoredItems: null },
    answer: ({ accepted, duplicates }) => ({ accepted, duplicates, rejected: [] }),
  });
  expect(r.kind).toBe("stored");
}

const QUESTIONS = ["Capital of France?", "capital of france", "How do I sort a list in Python?", "Hi"];
const ANSWERS = [
  "Paris.",
  "Use sorted(items) for a new list, or items.sort() to sort the list in place.",
  "Use sorted(items) for a new list, or items.sort() to sort that list in place.",
  "Hello!",
];

/** A mix over chat, base (domain null) and coding: ratings, corrections, regenerations, repeats. */
function mixedItems(n: number): FeedbackItem[] {
  return Array.from({ length: n }, (_, i) => {
    const q = QUESTIONS[i % QUESTIONS.length]!;
    const a = ANSWERS[(i * 7) % ANSWERS.length]!;
    const b = ANSWERS[(i * 3 + 1) % ANSWERS.length]!;
    const common = {
      createdAt: 1_700_000_000_000 + (i % 13) * 1000,
      domain: [null, "chat", "chat", "coding"][i % 4]!,
      prompt: [{ role: "user" as const, text: i % 5 === 0 ? q : `${q} (${i % 9})` }],
    };
    const key = `mix-${batch}-${i}`;
    if (i % 6 === 0)
      return makeItem(key, { ...common, kind: "regeneration", rating: null, rejected: a, chosen: b });
    if (i % 6 === 1)
      return makeItem(key, { ...common, kind: "correction", rating: null, response: a, correction: b });
    return makeItem(key, { ...common, rating: i % 3 === 0 ? "bad" : "good", response: a });
  });
}

async function streamed(store: CloudStore, domain: string, opts: PrepareOptions) {
  const out = await streamDataset(store, domain, opts);
  return { lines: [...out.lines(opts.split ?? "train")], report: out.report };
}

for (const engine of engines)
  describe.skipIf(engine.skip)(`dataset export on ${engine.name}`, () => {
    it("gives the in-memory export's lines and report for every domain, type and split", async () => {
      const store = await engine.open();
      await store.registerInstall(INSTALL, "hash", 0);
      await ingest(store, mixedItems(120));
      for (const domain of ["chat", "base", "coding"])
        for (const type of ["sft", "preference"] as const)
          for (const split of ["train", "heldout"] as const) {
            const opts = { type, split, scan: atSignScan, heldoutShare: 0.4 };
            const expected = await exportDataset(store, domain, opts);
            expect(await streamed(store, domain, opts)).toEqual({
              lines: expected.lines[split],
              report: expected.report,
            });
          }
    });

    it("gives the in-memory export's lines and report on generated stores", async () => {
      const itemArb = fc.record({
        kind: fc.constantFrom("rating" as const, "correction" as const, "regeneration" as const),
        rating: fc.constantFrom("good" as const, "bad" as const),
        domain: fc.constantFrom(null, "chat"),
        q: fc.constantFrom(...QUESTIONS),
        a: fc.constantFrom(...ANSWERS),
        b: fc.constantFrom(...ANSWERS),
        at: fc.nat(5),
      });
      await fc.assert(
        fc.asyncProperty(
          fc.array(itemArb, { maxLength: 30 }),
          fc.constantFrom("sft" as const, "preference" as const),
          fc.constantFrom("chat", "base"),
          async (specs, type, domain) => {
            const store = await engine.open();
            await store.registerInstall(INSTALL, "hash", 0);
            const items = specs.map((x, i) =>
              makeItem(`gen-${batch}-${i}`, {
                kind: x.kind,
                rating: x.kind === "rating" ? x.rating : null,
                domain: x.domain,
                createdAt: 1_700_000_000_000 + x.at,
                prompt: [{ role: "user", text: x.q }],
                response: x.kind === "regeneration" ? null : x.a,
                ...(x.kind === "correction" ? { correction: x.b } : {}),
                ...(x.kind === "regeneration" ? { rejected: x.a, chosen: x.b } : {}),
              }),
            );
            if (items.length > 0) await ingest(store, items);
            const opts = { type, scan: atSignScan, heldoutShare: 0.5 };
            const expected = await exportDataset(store, domain, opts);
            const out = await streamDataset(store, domain, opts);
            expect({ lines: [...out.lines("train")], report: out.report }).toEqual({
              lines: expected.lines.train,
              report: expected.report,
            });
            for (const c of cleanups.splice(0).reverse()) await c();
          },
        ),
        { numRuns: 15 },
      );
    }, 60_000);

    it("exports the snapshot it started on while ingest goes on, and leaves no scratch file", async () => {
      const store = await engine.open();
      await store.registerInstall(INSTALL, "hash", 0);
      await ingest(store, mixedItems(3000));
      const opts = { type: "sft" as const, scan: atSignScan };
      const before = await exportDataset(store, "chat", opts);
      const scratch = testDir("macaron-scratch-");
      let done = false;
      const exporting = streamDataset(store, "chat", opts, scratch).finally(() => (done = true));
      // Batches stored while the export reads (each answered before the export finished).
      let during = 0;
      // A turn of the event loop between batches, as requests arrive (SQLite's ingest is
      // synchronous: back to back, it would never let the export's pages run); bounded.
      for (let i = 0; i < 2000 && !done; i++) {
        await ingest(store, mixedItems(20));
        if (!done) during++;
        await new Promise((r) => setImmediate(r));
      }
      const out = await exporting;
      expect(during).toBeGreaterThan(0);
      expect([...out.lines("train")]).toEqual(before.lines.train);
      expect(out.report).toEqual(before.report);
      expect(readdirSync(scratch)).toEqual([]);
      // The batches did land in the domain: a new export sees them.
      expect((await exportDataset(store, "chat", opts)).report.items).toBeGreaterThan(before.report.items);
    }, 60_000);
  });

describe("dataset export in bounded memory", () => {
  // 50k items: the in-memory export of them needs well over the 64 MB of heap (it dies within
  // seconds); the streamed one finishes in about 25 s here.
  const N = 50_000;
  const HEAP_MB = 64;
  const run = (mode: "stream" | "memory") => {
    const dir = testDir("macaron-export-mem-");
    return spawnSync(
      process.execPath,
      [
        `--max-old-space-size=${HEAP_MB}`,
        "--import",
        "tsx",
        "cloud/testing/export-memory.ts",
        mode,
        String(N),
        dir,
      ],
      { encoding: "utf8", timeout: 170_000 },
    );
  };

  it("exports more items than the heap holds; the in-memory export runs out of heap there", () => {
    const streamed = run("stream");
    expect(streamed.status, streamed.stderr).toBe(0);
    const result = JSON.parse(streamed.stdout.trim().split("\n").pop()!) as {
      items: number;
      lines: number;
      dropped: { duplicate: number; nearDuplicate: number };
    };
    // Every 20th item is a near-duplicate of a line, every 100th (the other 50th) a repeat of one
    // (export-memory.ts).
    expect(result).toMatchObject({ items: N, dropped: { duplicate: N / 100, nearDuplicate: N / 20 } });
    expect(result.lines).toBeGreaterThan(N * 0.8);
    const inMemory = run("memory");
    expect(inMemory.status).not.toBe(0);
    expect(inMemory.stderr).toMatch(/heap out of memory/);
  }, 180_000);
});
