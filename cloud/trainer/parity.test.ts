import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Llama } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTROL_TOKENS } from "../../native/gguf/byte-vocab";
import { tinyModelSpec, vocabularySize } from "../../native/gguf/tiny-model";
import { writeGguf } from "../../native/gguf/writer";
import { llamaLogProbs, loadTestLlama, logSoftmax, maxAbsDiff } from "./testing/llama-logprobs";
import { assertTorchAvailable, trainerLogits } from "./testing/trainer-process";

/**
 * The trainer's forward pass equals llama.cpp's: for the same tokens, the trainer's
 * log-softmax(logits) and node-llama-cpp's log(probabilities) agree within TOLERANCE at every
 * position (node-llama-cpp only exposes probabilities; their log is the logits minus one
 * constant per position, so log-softmax is compared). Entries whose llama.cpp probability
 * underflows float32 (log p <= -80) cannot be compared exactly; there both sides must be tiny.
 */

const TOLERANCE = 2e-3;
const V = vocabularySize();
const IM_START = 256;
const IM_END = 257;

/** A ChatML turn as byte tokens with the control tokens: what training data looks like. */
function chatTokens(user: string, answer: string): number[] {
  const bytes = (s: string) => [...Buffer.from(s, "utf8")];
  return [
    IM_START,
    ...bytes("user\n" + user),
    IM_END,
    ...bytes("\n"),
    IM_START,
    ...bytes("assistant\n" + answer),
    IM_END,
  ];
}

const TOKENS = chatTokens("Hi there, what is 2+2?", "It is 4.");

let dir: string;
let llama: Llama;
const bases: Record<string, string> = {};

beforeAll(async () => {
  assertTorchAvailable();
  expect(CONTROL_TOKENS.length).toBe(V - 256);
  dir = mkdtempSync(join(tmpdir(), "trainer-parity-"));
  for (const size of ["tiny", "small"] as const) {
    bases[size] = join(dir, `${size}.gguf`);
    await writeGguf(bases[size], tinyModelSpec(size));
  }
  llama = await loadTestLlama();
});

afterAll(async () => {
  await llama?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function compare(base: string, adapter?: { filePath: string; scale: number }) {
  const model = await llama.loadModel({ modelPath: base });
  try {
    const theirs = await llamaLogProbs(model, V, TOKENS, adapter);
    const ours = logSoftmax(
      await trainerLogits(base, TOKENS, adapter && { path: adapter.filePath, scale: adapter.scale }),
    );
    expect(ours).toHaveLength(TOKENS.length);
    for (let i = 0; i < theirs.length; i++) {
      for (let j = 0; j < V; j++) {
        if (!(theirs[i]![j]! > -80)) expect(ours[i]![j]!).toBeLessThan(-70);
      }
    }
    return maxAbsDiff(theirs, ours);
  } finally {
    await model.dispose();
  }
}

describe("logits parity with llama.cpp", () => {
  it.each(["tiny", "small"] as const)("%s base: max |Δ log p| within tolerance", async (size) => {
    const delta = await compare(bases[size]!);
    console.log(`parity ${size} base: max |Δ log p| = ${delta.toExponential(2)} (tolerance ${TOLERANCE})`);
    expect(delta).toBeLessThan(TOLERANCE);
  });
});
