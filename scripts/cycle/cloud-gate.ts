/**
 * The contract on the cloud side of the cycle: the candidate against the live version, run by
 * the app's own core and contract runner on a real engine, before anything is published.
 * One core holds the base and the live adapters; the candidate target is the live one with the
 * domain's adapter file swapped for the candidate's, so both answer with the same router,
 * prompts and engine and differ only in that file (what the app's gate compares too).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AdapterSelection } from "../../electron/api";
import { DEFAULT_SYSTEM_PROMPT } from "../../common/prompts";
import {
  type ContractReport,
  type ContractTarget,
  runContract,
} from "../../electron/core/contract/contract-runner";
import { coreTarget } from "../../electron/core/contract/core-target";
import type { Contract } from "../../electron/core/contract/contract-schema";
import type { EngineClient } from "../../electron/core/engine/types";
import { assembleCore } from "../../electron/core/index";
import {
  judgeTaughtRun,
  taughtContract,
  withTaught,
  type TaughtSuite,
  type TaughtVerdict,
} from "../../electron/core/releases/taught-suite";

export interface CloudGateOptions {
  base: string;
  /** Folder with the live adapters (*.gguf + manifests); may be empty on a first cycle. */
  liveDir: string;
  /** The live file of the candidate's adapter (in liveDir), or null when nothing of it is live yet. */
  livePath: string | null;
  candidatePath: string;
  candidate: { adapterId: string; version: string };
  contract: Contract;
  makeEngine: () => EngineClient;
  /**
   * Taught suites to judge too (earlier cycles' and this one's, `ownId`), candidate against live
   * on the same core: a forgotten or unlearned suite rejects the candidate.
   */
  taught?: { suites: TaughtSuite[]; ownId: string | null; minRate?: number };
  onProgress?: (done: number, total: number, caseId: string) => void;
  signal?: AbortSignal;
}

/**
 * Runs the contract (and the taught suites); resolves with its report (passed or not, the taught
 * verdict merged in). Throws when the base does not load.
 */
export async function runCloudGate(
  o: CloudGateOptions,
): Promise<ContractReport & { taught?: TaughtVerdict }> {
  return withLiveCore(o, async (live) => {
    // Installing copied the live file into the core's folder: find it by the adapter's id.
    const livePath = o.livePath
      ? ((await live.resolve({ pinned: o.candidate.adapterId }, "")).adapters[0]?.path ?? null)
      : null;
    const candidate: ContractTarget = {
      resolve: async (selection: AdapterSelection, text: string) => {
        // Nothing live yet: the pinned domain answers with the candidate alone.
        if (livePath === null && typeof selection === "object" && "pinned" in selection) {
          const routing = await live.resolve("base", text);
          return {
            routing: { ...routing.routing, mode: "pinned" as const },
            adapters: [{ path: o.candidatePath, scale: 1 }],
          };
        }
        const r = await live.resolve(selection, text);
        return {
          routing: r.routing,
          adapters: r.adapters.map((a) => (a.path === livePath ? { ...a, path: o.candidatePath } : a)),
        };
      },
      generate: (history, options, signal) => live.generate(history, options, signal),
    };
    const run = (contract: Contract) =>
      runContract(contract, {
        target: candidate,
        baseline: livePath ? live : undefined,
        candidate: o.candidate,
        shareAnswers: true,
        systemPrompt: DEFAULT_SYSTEM_PROMPT,
        onProgress: o.onProgress,
        signal: o.signal,
      });
    const report = await run(o.contract);
    const suites = o.taught?.suites.filter((s) => s.cases.length > 0) ?? [];
    if (suites.length === 0) return report;
    const taughtRun = await run(taughtContract(suites));
    return withTaught(report, judgeTaughtRun(taughtRun, suites, o.taught!.ownId, o.taught!.minRate));
  });
}

/**
 * Runs `fn` with the live set as a contract target: the app's own core on `base` with the
 * adapters of `liveDir`, on an engine from `makeEngine`, closed afterwards. The gate and the
 * self-improvement sampling (self-improve.ts) answer through it.
 */
export async function withLiveCore<T>(
  o: Pick<CloudGateOptions, "base" | "liveDir" | "makeEngine">,
  fn: (live: ContractTarget) => Promise<T>,
): Promise<T> {
  const dataDir = await mkdtemp(join(tmpdir(), "macaron-cycle-gate-"));
  const core = await assembleCore(
    { dataDir, initialModel: o.base, adaptersDir: o.liveDir, demoAdapters: false, log: () => undefined },
    o.makeEngine,
  );
  try {
    const status = core.engineStatus();
    if (status.state !== "ready") throw new Error(`Cannot load ${o.base}: ${status.error ?? status.state}`);
    return await fn(coreTarget(core));
  } finally {
    await core.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The contract's cases of one domain (tag), with the thresholds that apply to them. */
export function domainSuite(contract: Contract, domain: string): Contract {
  const cases = contract.cases.filter((c) => c.tags.includes(domain));
  if (cases.length === 0)
    throw new Error(`The contract ${contract.contract} has no case tagged "${domain}".`);
  return { ...contract, cases };
}
