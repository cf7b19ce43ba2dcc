/**
 * One improvement cycle for one domain (the paper's loop), against a running cloud service:
 *   1. export the domain's prepared data (train and held-out splits, with the report of every
 *      count) — cloud/prepare;
 *   2. train the next version from the live one as parent — cloud/training (PyTorch);
 *   3. run the contract on the cloud side, candidate against live — cloud-gate.ts;
 *   4. publish it to the registry with its lineage only if it passed.
 * The app then downloads it, runs its own gate, and it goes live or stays rejected.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ContractReport } from "../../electron/core/contract/contract-runner";
import type { Contract } from "../../electron/core/contract/contract-schema";
import type { EngineClient } from "../../electron/core/engine/types";
import { fetchExport } from "../../cloud/prepare/client";
import type { ExportReport } from "../../cloud/prepare/report";
import {
  downloadEntry,
  fetchRegistryIndex,
  liveEntry,
  publishAdapter,
  publishManifestOf,
} from "../../cloud/registry-client";
import type { PublishManifest, RegistryEntry } from "../../common/registry-protocol";
import {
  trainAdapter,
  type TrainOptions,
  type TrainProgress,
  type TrainResult,
} from "../../cloud/training/train";
import { domainSuite, runCloudGate } from "./cloud-gate";

export interface CycleOptions {
  /** The cloud service, e.g. http://127.0.0.1:8787. */
  cloud: string;
  adminKey: string;
  /** The adapter id and domain to improve (chat, coding, agent, ui…). */
  domain: string;
  base: string;
  /** Working folder (exports, parent, candidate); kept for inspection. */
  work: string;
  /** The contract whose `domain`-tagged cases judge the candidate. */
  contract: Contract;
  makeEngine: () => EngineClient;
  /** Trainer options (steps, lr, rank, seed…) passed through. */
  training?: Partial<
    Pick<
      TrainOptions,
      "steps" | "epochs" | "lr" | "rank" | "alpha" | "seed" | "batchSize" | "nproc" | "version" | "threads"
    >
  >;
  /** Export options: the base's tokens per byte matter for the length filter. */
  export?: { maxTokens?: number; bytesPerToken?: number; heldoutShare?: number };
  log?: (line: string) => void;
  onTrainProgress?: (p: TrainProgress) => void;
  signal?: AbortSignal;
}

export interface CycleResult {
  domain: string;
  exported: { train: number; heldout: number; report: ExportReport };
  parent: RegistryEntry | null;
  trained: TrainResult;
  contract: ContractReport;
  /** The registry entry when the candidate passed, null when it was rejected. */
  published: RegistryEntry | null;
  seconds: { export: number; train: number; contract: number; publish: number; total: number };
}

const since = (t: number): number => (performance.now() - t) / 1000;

