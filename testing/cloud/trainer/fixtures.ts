import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tinyModelSpec, type TinyModelSize } from "../../../native/gguf/tiny-model";
import { writeGguf } from "../../../native/gguf/writer";
import { writeJsonl } from "./datasets";
import {
  eventsNamed,
  runTrainer,
  trainerLogitsMany,
  type TrainerEvent,
  type TrainerRun,
} from "./trainer-process";

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
    [
      "train",
      "--base",
      opts.base,
      "--data",
      opts.data,
      "--out",
      out,
      "--report",
      report,
      ...(opts.flags ?? []),
    ],
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
 * log p(chosen | prompt) - log p(rejected | prompt) under the trainer's forward pass (base, or
 * base + adapter), each the sum over the completion tokens: the margin DPO widens.
 */
export async function preferenceMargin(
  base: string,
  pair: { prompt: readonly number[]; chosen: readonly number[]; rejected: readonly number[] },
  adapter?: string,
): Promise<number> {
  const sequences = [pair.chosen, pair.rejected].map((c) => [...pair.prompt, ...c]);
  const logits = await trainerLogitsMany(base, sequences, adapter ? { path: adapter, scale: 1 } : undefined);
  const [chosen, rejected] = sequences.map((tokens, s) => {
    let total = 0;
    for (let i = pair.prompt.length; i < tokens.length; i++) {
      const row = logits[s]![i - 1]!;
      const max = Math.max(...row);
      const logSum = max + Math.log(row.reduce((acc, x) => acc + Math.exp(x - max), 0));
      total += row[tokens[i]!]! - logSum;
    }
    return total;
  });
  return chosen! - rejected!;
}

/** The parts of REPORT.json the tests read. */
export interface TrainReport {
  readonly method: string;
  readonly hyperparameters: Readonly<Record<string, unknown>>;
  readonly data: { readonly examples: number; readonly tokens: number; readonly sha256: string };
  readonly heldout: {
    readonly examples: number;
    readonly lossBefore: number;
    readonly lossAfter: number;
  } | null;
  readonly parent: { readonly path: string; readonly sha256: string } | null;
  readonly lossCurve: readonly (readonly [number, number])[];
  readonly stepsDone: number;
  readonly tokensPerSecond: number;
}

/** Reads a trainer REPORT.json. */
export function readReport(path: string): TrainReport {
  return JSON.parse(readFileSync(path, "utf8")) as TrainReport;
}
