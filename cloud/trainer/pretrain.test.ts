import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { suiteDir } from "../../testing/core/temp-dir";
import { readGguf } from "../../native/gguf/reader";
import { tinyModelSpec } from "../../native/gguf/tiny-model";
import { writeGguf } from "../../native/gguf/writer";
import { bytes } from "../../testing/cloud/trainer/datasets";
import { dataFile, losses, mean, readReport } from "../../testing/cloud/trainer/fixtures";
import {
  llamaLogProbs,
  loadTestLlama,
  logSoftmax,
  maxAbsDiff,
} from "../../testing/cloud/trainer/llama-logprobs";
import {
  assertTorchAvailable,
  eventsNamed,
  expectDone,
  runTrainer,
  trainerLogits,
} from "../../testing/cloud/trainer/trainer-process";

/** Full-parameter pretraining writes a base model llama.cpp runs, with the input's layout. */

const TEXT = "the cat sat on the mat. the dog sat on the log. a bird sang in the tree. ".repeat(3);
const TOLERANCE = 5e-4;

const tmp = suiteDir("macaron-pretrain-");
let corpus: string;

beforeAll(async () => {
  corpus = await dataFile(
    tmp.path,
    "corpus",
    Array.from({ length: 32 }, (_, i) => ({
      kind: "lm",
      ids: bytes(TEXT.slice((i * 7) % 60, ((i * 7) % 60) + 48)),
    })),
  );
});

beforeEach(() => void assertTorchAvailable());

async function pretrain(type: "F32" | "F16") {
  const spec = tinyModelSpec("tiny");
  const base = join(tmp.path, `base-${type}.gguf`);
  await writeGguf(base, {
    ...spec,
    tensors: spec.tensors.map((t) => ({ ...t, type: t.dims.length === 1 ? "F32" : type })),
  });
  const out = join(tmp.path, `pretrained-${type}.gguf`);
  const report = join(tmp.path, `pretrained-${type}.json`);
  const run = await runTrainer([
    "pretrain",
    ...["--base", base, "--data", corpus, "--out", out, "--report", report],
    ...["--steps", "16", "--batch-size", "8", "--name", "Pretrained tiny"],
  ]);
  expectDone(run);
  return { base, out, report, run };
}

describe("pretrain", () => {
  it.each(["F32", "F16"] as const)(
    "%s base: lowers the loss and keeps metadata, tensor names, shapes and types",
    async (type) => {
      const { base, out, report, run } = await pretrain(type);
      const curve = losses(run);
      expect(curve).toHaveLength(16);
      expect(mean(curve.slice(-3))).toBeLessThan(0.5 * mean(curve.slice(0, 3)));
      expect(eventsNamed(run, "start")[0]!.trainableParams).toBeGreaterThan(100_000);
      expect(readReport(report)).toMatchObject({ method: "pretrain", stepsDone: 16 });

      const [before, after] = await Promise.all([readGguf(base), readGguf(out)]);
      expect(after.metadata["general.name"]).toBe("Pretrained tiny");
      expect({ ...after.metadata, "general.name": "" }).toEqual({ ...before.metadata, "general.name": "" });
      const layout = (f: typeof before) => f.tensors.map((t) => [t.name, t.dims, t.type]);
      expect(layout(after)).toEqual(layout(before));
    },
  );

  it("writes a base llama.cpp loads and runs like the trainer does", async () => {
    const { out } = await pretrain("F32");
    const tokens = bytes("the cat sat on the");
    const llama = await loadTestLlama();
    try {
      const model = await llama.loadModel({ modelPath: out });
      const theirs = await llamaLogProbs(model, 259, tokens);
      await model.dispose();
      const delta = maxAbsDiff(theirs, logSoftmax(await trainerLogits(out, tokens)));
      console.log(
        `parity pretrained tiny base: max |Δ log p| = ${delta.toExponential(2)} (tolerance ${TOLERANCE})`,
      );
      expect(delta).toBeLessThan(TOLERANCE);
      // It learnt the corpus: after "the cat sat on the", " " is likely and then "mat".
      expect(Math.exp(theirs.at(-1)![" ".charCodeAt(0)]!)).toBeGreaterThan(0.5);
    } finally {
      await llama.dispose();
    }
  });
});
