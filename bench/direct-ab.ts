/**
 * Two node-llama-cpp processes (bench/serve-direct.ts: the engine's way of generating) that
 * differ in one setting, on the same model, prompt and sampling, interleaved round by round,
 * with each load order (A's model loaded first, then B's; then the other way round), after an
 * uncounted warm-up. Generation tok/s and TTFT of a warm sequence; ratios B/A per round, then
 * their median.
 *
 *   npm run bench -- direct-ab [--compare hugepages|threads|affinity|mmap] [--size small|bench] [--runs N] [--tokens N]
 *
 * - hugepages: A without glibc.malloc.hugetlb (the engine's default), B with it (engine-env.ts);
 * - threads: A with 1 compute thread, B with 2 (both with huge pages);
 * - affinity: A with its threads free to move between cores, B kept on the compute threads'
 *   cores (the engine's default, native/engine/affinity.ts). Alone on the machine the two are
 *   expected to be close: what pinning saves is the moves that other processes waking up cause
 *   (the server the engine streams to), which `bench serve` measures;
 * - mmap: A with the weights mapped from the file, B with them read into memory (the engine's
 *   default on the CPU for a model that fits easily, native/engine/llama-backend.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ChatTurn } from "../common/engine-protocol";
import { engineEnv } from "../electron/core/engine/engine-env";
import { engineThreads } from "../native/engine/llama-backend";
import { writeFixtures } from "../native/gguf/fixtures";
import type { TinyModelSize } from "../native/gguf/tiny-model";
import { startDirect, type DirectProcess, type EngineSettings, type Run } from "./serve-direct";
import { median, percentile, report } from "./stats";

const HISTORY: ChatTurn[] = [{ role: "user", text: "Write a short poem about the sea." }];

/**
 * The engine's settings for these models on CPU as the recorded runs had them (bench/README.md):
 * 4 sequences. The engine now grows to up to 8, but serve-direct creates them all at load, so 8
 * would double the KV memory of every run here and change what the huge-pages rows compare.
 */
const ENGINE_DEFAULTS: EngineSettings = {
  contextSize: 8192,
  sequences: 4,
  flashAttention: "off",
  kvCacheType: "f16",
  batchSize: 512,
  threads: engineThreads(),
  // These models' weights are read into memory on the CPU (llama-backend.ts, weightsInMemory).
  mmap: false,
};

interface Side {
  name: string;
  settings: EngineSettings;
  env: NodeJS.ProcessEnv;
}

function sides(compare: string): [Side, Side] {
  // Without: no tunable from this process's own environment either.
  const { GLIBC_TUNABLES: _ignored, ...bare } = process.env;
  if (compare === "hugepages")
    return [
      { name: "4 KiB pages (default)", settings: ENGINE_DEFAULTS, env: engineEnv(bare) },
      {
        name: "huge pages",
        settings: ENGINE_DEFAULTS,
        env: engineEnv({ ...bare, MACARON_ENGINE_HUGEPAGES: "1" }),
      },
    ];
  if (compare === "threads")
    return [
      { name: "1 thread", settings: { ...ENGINE_DEFAULTS, threads: 1 }, env: engineEnv(bare) },
      { name: "2 threads", settings: { ...ENGINE_DEFAULTS, threads: 2 }, env: engineEnv(bare) },
    ];
  if (compare === "affinity")
    return [
      {
        name: "unpinned",
        settings: ENGINE_DEFAULTS,
        env: { ...engineEnv(bare), MACARON_ENGINE_AFFINITY: "0" },
      },
      { name: "pinned (default)", settings: ENGINE_DEFAULTS, env: engineEnv(bare) },
    ];
  if (compare === "mmap")
    return [
      { name: "weights mapped", settings: { ...ENGINE_DEFAULTS, mmap: true }, env: engineEnv(bare) },
      {
        name: "weights read into memory (CPU default)",
        settings: { ...ENGINE_DEFAULTS, mmap: false },
        env: engineEnv(bare),
      },
    ];
  throw new Error(`--compare ${compare}: expected hugepages, threads, affinity or mmap`);
}

const rate = (r: Run) => r.tokens / (r.ms / 1000);

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      compare: { type: "string", default: "hugepages" },
      size: { type: "string", default: "bench" },
      runs: { type: "string", default: "4" },
      tokens: { type: "string", default: "64" },
    },
    strict: true,
  });
  const [a, b] = sides(values.compare);
  const runs = Number(values.runs);
  const tokens = Number(values.tokens);
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-fixtures-"));
  const got = { a: [] as Run[], b: [] as Run[] };
  const ratios: Record<string, number[]> = {};
  try {
    const { basePath: model } = await writeFixtures(dir, { size: values.size as TinyModelSize });
    for (const [label, first, second] of [
      ["A loaded first", a, b],
      ["B loaded first", b, a],
    ] as const) {
      const procs: DirectProcess[] = [];
      try {
        for (const side of [first, second])
          procs.push(await startDirect(model, side.settings, HISTORY, side.env));
        const [pa, pb] = first === a ? procs : [procs[1]!, procs[0]!];
        await pa!.run(tokens);
        await pb!.run(tokens);
        const round: number[] = [];
        for (let i = 0; i < runs; i++) {
          // Turned each round: neither side always runs second.
          const [ra, rb] =
            i % 2 === 0
              ? [await pa!.run(tokens), await pb!.run(tokens)]
              : await (async () => {
                  const rb = await pb!.run(tokens);
                  return [await pa!.run(tokens), rb] as const;
                })();
          got.a.push(ra);
          got.b.push(rb);
          round.push(rate(rb) / rate(ra));
        }
        ratios[label] = round;
      } finally {
        for (const p of procs) await p.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const all = Object.values(ratios).flat();
  report(
    `direct-ab-${values.compare}-${values.size}`,
    [
      {
        name: `A: ${a.name} (tok/s)`,
        p50: median(got.a.map(rate)),
        p95: percentile(got.a.map(rate), 95),
        ratio: 1,
      },
      {
        name: `B: ${b.name} (tok/s)`,
        p50: median(got.b.map(rate)),
        p95: percentile(got.b.map(rate), 95),
        ratio: median(all),
      },
      ...Object.entries(ratios).map(([label, r]) => ({
        name: `B/A, ${label}`,
        p50: median(r),
        p95: percentile(r, 95),
      })),
      {
        name: `A TTFT (ms)`,
        p50: median(got.a.map((r) => r.ttftMs)),
        p95: percentile(
          got.a.map((r) => r.ttftMs),
          95,
        ),
      },
      {
        name: `B TTFT (ms)`,
        p50: median(got.b.map((r) => r.ttftMs)),
        p95: percentile(
          got.b.map((r) => r.ttftMs),
          95,
        ),
      },
    ],
    {
      compare: values.compare,
      size: values.size,
      runs,
      tokens,
      sides: [a, b].map((s) => ({
        name: s.name,
        settings: s.settings,
        tunables: s.env.GLIBC_TUNABLES ?? null,
      })),
      ratios,
    },
  );
}
