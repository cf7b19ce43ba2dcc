import { join } from "node:path";
import { tinyModelSpec, type TinyModelSize } from "../../../native/gguf/tiny-model";
import { writeGguf } from "../../../native/gguf/writer";
import { writeJsonl } from "./datasets";
import { eventsNamed, runTrainer, trainerLogits, type TrainerEvent, type TrainerRun } from "./trainer-process";

/** Writes the generated demo base of `size` into `dir`; returns its path. */
export async function writeBase(dir: string, size: TinyModelSize = "tiny"): Promise<string> {
  const path = join(dir, `base-${size}.gguf`);
  await writeGguf(path, tinyModelSpec(size));
  return path;
}

/** `train` with the paths derived from `name` inside `dir`; extra flags appended. */
export async function train(
  dir: string,
  name: string,
  opts: { base: string; data: string; flags?: readonly string[]; env?: NodeJS.ProcessEnv },
): Promise<TrainerRun & { out: string; report: string }> {
  const out = join(dir, `${name}.gguf`);
  const report = join(dir, `${name}.json`);
  const run = await runTrainer(
    ["train", "--base", opts.base, "--data", opts.data, "--out", out, "--report", report, ...(opts.flags ?? [])],
    opts.env,
  );
  return { ...run, out, report };
}

/** The progress losses of a run, in step order. */
export function losses(run: TrainerRun): number[] {
  return eventsNamed(run, "progress").map((e) => e.loss as number);
}

/** Mean of a list of numbers. */
export function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** The error event of a failed run. */
export function errorEvent(run: TrainerRun): TrainerEvent | undefined {
  return eventsNamed(run, "error")[0];
}

/** Writes `lines` to `dir/name.jsonl`. */
export function dataFile(dir: string, name: string, lines: readonly (object | string)[]): Promise<string> {
  return writeJsonl(join(dir, `${name}.jsonl`), lines);
}

/**
 * Sum of log p(completion | prompt) under the trainer's forward pass (base, or base + adapter):
 * the quantity DPO moves.
 */
export async function completionLogProb(
  base: string,
  prompt: readonly number[],
  completion: readonly number[],
  adapter?: string,
): Promise<number> {
  const tokens = [...prompt, ...completion];
  const logits = await trainerLogits(base, tokens, adapter ? { path: adapter, scale: 1 } : undefined);
  let total = 0;
  for (let i = prompt.length; i < tokens.length; i++) {
    const row = logits[i - 1]!;
    const max = Math.max(...row);
    const logSum = max + Math.log(row.reduce((acc, x) => acc + Math.exp(x - max), 0));
    total += row[tokens[i]!]! - logSum;
  }
  return total;
}
