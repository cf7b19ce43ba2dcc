/**
 * The manifest written beside a trained adapter (`DIR/ID.json`): the AdapterManifest the app
 * installs (common/adapter-manifest.ts, the one schema) with a
 * lineage that says how it was made: parent, dataset, held-out loss, method, hyperparameters,
 * seed, loss curve, trainer, torch, device and harness version.
 */
import { rename, writeFile } from "node:fs/promises";
import type { ToolCallFormat } from "../../common/engine-protocol";
import type { AdapterManifest } from "../../common/adapter-manifest";

/** The trainer's REPORT.json (the shared trainer CLI interface). */
export interface TrainerReport {
  trainer: { name: string; version: string };
  torch: string;
  device: string;
  worldSize: number;
  method: string;
  hyperparameters: Record<string, unknown>;
  seed: number;
  parent: { path: string; sha256: string } | null;
  base: { sha256: string };
  data: { sha256: string; examples: number; tokens: number };
  heldout: {
    examples: number;
    lossBefore: number | null;
    lossAfter: number | null;
    /** DPO: share of held-out pairs whose chosen side the adapter prefers, before and after; GRPO:
     * share of held-out within-group pairs ordered by mean log-prob as by reward. */
    preferenceAccuracyBefore?: number | null;
    preferenceAccuracyAfter?: number | null;
  } | null;
  lossCurve: [number, number | null][];
  trainableParams: number;
  tokensPerSecond: number;
  seconds: number;
}

export interface TrainingLineage {
  /** The parent adapter's version (continued with --from), or null. */
  parent: string | null;
  parentSha256: string | null;
  /** `dataset:<file name>@sha256:<hex>`. */
  trainedFrom: string;
  dataset: {
    sha256: string;
    /** Non-blank lines of the data file. */
    lines: number;
    /** Examples trained on (the held-out ones not included). */
    examples: number;
    droppedTooLong: number;
    truncated: number;
    /** Lines skipped as malformed; present only when some were. */
    malformed?: number;
    /** Examples whose answers called tools, and how they were laid out; present only when some did. */
    toolCalls?: {
      examples: number;
      calls: number;
      resultTokens: number;
      unmaskedResults: number;
      /** Lines dropped for a result not found in the layout; absent in older manifests. */
      droppedUnmasked?: number;
      badTools: number;
    };
  };
  heldout: {
    examples: number;
    lossBefore: number | null;
    lossAfter: number | null;
    /** DPO and GRPO: held-out preference accuracy (chosen side / higher reward preferred) before and after. */
    preferenceAccuracyBefore?: number | null;
    preferenceAccuracyAfter?: number | null;
  };
  method: string;
  hyperparameters: Record<string, unknown>;
  seed: number;
  /** [step, loss] pairs. */
  lossCurve: [number, number | null][];
  trainer: { name: string; version: string };
  torch: string;
  device: string;
  worldSize: number;
  /** The app harness (prompts, router, contract) the examples were formatted for (harness.ts). */
  harnessVersion: string;
}

export type TrainedAdapterManifest = Omit<AdapterManifest, "lineage"> & { lineage: TrainingLineage };

export interface ManifestInput {
  id: string;
  name: string;
  domain: string;
  version: string;
  description: string;
  sha256: string;
  sizeBytes: number;
  base: AdapterManifest["base"];
  defaultScale: number;
  routingExamples: string[];
  parentVersion: string | null;
  parentSha256: string | null;
  datasetFileName: string;
  dataset: {
    sha256: string;
    lines: number;
    examples: number;
    droppedTooLong: number;
    truncated: number;
    toolCalls?: NonNullable<TrainingLineage["dataset"]["toolCalls"]>;
  };
  malformed: number;
  heldoutExamples: number;
  report: TrainerReport;
  harnessVersion: string;
  toolCallFormat?: ToolCallFormat;
}

/** The manifest of a trained adapter, from what this side knows and the trainer's report. */
export function buildManifest(input: ManifestInput): TrainedAdapterManifest {
  const { report } = input;
  return {
    id: input.id,
    name: input.name,
    domain: input.domain,
    version: input.version,
    description: input.description,
    sha256: input.sha256,
    sizeBytes: input.sizeBytes,
    base: input.base,
    defaultScale: input.defaultScale,
    routingExamples: input.routingExamples,
    ...(input.toolCallFormat ? { toolCallFormat: input.toolCallFormat } : {}),
    lineage: {
      parent: input.parentVersion,
      parentSha256: input.parentSha256,
      trainedFrom: `dataset:${input.datasetFileName}@sha256:${input.dataset.sha256}`,
      dataset: {
        sha256: input.dataset.sha256,
        lines: input.dataset.lines,
        examples: input.dataset.examples,
        droppedTooLong: input.dataset.droppedTooLong,
        truncated: input.dataset.truncated,
        ...(input.malformed > 0 ? { malformed: input.malformed } : {}),
        ...(input.dataset.toolCalls &&
        (input.dataset.toolCalls.examples > 0 || input.dataset.toolCalls.badTools > 0)
          ? { toolCalls: input.dataset.toolCalls }
          : {}),
      },
      heldout: {
        examples: report.heldout?.examples ?? input.heldoutExamples,
        lossBefore: report.heldout?.lossBefore ?? null,
        lossAfter: report.heldout?.lossAfter ?? null,
        ...(report.heldout?.preferenceAccuracyAfter !== undefined
          ? {
              preferenceAccuracyBefore: report.heldout.preferenceAccuracyBefore ?? null,
              preferenceAccuracyAfter: report.heldout.preferenceAccuracyAfter ?? null,
            }
          : {}),
      },
      method: report.method,
      hyperparameters: report.hyperparameters,
      seed: report.seed,
      lossCurve: report.lossCurve,
      trainer: report.trainer,
      torch: report.torch,
      device: report.device,
      worldSize: report.worldSize,
      harnessVersion: input.harnessVersion,
    },
  };
}

/** Indented JSON with each [step, loss] pair on one line (a long run has thousands). */
export function manifestJson(manifest: TrainedAdapterManifest): string {
  const pretty = JSON.stringify(manifest, null, 2);
  const number = String.raw`-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|null`;
  const pair = new RegExp(String.raw`\[\s+(${number}),\s+(${number})\s+\]`, "g");
  return `${pretty.replace(pair, "[$1, $2]")}\n`;
}

/** Writes `manifest` to `path` atomically (a reader never sees half a file). */
export async function writeManifest(path: string, manifest: TrainedAdapterManifest): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, manifestJson(manifest));
  await rename(tmp, path);
}
