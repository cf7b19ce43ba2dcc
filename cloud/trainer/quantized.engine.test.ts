import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Llama } from "node-llama-cpp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { tinyModelSpec, vocabularySize } from "../../native/gguf/tiny-model";
import { writeGguf } from "../../native/gguf/writer";
import { countingExamples } from "../../testing/cloud/trainer/datasets";
import { dataFile, readReport, train } from "../../testing/cloud/trainer/fixtures";
import {
  loadTestLlama,
  logSoftmax,
  llamaLogProbsOfFile,
  maxAbsDiff,
  meanAbsDiff,
} from "../../testing/cloud/trainer/llama-logprobs";
import {
  assertTorchAvailable,
  expectDone,
  PYTHON,
  TRAINER_ROOT,
  trainerEnv,
  trainerLogits,
} from "../../testing/cloud/trainer/trainer-process";
import { PARITY_TOKENS } from "../../testing/trainer/chat-tokens";
import { suiteDir } from "../../testing/core/temp-dir";

/**
 * Training against quantized bases (issue 31 item 2): the trainer dequantizes Q4_0, Q4_1, Q5_0,
 * Q5_1, Q8_0, Q4_K, Q5_K and Q6_K as ggml does, and its forward pass on such a base is
 * llama.cpp's. Fixtures: the small llama base with matrices quantized to one type
 * (testing/cloud/trainer/quantize_fixture.py).
 *
 * llama.cpp's CPU matmul never dequantizes a weight: it rounds the activations to 8 bits (Q8_0
 * or Q8_1 blocks of 32 for the legacy types, Q8_K blocks of 256 for the K-quants) and takes
 * integer dot products. On this small base that rounding alone moves log-probabilities by up to
 * whole units when every matrix is quantized (llama.cpp against itself on the same weights in
 * F32 shows the same gap), so the checks are:
 * - exactness: block 0's seven matrices in the type, the rest F32, the trainer rounding the
 *   activations as llama.cpp does (`logits --llama-cpu-rounding`): within ROUNDED_TOLERANCE. A
 *   wrong block layout, scale or min moves whole units. Only one layer, because with every layer
 *   quantized, one activation rounded to the other side of a half step (float summation order)
 *   changes the next layers' roundings and the gap compounds.
 * - the whole quantized model, as the trainer trains on it (no rounding): equal to llama.cpp on
 *   the same weights dequantized to F32 within F32_TOLERANCE; its gap to llama.cpp on the blocks
 *   is logged (llama.cpp's activation rounding).
 */

const TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"] as const;
const ROUNDED_TOLERANCE = 0.1;
const F32_TOLERANCE = 5e-4;
const V = vocabularySize();
const QUANTIZE = join(TRAINER_ROOT, "../../testing/cloud/trainer/quantize_fixture.py");

const dir = suiteDir("trainer-quantized-");
let llama: Llama;
let f32Base: string;

function fixture(args: readonly string[]): void {
  const run = spawnSync(PYTHON, [QUANTIZE, ...args], { encoding: "utf8", env: trainerEnv() });
  if (run.status !== 0) throw new Error(`quantize_fixture ${args.join(" ")} failed: ${run.stderr}`);
}

function quantize(types: readonly string[], name: string, prefix?: string): string {
  const out = join(dir.path, `${name}.gguf`);
  fixture([f32Base, out, types.join(","), ...(prefix ? [prefix] : [])]);
  return out;
}

beforeAll(async () => {
  f32Base = join(dir.path, "small.gguf");
  await writeGguf(f32Base, tinyModelSpec("small"));
  llama = await loadTestLlama();
});

afterAll(async () => {
  await llama?.dispose();
});

beforeEach(() => void assertTorchAvailable());

const llamaOn = (base: string): Promise<number[][]> => llamaLogProbsOfFile(llama, base, V, PARITY_TOKENS);

