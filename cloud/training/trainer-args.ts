/**
 * The `macaron_trainer train` command line of a run (the shared trainer CLI interface). Only
 * what the caller set is passed: the trainer's own defaults apply otherwise.
 */
import type { TokenizedDataset, TrainMethod } from "./tokenize-dataset";
import type { TrainOptions } from "./train-options";

export interface RunPaths {
  method: TrainMethod;
  data: Pick<TokenizedDataset, "trainPath" | "heldoutPath">;
  /** Where the trainer writes the adapter and its report. */
  out: string;
  report: string;
}

/** `["train", "--base", …]` for `options`. */
export function trainerArgs(options: TrainOptions, run: RunPaths): string[] {
  const args = ["train", "--base", options.base, "--data", run.data.trainPath];
  args.push("--out", run.out, "--report", run.report, "--method", run.method);
  if (run.data.heldoutPath) args.push("--heldout", run.data.heldoutPath);
  if (options.from) args.push("--from", options.from);
  const numbers: [string, number | undefined][] = [
    ["--rank", options.rank],
    ["--alpha", options.alpha],
    ["--dropout", options.dropout],
    ["--lr", options.lr],
    ["--epochs", options.epochs],
    ["--steps", options.steps],
    ["--batch-size", options.batchSize],
    ["--beta", options.beta],
    ["--clip", options.clip],
    ["--seed", options.seed],
    ["--threads", options.threads],
    ["--max-seconds", options.maxSeconds],
    ["--checkpoint-every", options.checkpointEvery],
  ];
  for (const [flag, value] of numbers) if (value !== undefined) args.push(flag, String(value));
  if (options.targets?.length) args.push("--targets", options.targets.join(","));
  args.push("--device", options.device ?? "auto");
  return args;
}
