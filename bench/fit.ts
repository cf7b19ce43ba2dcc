/**
 * The fit estimate against measured memory: for each generated model and context, a fresh
 * engine process estimates the load (the `fit` request: node-llama-cpp's GgufInsights, which
 * simulates llama.cpp's allocations), then loads the model with that context, answers a few
 * tokens (so the memory-mapped weights are read in) and reports its resident memory growth
 * over the moment before the load (/proc/<pid>/status: VmRSS, split into RssAnon and
 * RssFile, the latter the mapped weights).
 *
 *   npm run bench -- fit                         (tiny, small and bench models)
 *   MACARON_BENCH_FIT=bench npm run bench -- fit (one size)
 */
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FitResult, KvCacheType, LoadedModel } from "../common/engine-protocol";
import { writeFixtures } from "../native/gguf/fixtures";
import { isTinyModelSize, type TinyModelSize } from "../native/gguf/tiny-model";
import { spawnNodeEngine } from "../electron/core/engine/spawn-node";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { report, type BenchRow } from "./stats";

const ENV = { ...process.env, MACARON_ENGINE_THREADS: "1" };
const MB = 1024 * 1024;

interface Config {
  size: TinyModelSize;
  contextSize: number;
  sequences: number;
  kvCacheType?: KvCacheType;
  flashAttention?: "on" | "off";
}

const CONFIGS: Config[] = [
  { size: "tiny", contextSize: 4096, sequences: 4 },
  { size: "small", contextSize: 1024, sequences: 4 },
  { size: "small", contextSize: 4096, sequences: 4 },
  { size: "bench", contextSize: 2048, sequences: 4 },
  { size: "bench", contextSize: 8192, sequences: 4 },
  { size: "bench", contextSize: 12288, sequences: 4 },
  { size: "bench", contextSize: 8192, sequences: 1 },
  { size: "bench", contextSize: 8192, sequences: 4, kvCacheType: "q8_0", flashAttention: "on" },
];

/** Resident memory of a process, bytes: total, anonymous, file-backed (mapped weights). */
function rss(pid: number): { total: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  return { total: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
}

async function measure(path: string, config: Config): Promise<BenchRow> {
  const engine = new EngineSupervisor(spawnNodeEngine({ env: ENV }));
  try {
    const { contextSize, sequences, kvCacheType, flashAttention } = config;
    // The fit in its own process first: what a user sees before loading.
    const fit: FitResult = await engine.fit(
      { path },
      { contextSize, sequences, kvCacheType, flashAttention },
    );
    await engine.close();
    const fresh = new EngineSupervisor(spawnNodeEngine({ env: ENV }), { sequences });
    try {
      await fresh.info(); // llama.cpp loaded: the baseline includes the library
      const pid = fresh.pid!;
      const before = rss(pid);
      const loaded: LoadedModel = await fresh.load(path, undefined, {
        contextSize,
        kvCacheType,
        flashAttention,
      });
      await fresh.generate(
        [{ role: "user", text: "Hello there, how are you?" }],
        { temperature: 0, maxTokens: 8 },
        () => {},
      );
      const after = rss(pid);
      const measured = after.total - before.total;
      const estimate = fit.ramBytes;
      return {
        name: `${config.size} ctx ${contextSize}×${sequences}${kvCacheType ? ` ${kvCacheType}` : ""}${flashAttention === "on" ? " fa" : ""}`,
        contextSize: loaded.contextSize,
        estimateMiB: estimate / MB,
        measuredMiB: measured / MB,
        anonMiB: (after.anon - before.anon) / MB,
        weightsMappedMiB: (after.file - before.file) / MB,
        errorPct: ((estimate - measured) / measured) * 100,
      };
    } finally {
      await fresh.close();
    }
  } finally {
    await engine.close();
  }
}

export async function benchFit(): Promise<void> {
  const only = process.env.MACARON_BENCH_FIT;
  const sizes = new Set<TinyModelSize>(
    only && isTinyModelSize(only) ? [only] : (["tiny", "small", "bench"] as TinyModelSize[]),
  );
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-fit-"));
  try {
    const paths = new Map<TinyModelSize, string>();
    for (const size of sizes) paths.set(size, (await writeFixtures(dir, { size })).basePath);
    const rows: BenchRow[] = [];
    for (const config of CONFIGS.filter((c) => sizes.has(c.size))) {
      const row = await measure(paths.get(config.size)!, config);
      console.log(row);
      rows.push(row);
    }
    report("fit", rows, {
      note: "estimate = FitEstimate.ramBytes (weights + KV + compute buffers); measured = engine VmRSS after load + 8 tokens minus before the load",
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