const roundedTrainerLogProbs = async (base: string): Promise<number[][]> =>
  logSoftmax(await trainerLogits(base, PARITY_TOKENS, undefined, { llamaCpuRounding: true }));

describe.each(TYPES)("quantized base %s: parity with llama.cpp", (type) => {
  it("block 0 in the type, llama.cpp's activation rounding: exact dequantization", async () => {
    const base = quantize([type], `${type}-blk0`, "blk.0.");
    const delta = maxAbsDiff(await llamaOn(base), await roundedTrainerLogProbs(base));
    console.log(
      `parity ${type} (block 0, rounding as llama.cpp): max |Δ log p| = ${delta.toExponential(2)} (tolerance ${ROUNDED_TOLERANCE})`,
    );
    expect(delta).toBeLessThan(ROUNDED_TOLERANCE);
  });

  it("every matrix in the type: the trainer's forward pass is llama.cpp's on the same weights", async () => {
    const base = quantize([type], type);
    const f32 = join(dir.path, `${type}-f32.gguf`);
    fixture(["--dequantize", base, f32]);
    const ours = logSoftmax(await trainerLogits(base, PARITY_TOKENS));
    const onBlocks = await llamaOn(base);
    const delta = maxAbsDiff(await llamaOn(f32), ours);
    console.log(
      `parity ${type} (all matrices): vs llama.cpp on the weights in F32 max |Δ log p| = ${delta.toExponential(2)} ` +
        `(tolerance ${F32_TOLERANCE}); vs llama.cpp on the blocks max ${maxAbsDiff(onBlocks, ours).toFixed(3)}, ` +
        `mean ${meanAbsDiff(onBlocks, ours).toFixed(3)}`,
    );
    expect(delta).toBeLessThan(F32_TOLERANCE);
  });
});

describe("quantized base mixing the eight types", () => {
  it("block 0 mixed, llama.cpp's activation rounding", async () => {
    const base = quantize(TYPES, "mixed-blk0", "blk.0.");
    const delta = maxAbsDiff(await llamaOn(base), await roundedTrainerLogProbs(base));
    console.log(`parity mixed (block 0, rounding as llama.cpp): max |Δ log p| = ${delta.toExponential(2)}`);
    expect(delta).toBeLessThan(ROUNDED_TOLERANCE);
  });
});

describe("LoRA on a Q4_K base", () => {
  it("lowers the held-out loss on that base, as training on its F32 dequantization does", async () => {
    const base = quantize(["Q4_K"], "q4k");
    const f32 = join(dir.path, "q4k-f32.gguf");
    fixture(["--dequantize", base, f32]);
    const examples = countingExamples(24);
    const data = await dataFile(dir.path, "train", examples.slice(0, 16));
    const heldout = await dataFile(dir.path, "heldout", examples.slice(16));
    const flags = ["--heldout", heldout, "--steps", "12", "--batch-size", "4", "--lr", "0.01", "--rank", "4"];
    const run = await train(dir.path, "q4k-lora", { base, data, flags });
    expectDone(run);
    const { lossBefore, lossAfter } = readReport(run.report).heldout!;
    console.log(`Q4_K base held-out loss: ${lossBefore.toFixed(4)} -> ${lossAfter.toFixed(4)}`);
    expect(lossAfter).toBeLessThan(lossBefore * 0.9);
    // The blocks dequantized inside each matmul (forward and the input gradient) give the same
    // training as the same weights held in F32: the custom backward is the plain one.
    const reference = await train(dir.path, "q4k-f32-lora", { base: f32, data, flags });
    expectDone(reference);
    const ref = readReport(reference.report).heldout!;
    console.log(`same weights in F32: ${ref.lossBefore.toFixed(4)} -> ${ref.lossAfter.toFixed(4)}`);
    expect(Math.abs(ref.lossBefore - lossBefore)).toBeLessThan(1e-4);
    expect(Math.abs(ref.lossAfter - lossAfter)).toBeLessThan(1e-3);
  });
});
