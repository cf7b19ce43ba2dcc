/**
 * Trains a LoRA adapter for a base model from a chat dataset: checks the inputs, tokenizes the
 * examples exactly as the app lays out prompts (tokenize-dataset.ts), runs the Python trainer
 * (python-trainer.ts) and writes `OUT/ID.gguf` with its manifest `OUT/ID.json`, which the app
 * (and `npm run serve -- --adapters OUT`) installs as adapter ID. `npm run train` is a thin CLI
 * over trainAdapter; the improvement cycle calls it directly.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import packageJson from "../../package.json";
import { harnessVersion } from "../../electron/core/harness";
import { sha256File } from "../../common/hashing";
import type { ToolCallFormat } from "../../common/engine-protocol";
import {
  buildManifest,
  writeManifest,
  type TrainedAdapterManifest,
  type TrainerReport,
} from "./trained-manifest";
import { readDatasetFile } from "./dataset-file";
import { locatePython, probeTorch, runTrainer, type TrainerEvent } from "./python-trainer";
import {
  tokenizeDataset,
  type DatasetStats,
  type TokenizedDataset,
  type TrainMethod,
} from "./tokenize-dataset";
import { checkBase, checkOptions, checkParent, nextVersion } from "./train-checks";
import { TrainError } from "./train-error";
import type { TrainOptions } from "./train-options";
import { trainerArgs } from "./trainer-args";

export type { TrainOptions } from "./train-options";

/** Context assumed for a base whose GGUF does not say (the engine's default). */
const FALLBACK_CONTEXT = 4096;

export type TrainProgress =
  | { type: "stage"; stage: "checking" | "tokenizing" | "training" | "writing"; message: string }
  | { type: "tokenized"; dataset: DatasetStats; heldoutExamples: number; tokens: number }
  | { type: "trainer"; event: TrainerEvent }
  /** A human-readable line of the trainer (stderr). */
  | { type: "log"; line: string };

export interface TrainResult {
  adapterPath: string;
  manifestPath: string;
  manifest: TrainedAdapterManifest;
  report: TrainerReport;
  dataset: DatasetStats;
  seconds: { tokenize: number; train: number; total: number };
}

interface RunContext {
  options: TrainOptions;
  method: TrainMethod;
  domain: string;
  version: string;
  parentVersion: string | null;
  base: Awaited<ReturnType<typeof checkBase>>;
  parent: Awaited<ReturnType<typeof checkParent>> | null;
  toolFormat: ToolCallFormat | undefined;
}

/** The manifest of the adapter the trainer wrote to `adapterPath`. */
async function manifestFor(
  run: RunContext,
  adapterPath: string,
  tokenized: TokenizedDataset,
  report: TrainerReport,
): Promise<TrainedAdapterManifest> {
  const { options, base, parent, domain } = run;
  const { dataset } = tokenized;
  return buildManifest({
    id: options.id,
    name: options.name ?? parent?.manifest?.name ?? options.id,
    domain,
    version: run.version,
    description:
      options.description ??
      `${domain} adapter trained on ${basename(options.data)} (${dataset.examples} examples, ${run.method}).`,
    sha256: await sha256File(adapterPath),
    sizeBytes: (await stat(adapterPath)).size,
    base: {
      architecture: base.summary.architecture,
      embeddingLength: base.summary.embeddingLength,
      baseName: base.summary.name,
      // The trainer hashed the base already; hashing a multi-GB file twice costs seconds.
      baseSha256: report.base?.sha256 ?? (await sha256File(options.base)),
    },
    defaultScale: parent?.manifest?.defaultScale ?? 1,
    routingExamples: tokenized.routingExamples,
    parentVersion: run.parentVersion,
    parentSha256: parent?.sha256 ?? null,
    datasetFileName: basename(options.data),
    dataset,
    malformed: dataset.malformed.length,
    heldoutExamples: tokenized.heldoutExamples,
    report,
    harnessVersion: harnessVersion(packageJson.version),
    toolCallFormat: run.toolFormat,
  });
}

/**
 * Trains adapter `options.id` and writes it with its manifest into `options.out`. Progress goes
 * to `onProgress`. Throws TrainError (code and a message for the user) on every failure; a
 * trainer that stopped after a checkpoint resumes when called again with the same options.
 */