/** Writes the live version's file and its manifest into `dir` (what the trainer and the gate read). */
async function fetchParent(o: CycleOptions, entry: RegistryEntry, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${entry.id}.gguf`);
  await downloadEntry(o.cloud, entry, path);
  const { url: _u, publishedAt: _p, ...manifest } = entry;
  await writeFile(join(dir, `${entry.id}.json`), `${JSON.stringify(manifest, null, 2)}\n`);
  return path;
}

/** What the registry keeps of a trained version: the entry fields and the full training lineage. */
function publishManifest(
  trained: TrainResult,
  parentEntry: RegistryEntry | null,
  contract: ContractReport,
  exportSha: string,
): PublishManifest {
  const m = trained.manifest;
  const entry = publishManifestOf(m);
  return {
    ...entry,
    // A retrained version keeps what the router knows of the adapter: the router cases then
    // judge the same routing on both sides, and the router learns on its own from the user.
    routingExamples: parentEntry ? parentEntry.routingExamples : m.routingExamples,
    lineage: {
      parent: entry.lineage.parent,
      trainedFrom: `export:${m.domain}.jsonl@sha256:${exportSha}`,
      details: {
        ...entry.lineage.details,
        contract: {
          label: `${contract.contract}@${contract.version}`,
          passed: contract.passed,
          passRate: contract.passRate,
          comparison: contract.comparison ?? null,
        },
      },
    },
    releaseNotes: `Trained on ${m.lineage.dataset.examples} examples from feedback; ${contract.contract}@${contract.version} passed at ${(contract.passRate * 100).toFixed(0)}%.`,
  };
}

/** Runs one cycle. Throws on a failure to export, train or evaluate; a rejection is a result. */
export async function runCycle(o: CycleOptions): Promise<CycleResult> {
  const log = o.log ?? (() => undefined);
  const started = performance.now();
  await rm(o.work, { recursive: true, force: true });
  await mkdir(o.work, { recursive: true });

  let t = performance.now();
  const query = { url: o.cloud, adminKey: o.adminKey, domain: o.domain, type: "sft" as const, ...o.export };
  const train = await fetchExport({ ...query, split: "train" }, o.signal);
  const heldout = await fetchExport({ ...query, split: "heldout" }, o.signal);
  if (train.lines.length === 0)
    throw new Error(
      `The ${o.domain} export has no training example (${JSON.stringify(train.report.dropped)}).`,
    );
  const trainPath = join(o.work, `${o.domain}.jsonl`);
  const heldoutPath = join(o.work, `${o.domain}.heldout.jsonl`);
  await writeFile(trainPath, train.jsonl);
  if (heldout.lines.length > 0) await writeFile(heldoutPath, heldout.jsonl);
  const exportSeconds = since(t);
  log(`exported ${train.lines.length} training and ${heldout.lines.length} held-out examples of ${o.domain}`);

  const index = await fetchRegistryIndex(o.cloud, o.signal);
  const parent = liveEntry(index, o.domain);
  const liveDir = join(o.work, "live");
  await mkdir(liveDir, { recursive: true });
  const parentPath = parent ? await fetchParent(o, parent, liveDir) : null;
  log(
    parent ? `parent: ${parent.id} ${parent.version}` : `no live ${o.domain} version: training from the base`,
  );

  t = performance.now();
  const trained = await trainAdapter(
    {
      base: o.base,
      data: trainPath,
      heldout: heldout.lines.length > 0 ? heldoutPath : undefined,
      out: join(o.work, "candidate"),
      id: o.domain,
      domain: o.domain,
      from: parentPath ?? undefined,
      parentVersion: parent?.version,
      signal: o.signal,
      ...o.training,
    },
    o.onTrainProgress ?? (() => undefined),
  );
  const trainSeconds = since(t);
  log(`trained ${trained.manifest.id} ${trained.manifest.version} in ${trainSeconds.toFixed(1)} s`);

  t = performance.now();
  const contract = await runCloudGate({
    base: o.base,
    liveDir,
    livePath: parentPath,
    candidatePath: trained.adapterPath,
    candidate: { adapterId: o.domain, version: trained.manifest.version },
    contract: domainSuite(o.contract, o.domain),
    makeEngine: o.makeEngine,
    signal: o.signal,
  });
  const contractSeconds = since(t);
  log(`contract ${contract.contract}@${contract.version}: ${contract.passed ? "passed" : "failed"}`);

  t = performance.now();
  let published: RegistryEntry | null = null;
  if (contract.passed) {
    const file = await readFile(trained.adapterPath);
    published = await publishAdapter(
      { url: o.cloud, adminKey: o.adminKey },
      publishManifest(trained, parent, contract, createSha(train.jsonl)),
      file,
    );
    log(`published ${published.id} ${published.version}`);
  }
  await writeFile(join(o.work, "contract.json"), `${JSON.stringify(contract, null, 2)}\n`);
  return {
    domain: o.domain,
    exported: { train: train.lines.length, heldout: heldout.lines.length, report: train.report },
    parent,
    trained,
    contract,
    published,
    seconds: {
      export: exportSeconds,
      train: trainSeconds,
      contract: contractSeconds,
      publish: since(t),
      total: since(started),
    },
  };
}

function createSha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
