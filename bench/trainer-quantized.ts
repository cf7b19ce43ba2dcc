/**
 * The trainer on an F16 base against the same base in Q4_K (issue 31 item 2): LoRA training
 * tokens/s and the trainer process's peak RSS, interleaved runs (F16, Q4_K, F16, ...), one
 * torch thread each.
 *
 *   npx tsx bench/trainer-quantized.ts [--size bench|small] [--runs 3] [--steps 4] [--micro-batch-size 1]
 *
 * The base is the generated demo base of that size (`bench`: 768 wide, 12 layers, ~99M
 * parameters, F16); the Q4_K file has every matrix in Q4_K (testing/cloud/trainer/
 * quantize_fixture.py), norms F32. An F16 base is dequantized to F32 on load (the trainer
 * computes in F32); a Q4_K base stays in blocks and each matrix is dequantized in the forward and
 * backward passes. Peak RSS is the process's ru_maxrss: it counts the memory-mapped GGUF pages
 * the load touched as well as the weights held, and the activations of one micro-batch (8
 * examples a step, 1 per forward pass by default, so the weights dominate). Writes
 * bench/results/trainer-quantized.json.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { isTinyModelSize, tinyModelSpec, type TinyModelSize } from "../native/gguf/tiny-model";
import { writeGguf } from "../native/gguf/writer";
import { countingExamples, writeJsonl } from "../testing/cloud/trainer/datasets";
import { PYTHON, TRAINER_ROOT, trainerEnv } from "../testing/cloud/trainer/trainer-process";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "bench" },
    runs: { type: "string", default: "3" },
    steps: { type: "string", default: "4" },
    "micro-batch-size": { type: "string", default: "1" },
  },
});
const sizeArg = values.size ?? "bench";
if (!isTinyModelSize(sizeArg)) throw new Error(`--size: one of tiny, small, bench`);
const size: TinyModelSize = sizeArg;
const runs = Number(values.runs);
const steps = Number(values.steps);
const microBatch = values["micro-batch-size"] ?? "1";
const MB = 1024 * 1024;

// Runs `python -m macaron_trainer ARGS` and prints ru_maxrss (KiB on Linux) to stderr at exit.
const WITH_PEAK_RSS = [
  "import resource, runpy, sys",
  "sys.argv = ['macaron_trainer'] + sys.argv[1:]",
  "try:",
  "    runpy.run_module('macaron_trainer', run_name='__main__')",
  "finally:",
  "    sys.stderr.write('PEAK_RSS_KB %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
].join("\n");

interface Run {
  readonly type: string;
  readonly tokensPerSecond: number;
  readonly peakRssMiB: number;
  readonly seconds: number;
  readonly heldoutAfter: number;
}

function run(args: readonly string[]): Promise<{ code: number | null; stderr: string; seconds: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ["-c", WITH_PEAK_RSS, ...args], {
      env: trainerEnv(),
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr, seconds: (performance.now() - started) / 1000 }));
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-trainer-quantized-"));
  try {
    const f16 = join(dir, `${size}-f16.gguf`);
    const spec = tinyModelSpec(size);
    await writeGguf(f16, {
      ...spec,
      tensors: spec.tensors.map((t) => ({ ...t, type: t.dims.length === 1 ? "F32" : "F16" })),
    });
    const q4k = join(dir, `${size}-q4_k.gguf`);
    const quantized = spawnSync(
      PYTHON,
      [join(TRAINER_ROOT, "../../testing/cloud/trainer/quantize_fixture.py"), f16, q4k, "Q4_K"],
      { env: trainerEnv(), encoding: "utf8" },
    );
    if (quantized.status !== 0) throw new Error(`quantize_fixture failed: ${quantized.stderr}`);
    const examples = countingExamples(40);
    const data = await writeJsonl(join(dir, "train.jsonl"), examples.slice(0, 32));
    const heldout = await writeJsonl(join(dir, "heldout.jsonl"), examples.slice(32));
    const bases = { F16: f16, Q4_K: q4k };
    console.log(
      `base ${size}: F16 file ${(statSync(f16).size / MB).toFixed(1)} MiB, Q4_K file ${(statSync(q4k).size / MB).toFixed(1)} MiB`,
    );
    const rows: Run[] = [];
    for (let i = 0; i < runs; i++) {
      for (const [type, base] of Object.entries(bases)) {
        const out = join(dir, `${type}-${i}.gguf`);
        const report = join(dir, `${type}-${i}.json`);
        const r = await run([
          ...["train", "--base", base, "--data", data, "--heldout", heldout],
          ...["--out", out, "--report", report, "--checkpoint-dir", join(dir, `ckpt-${type}-${i}`)],
          ...["--steps", String(steps), "--batch-size", "8", "--micro-batch-size", microBatch],
          ...["--rank", "8", "--threads", "1"],
        ]);
        const peak = /PEAK_RSS_KB (\d+)/.exec(r.stderr);
        if (r.code !== 0 || !peak) throw new Error(`${type} run ${i} failed:\n${r.stderr}`);
        const rep = JSON.parse(readFileSync(report, "utf8")) as {
          tokensPerSecond: number;
          heldout: { lossAfter: number };
        };
        const row: Run = {
          type,
          tokensPerSecond: rep.tokensPerSecond,
          peakRssMiB: Number(peak[1]) / 1024,
          seconds: r.seconds,
          heldoutAfter: rep.heldout.lossAfter,
        };
        rows.push(row);
        console.log(
          `run ${i + 1} ${type}: ${row.tokensPerSecond.toFixed(1)} tokens/s, peak RSS ${row.peakRssMiB.toFixed(0)} MiB, ` +
            `${row.seconds.toFixed(1)} s, held-out after ${row.heldoutAfter.toFixed(4)}`,
        );
      }
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const type of Object.keys(bases)) {
      const mine = rows.filter((r) => r.type === type);
      console.log(
        `${type}: median ${median(mine.map((r) => r.tokensPerSecond)).toFixed(1)} tokens/s, ` +
          `median peak RSS ${median(mine.map((r) => r.peakRssMiB)).toFixed(0)} MiB`,
      );
    }
    const results = join(dirname(fileURLToPath(import.meta.url)), "results");
    mkdirSync(results, { recursive: true });
    writeFileSync(
      join(results, "trainer-quantized.json"),
      JSON.stringify({ size, steps, microBatch, runs: rows }, null, 2),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
