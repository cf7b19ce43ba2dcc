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
import {
  ADAPTER_ID_PATTERN,
  readManifestBeside,
  RESERVED_ADAPTER_IDS,
} from "../../electron/core/adapters/adapter-manifest";
import { harnessVersion } from "../../electron/core/harness";
import { sha256File } from "../../native/gguf/fixtures";
import {
  assertAdapterFits,
  assertLoadableModel,
  isGgufError,
  summarizeModel,
} from "../../native/gguf/reader";
import {
  buildManifest,
  writeManifest,
  type TrainedAdapterManifest,
  type TrainerReport,
} from "./adapter-manifest";
import { readDatasetFile } from "./dataset-file";
import { checkTorch, locatePython, runTrainer, type TrainerEvent } from "./python-trainer";
import {
  tokenizeDataset,
  type DatasetStats,
  type MaxLengthPolicy,
  type TrainMethod,
} from "./tokenize-dataset";
import { TrainError } from "./train-error";
import { trainerArgs } from "./trainer-args";

/** Context assumed for a base whose GGUF does not say (the engine's default). */
const FALLBACK_CONTEXT = 4096;

export interface TrainOptions {
  /** The base model GGUF. */
  base: string;
  /** The chat dataset (JSONL as the cloud export writes it). */
  data: string;
  /** Folder that receives ID.gguf and ID.json (created if needed). */
  out: string;
  id: string;
  /** Default "chat"; "ui" formats prompts with the UI-mode system prompt. */
  domain?: string;
  /** Default "sft". */
  method?: TrainMethod;
  /** A parent LoRA GGUF to continue from (its manifest beside it gives version, name, scale). */
  from?: string;
  parentVersion?: string;
  /** Default: 1.0.0, or the parent's version with its minor number raised. */
  version?: string;
  name?: string;
  description?: string;
  heldout?: string;
  /** Longest example in tokens; default (and at most) the base's context length. */
  maxLength?: number;
  /** Default "drop". */
  maxLengthPolicy?: MaxLengthPolicy;
  /** Skip and count malformed lines instead of failing on the first. */
  skipMalformed?: boolean;
  rank?: number;
  alpha?: number;
  dropout?: number;
  lr?: number;
  epochs?: number;
  steps?: number;
  batchSize?: number;
  beta?: number;
  seed?: number;
  targets?: string[];
  /** Processes (torchrun) for data-parallel training; default 1. */
  nproc?: number;
  /** Torch threads per process (the trainer's default: 1). */
  threads?: number;
  /** Default "auto": CUDA or MPS when torch has it, else CPU. */
  device?: "cpu" | "cuda" | "mps" | "auto";
  maxSeconds?: number;
  checkpointEvery?: number;
  /** The interpreter (default: see locatePython). */
  python?: string;
  /** The trainer's environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

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

function fail(code: "bad_args", message: string): never {
  throw new TrainError(code, message);
}

function checkOptions(o: TrainOptions): void {
  if (!ADAPTER_ID_PATTERN.test(o.id) || RESERVED_ADAPTER_IDS.includes(o.id))
    fail(
      "bad_args",
      `--id "${o.id}" must be a plain name (letters, digits, '.', '_' or '-') and not auto/base.`,
    );
  if (o.epochs !== undefined && o.steps !== undefined)
    fail("bad_args", "Give --epochs or --steps, not both.");
  const positive = { rank: o.rank, epochs: o.epochs, steps: o.steps, batchSize: o.batchSize, nproc: o.nproc };
  for (const [name, v] of Object.entries({ ...positive, threads: o.threads, maxLength: o.maxLength })) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1))
      fail("bad_args", `${name} must be a positive integer, not ${v}.`);
  }
  for (const [name, v] of Object.entries({ lr: o.lr, alpha: o.alpha, maxSeconds: o.maxSeconds })) {
    if (v !== undefined && !(Number.isFinite(v) && v > 0))
      fail("bad_args", `${name} must be a positive number.`);
  }
}

/** `1.2.3` → `1.3.0`: a retrained adapter is a new minor version of its parent. */
export function nextVersion(parent: string): string {
  const m = /^(\d+)\.(\d+)\.\d+/.exec(parent);
  if (!m) fail("bad_args", `Cannot derive a version from the parent's "${parent}": give --version.`);
  return `${m[1]}.${Number(m[2]) + 1}.0`;
}

async function checkBase(path: string) {
  try {
    const file = await assertLoadableModel(path);
    return { file, summary: summarizeModel(file, path) };
  } catch (err) {
    if (isGgufError(err)) throw new TrainError("bad_base", `Base model: ${err.message}`);
    throw err;
  }
}

async function checkParent(path: string, base: Awaited<ReturnType<typeof checkBase>>["file"]) {
  try {
    await assertAdapterFits(path, base);
    return { sha256: await sha256File(path), manifest: await readManifestBeside(path).catch(() => null) };
  } catch (err) {
    if (isGgufError(err)) throw new TrainError("bad_parent", `Parent adapter: ${err.message}`);
    throw err;
  }
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
  checkOptions(options);
  const method = options.method ?? "sft";
  const domain = options.domain ?? "chat";
  onProgress({ type: "stage", stage: "checking", message: "checking the base, the data and Python" });
  const base = await checkBase(options.base);
  const skip = options.skipMalformed ?? false;
  const data = await readDatasetFile(options.data, skip);
  const heldout = options.heldout ? await readDatasetFile(options.heldout, skip) : null;
  const parent = options.from ? await checkParent(options.from, base.file) : null;
  const python = options.python ?? locatePython(options.env);
  // Importing torch takes a second: checked while the examples are tokenized.
  const torch = checkTorch(python);
  torch.catch(() => {}); // awaited below; not an unhandled rejection meanwhile

  const out = resolve(options.out);
  // Inputs and checkpoints of the run; a rerun after a crash finds its checkpoint here.
  const work = join(out, `.${options.id}.training`);
  await mkdir(work, { recursive: true });
  const context = base.summary.contextLength || FALLBACK_CONTEXT;
  onProgress({ type: "stage", stage: "tokenizing", message: `tokenizing ${basename(options.data)}` });
  const tokenized = await tokenizeDataset(options.base, data, heldout, {
    domain,
    method,
    maxLength: Math.min(options.maxLength ?? context, context),
    maxLengthPolicy: options.maxLengthPolicy ?? "drop",
    trainOut: join(work, "train.jsonl"),
    heldoutOut: join(work, "heldout.jsonl"),
  }).catch(async (err: unknown) => {
    await rm(work, { recursive: true, force: true });
    throw err;
  });
  await torch.catch(async (err: unknown) => {
    await rm(work, { recursive: true, force: true });
    throw err;
  });
  const { dataset, heldoutExamples, tokens } = tokenized;
  onProgress({ type: "tokenized", dataset, heldoutExamples, tokens });
  const tokenizeSeconds = (performance.now() - started) / 1000;

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
  }).catch(async (err: unknown) => {
    // The trainer's default checkpoint folder: kept, the same command resumes from it.
    if (err instanceof TrainError && existsSync(`${adapterTmp}.ckpt`)) {
      throw new TrainError(
        err.code,
        `${err.message}\n(Checkpoint kept: run the same command again to resume.)`,
      );
    }
    await rm(work, { recursive: true, force: true });
    throw err;
  });
  const trainSeconds = (performance.now() - started) / 1000 - tokenizeSeconds;

  onProgress({ type: "stage", stage: "writing", message: "writing the adapter and its manifest" });
  const report = JSON.parse(await readFile(reportPath, "utf8")) as TrainerReport;
  const adapterPath = join(out, `${options.id}.gguf`);
  const manifestPath = join(out, `${options.id}.json`);
  const parentVersion = options.parentVersion ?? parent?.manifest?.version ?? null;
  const manifest = buildManifest({
    id: options.id,
    name: options.name ?? parent?.manifest?.name ?? options.id,
    domain,
    version: options.version ?? (parentVersion ? nextVersion(parentVersion) : "1.0.0"),
    description:
      options.description ??
      `${domain} adapter trained on ${basename(options.data)} (${dataset.examples} examples, ${method}).`,
    sha256: await sha256File(adapterTmp),
    sizeBytes: (await stat(adapterTmp)).size,
    base: {
      architecture: base.summary.architecture,
      embeddingLength: base.summary.embeddingLength,
      baseName: base.summary.name,
      baseSha256: report.base?.sha256 ?? (await sha256File(options.base)),
    },
    defaultScale: parent?.manifest?.defaultScale ?? 1,
    routingExamples: tokenized.routingExamples,
    parentVersion,
    parentSha256: parent?.sha256 ?? null,
    datasetFileName: basename(options.data),
    dataset,
    malformed: dataset.malformed.length,
    heldoutExamples,
    report,
    harnessVersion: harnessVersion(packageJson.version),
  });
  // The adapter first: a manifest never describes a file that is not there.
  await rename(adapterTmp, adapterPath);
  await writeManifest(manifestPath, manifest);
  await rm(work, { recursive: true, force: true });
  const total = (performance.now() - started) / 1000;
  return {
    adapterPath,
    manifestPath,
    manifest,
    report,
    dataset,
    seconds: { tokenize: tokenizeSeconds, train: trainSeconds, total },
  };
}
