import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { suiteDir } from "../../testing/core/temp-dir";
import { countingExamples } from "../../testing/cloud/trainer/datasets";
import { dataFile, losses, writeBase } from "../../testing/cloud/trainer/fixtures";
import { logSoftmax, maxAbsDiff } from "../../testing/cloud/trainer/llama-logprobs";
import {
  assertTorchAvailable,
  eventsNamed,
  expectDone,
  PYTHON,
  startTrainer,
  trainerLogits,
} from "../../testing/cloud/trainer/trainer-process";

/**
 * Two processes under torchrun (gloo, CPU) train like one: each step's global batch is split
 * across the ranks and the loss is normalised by the global token count, so the loss curves
 * agree to float rounding. RELATIVE_TOLERANCE is far above the ~1e-7 measured and far below
 * any real difference (a wrong normalisation is off by ~2x, a wrong split by whole percents).
 *
 * Launched with `python -m macaron_trainer.torchrun`, which is torchrun with the fix torch
 * 1.13 needs on Python 3.11 (see that file); the arguments are torchrun's.
 */

const RELATIVE_TOLERANCE = 1e-4;

const tmp = suiteDir("macaron-ddp-");
let base: string;
let data: string;

beforeAll(async () => {
  base = await writeBase(tmp.path);
  // 9 examples in batches of 4: the third batch has one example, so rank 1 has none there.
  data = await dataFile(tmp.path, "sft", countingExamples(9));
});

beforeEach(() => void assertTorchAvailable());

function trainArgs(name: string): string[] {
  return [
    "train",
    ...["--base", base, "--data", data, "--out", join(tmp.path, `${name}.gguf`)],
    ...["--report", join(tmp.path, `${name}.json`), "--steps", "7", "--batch-size", "4", "--lr", "5e-3"],
  ];
}

describe("torchrun --nproc_per_node 2", () => {
  it("gives the 1-process loss curve and adapter within tolerance, with events from rank 0 only", async () => {
    const one = await startTrainer(trainArgs("one"));
    const two = await startTrainer(trainArgs("two"), {
      command: [
        PYTHON,
        "-m",
        "macaron_trainer.torchrun",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "macaron_trainer",
      ],
    });
    expectDone(one);
    expectDone(two);
    expect(eventsNamed(two, "start")).toHaveLength(1);
    expect(eventsNamed(two, "start")[0]).toMatchObject({ worldSize: 2 });
    expect(eventsNamed(two, "done")).toHaveLength(1);

    const a = losses(one);
    const b = losses(two);
    expect(b).toHaveLength(a.length);
    const relative = Math.max(...a.map((x, i) => Math.abs(x - b[i]!) / Math.abs(x)));
    console.log(`DDP 2 vs 1 process: max relative loss difference ${relative.toExponential(2)}`);
    expect(relative).toBeLessThan(RELATIVE_TOLERANCE);
    // The curve moved (the comparison is not between two flat lines).
    expect(a.at(-1)!).toBeLessThan(a[0]! * 0.9);

    const tokens = [256, ...Buffer.from("user\nHow many cats? 3")];
    const [la, lb] = await Promise.all(
      ["one", "two"].map(async (n) =>
        logSoftmax(await trainerLogits(base, tokens, { path: join(tmp.path, `${n}.gguf`), scale: 1 })),
      ),
    );
    const delta = maxAbsDiff(la!, lb!);
    console.log(`DDP 2 vs 1 process: adapters' max |Δ log p| ${delta.toExponential(2)}`);
    expect(delta).toBeLessThan(1e-3);
  });
});