export async function trainAdapter(
  options: TrainOptions,
  onProgress: (progress: TrainProgress) => void = () => {},
): Promise<TrainResult> {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  checkOptions(options);
  const method = options.method ?? "sft";
  onProgress({ type: "stage", stage: "checking", message: "checking the base, the data and Python" });
  const base = await checkBase(options.base);
  const skip = options.skipMalformed ?? false;
  const data = await readDatasetFile(options.data, skip);
  const heldout = options.heldout ? await readDatasetFile(options.heldout, skip) : null;
  const parent = options.from ? await checkParent(options.from, base.file) : null;
  const parentVersion = options.parentVersion ?? parent?.manifest?.version ?? null;
  const run: RunContext = {
    options,
    method,
    domain: options.domain ?? parent?.manifest?.domain ?? "chat",
    version: options.version ?? (parentVersion ? nextVersion(parentVersion) : "1.0.0"),
    parentVersion,
    base,
    parent,
    toolFormat: options.toolFormat ?? parent?.manifest?.toolCallFormat,
  };
  const python = options.python ?? locatePython(options.env);
  // Importing torch takes a second: checked while the examples are tokenized.
  const torch = probeTorch(python);
  torch.catch(() => {}); // awaited below; not an unhandled rejection meanwhile

  const out = resolve(options.out);
  // Inputs and checkpoints of the run; a rerun after a crash finds its checkpoint here.
  const work = join(out, `.${options.id}.training`);
  const discardWork = async (err: unknown): Promise<never> => {
    await rm(work, { recursive: true, force: true });
    throw err;
  };
  await mkdir(work, { recursive: true });
  const context = base.summary.contextLength || FALLBACK_CONTEXT;
  onProgress({ type: "stage", stage: "tokenizing", message: `tokenizing ${basename(options.data)}` });
  const trainOut = join(work, "train.jsonl");
  const tokenized = await tokenizeDataset(options.base, data, heldout, {
    domain: run.domain,
    method,
    maxLength: Math.min(options.maxLength ?? context, context),
    maxLengthPolicy: options.maxLengthPolicy ?? "drop",
    systemPrompts: options.systemPrompts ?? "app",
    trainOut,
    heldoutOut: join(work, "heldout.jsonl"),
    ...(run.toolFormat ? { toolFormat: run.toolFormat } : {}),
  }).catch(discardWork);
  await torch.catch(discardWork);
  const { dataset, heldoutExamples, tokens } = tokenized;
  onProgress({ type: "tokenized", dataset, heldoutExamples, tokens });
  const tokenizeSeconds = elapsed();

  onProgress({ type: "stage", stage: "training", message: "training" });
  const adapterTmp = join(work, "adapter.gguf");
  const reportPath = join(work, "report.json");
  await runTrainer({
    python,
    nproc: options.nproc ?? 1,
    args: trainerArgs(options, { method, data: tokenized, out: adapterTmp, report: reportPath }),
    env: options.env,
    signal: options.signal,
    onEvent: (event) => onProgress({ type: "trainer", event }),
    onLog: (line) => onProgress({ type: "log", line }),
  }).catch(async (caught: unknown) => {
    // The trainer reads the tokenized copy of the data: a fault of the whole data set (GRPO's
    // "every one of the N groups in … has rewards that are all equal") names the user's file.
    const err =
      caught instanceof TrainError && caught.code === "empty_data"
        ? new TrainError(caught.code, caught.message.replaceAll(trainOut, options.data))
        : caught;
    // The trainer's default checkpoint folder: kept, the same command resumes from it.
    if (err instanceof TrainError && existsSync(`${adapterTmp}.ckpt`)) {
      throw new TrainError(
        err.code,
        `${err.message}\n(Checkpoint kept: run the same command again to resume.)`,
      );
    }
    return discardWork(err);
  });
  const trainSeconds = elapsed() - tokenizeSeconds;

  onProgress({ type: "stage", stage: "writing", message: "writing the adapter and its manifest" });
  const report = JSON.parse(await readFile(reportPath, "utf8")) as TrainerReport;
  const manifest = await manifestFor(run, adapterTmp, tokenized, report);
  const adapterPath = join(out, `${options.id}.gguf`);
  const manifestPath = join(out, `${options.id}.json`);
  // The adapter first: a manifest never describes a file that is not there.
  await rename(adapterTmp, adapterPath);
  await writeManifest(manifestPath, manifest);
  await rm(work, { recursive: true, force: true });
  return {
    adapterPath,
    manifestPath,
    manifest,
    report,
    dataset,
    seconds: { tokenize: tokenizeSeconds, train: trainSeconds, total: elapsed() },
  };
}
