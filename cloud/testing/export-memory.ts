/**
 * One dataset export in this process, for the bounded-memory test and the export bench: seeds
 * a SQLite store in `dir` with `n` chat items (good ratings with text; every 20th a
 * near-duplicate of an earlier line, every 50th a repeat of one) with the bulk seed (one
 * transaction of what ingest would store), then exports with `mode` ("stream": the service's bounded-memory export;
 * "memory": the in-memory exportDataset it replaced) and prints one JSON line of counts, time
 * and peak RSS. Run it under a small --max-old-space-size: the stream export must finish, the
 * in-memory one runs out of heap.
 *   node --max-old-space-size=64 --import tsx cloud/testing/export-memory.ts stream 100000 DIR
 */
import { resourceUsage } from "node:process";
import { performance } from "node:perf_hooks";
import type { FeedbackItem } from "../../common/feedback-protocol";
import { makeItem } from "../../testing/cloud/items";
import { exportDataset, streamDataset } from "../export";
import { seedStore, type SeedBatch } from "../store/seed";
import { SqliteStore } from "../store/sqlite-store";

const INSTALL = "00000000-0000-4000-8000-00000000e0e0";
const WORDS = (
  "list dict file thread regex date socket test loop class module package import string bytes " +
  "number float integer tuple set queue stack heap tree graph sort search merge split join map " +
  "filter reduce iterate yield await async lock event signal process pipe buffer stream parse " +
  "format print read write open close seek flush encode decode hash compare copy move delete"
).split(" ");

/** `count` words picked by a small LCG from `seed`: distinct texts, not near-duplicates. */
function words(seed: number, count: number): string {
  let x = (seed * 2654435761) >>> 0;
  const out: string[] = [];
  for (let k = 0; k < count; k++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out.push(WORDS[x % WORDS.length]!);
  }
  return out.join(" ");
}

/** A 16-hex-digit id of n. */
const id = (n: number) =>
  (
    (Math.imul(n, 2246822519) >>> 0).toString(16) + (Math.imul(n ^ 0x5bd1e995, 3266489917) >>> 0).toString(16)
  ).padStart(16, "0");

/** The i-th seeded item: distinct lines mostly, some exact and near repeats. */
function seededItem(i: number): FeedbackItem {
  const j = i % 50 === 49 ? i - 7 : i; // an exact repeat of an earlier line
  const near = i % 20 === 19 ? " Thanks!" : ""; // a near-duplicate of an earlier line
  const q = near ? j - 3 : j;
  return makeItem(`seed-${String(i).padStart(8, "0")}`, {
    createdAt: 1_700_000_000_000 + i,
    // Ids as real questions carry names and numbers: rare shingles, so prefixes are selective.
    prompt: [{ role: "user", text: `How do I ${words(q, 6)} for ticket ${id(q)} in Python?` }],
    response: `You ${words(q + 1_000_000_007, 10)}, see ${id(q + 1)}.${near}`,
  });
}

/** `n` seeded items in batches of 1000, made as they are consumed (memory stays flat). */
function* batches(n: number): Generator<SeedBatch> {
  for (let done = 0; done < n; done += 1000)
    yield {
      batchId: `seed-${done}`,
      at: 1_700_000_000_000 + done,
      items: Array.from({ length: Math.min(1000, n - done) }, (_, k) => seededItem(done + k)),
    };
}

async function main(): Promise<void> {
  const [mode, count, dir] = process.argv.slice(2);
  if ((mode !== "stream" && mode !== "memory") || !count || !dir)
    throw new Error("usage: export-memory.ts stream|memory N DIR");
  const store = new SqliteStore(dir);
  await seedStore(store, {
    installId: INSTALL,
    tokenHash: "seed",
    registeredAt: 0,
    batches: batches(Number(count)),
  });
  const seeded = resourceUsage().maxRSS;
  const opts = { type: "sft" as const, scan: () => ({ findings: [] }) };
  const t0 = performance.now();
  let lines = 0;
  let report;
  if (mode === "stream") {
    const exported = await streamDataset(store, "chat", opts, dir);
    for (const _ of exported.lines("train")) lines++;
    report = exported.report;
  } else {
    const out = await exportDataset(store, "chat", opts);
    lines = out.lines.train.length;
    report = out.report;
  }
  const ms = performance.now() - t0;
  await store.close();
  console.log(
    JSON.stringify({
      mode,
      items: report.items,
      lines,
      splits: report.splits,
      dropped: report.dropped,
      ms: Math.round(ms),
      itemsPerSecond: Math.round(report.items / (ms / 1000)),
      maxRssMiB: Math.round(resourceUsage().maxRSS / 1024),
      rssAfterSeedMiB: Math.round(seeded / 1024),
    }),
  );
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) void main();
