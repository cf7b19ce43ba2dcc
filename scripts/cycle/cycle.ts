/**
 * One improvement cycle for one domain (the paper's loop), against a running cloud service:
 *   1. export the domain's prepared data (train and held-out splits, with the report of every
 *      count) — cloud/prepare; the held-out SFT split becomes this cycle's taught suite;
 *   2. train the next version from the live one as parent — cloud/training (PyTorch): SFT on the
 *      export plus a replay of earlier accepted lines (`replayDir`), DPO on preference pairs, or
 *      SFT then DPO (`method`);
 *   3. run the contract on the cloud side, candidate against live, and every taught suite so far
 *      (this cycle's at a stated rate, earlier ones within a margin of live) — cloud-gate.ts;
 *   4. publish it to the registry with its lineage (taught suites included) only if it passed.
 * The app then downloads it, runs its own gate (the taught suites too), and it goes live or stays
 * rejected.
 *
 * With `selfImprove` the training lines are not the export but the live specialist's own checked
 * attempts (self-improve/self-improve.ts): sampled K times per task prompt, judged by the
 * contract's checks, the best passing answers as SFT lines and (best passing, worst failing) as
 * DPO pairs; the same trainer, gate and publish follow, and the lineage says the data was
 * self-generated (`cycle.selfImprove`). With `method: "grpo"` every prompt's answers whose rewards
 * differ are one GRPO group (self-improve/groups.ts), trained with the trainer's group-relative
 * policy gradient from the live version (its own reference and sampler). With
 * `selfImprove.episodes` (agent), the live Agent's multi-step episodes through the agent loop add
 * their done trajectories as SFT lines and (done, failed) trajectories as DPO pairs
 * (self-improve/episodes.ts); the lineage records them as self-generated episodes.
 *
 * Every GRPO cycle also takes the users' own trajectories (issue 29 item 2): the cloud's `groups`
 * export (cloud/prepare/groups.ts) lays each prompt's answers that called tools out as one group
 * with their rewards, failures included (a lone failure against a stated baseline, so it is
 * trained away from although nothing succeeded beside it). Without `selfImprove` they are the
 * whole GRPO data; with it they join the self-generated groups. The lineage counts the groups by
 * source (`cycle.groupSources`: user vs self-generated) and keeps the groups export's report
 * (`cycle.userGroupsExport`, with which negatives its lines train on).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sha256File } from "../../common/hashing";
import type { ContractReport } from "../../electron/core/contract/contract-runner";
import type { Contract } from "../../electron/core/contract/contract-schema";
import type { EngineClient } from "../../electron/core/engine/types";
import type { ExportType } from "../../cloud/prepare/candidates";
import { fetchExport, type FetchedExport } from "../../cloud/prepare/client";
import { promptKey, type Message } from "../../cloud/prepare/normalize";
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
import {
  encodeTaught,
  taughtOf,
  taughtSuiteFrom,
  type TaughtSuite,
  type TaughtVerdict,
} from "../../electron/core/releases/taught-suite";
import { domainSuite, runCloudGate, withLiveCore } from "./cloud-gate";
import {
  fetchRawExport,
  routingOutcomes,
  parentRouterToCarry,
  runRouterStage,
  type RouterStageResult,
  type RoutingLabel,
} from "./router-cycle";
import type { RouterCandidate } from "../../electron/core/router";
import { routerInLineage, ROUTER_LINEAGE_KEY } from "../../electron/core/router/routing-head";
import {
  selfImproveData,
  type SelfImproveOptions,
  type SelfImproveReport,
  withSuite,
} from "./self-improve/self-improve";
import type { GroupLine } from "./self-improve/groups";
import type { EpisodeGroupLine } from "./self-improve/episode-data";
import { episodeGate, type EpisodeGate } from "./episode-gate";

/** How the candidate is trained: on the SFT export, the preference export, or SFT then DPO. */
export type CycleMethod = "sft" | "dpo" | "sft+dpo" | "grpo";
export const CYCLE_METHODS: readonly CycleMethod[] = ["sft", "dpo", "sft+dpo", "grpo"];
/** Most earlier accepted lines replayed into a cycle's training set (and kept for the next). */
export const REPLAY_MAX_LINES = 400;

export interface CycleOptions {
  /** The cloud service, e.g. http://127.0.0.1:8787. */
  cloud: string;
  adminKey: string;
  /** The adapter id and domain to improve (chat, coding, agent, ui…). */
  domain: string;
  /**
   * The base model file the adapter is trained for: its registry versions (parent, publish) are
   * this file's, by sha256 (see fitsBase). Any base a team chooses, not only the demo's.
   */
  base: string;
  /**
   * sha256 of other files of the same weights the published version fits as well (other
   * quantizations of the base): apps running them are offered it too.
   */
  compatibleBases?: string[];
  /** Working folder (exports, parent, candidate); kept for inspection. */
  work: string;
  /** The contract whose `domain`-tagged cases judge the candidate. */
  contract: Contract;
  makeEngine: () => EngineClient;
  /** Trainer options (steps, lr, rank, seed…) passed through. */
  training?: Partial<
    Pick<
      TrainOptions,
      | "steps"
      | "epochs"
      | "lr"
      | "rank"
      | "alpha"
      | "seed"
      | "batchSize"
      | "nproc"
      | "version"
      | "threads"
      | "device"
    >
  >;
  /** Export options: the base's tokens per byte matter for the length filter. */
  export?: { maxTokens?: number; bytesPerToken?: number; heldoutShare?: number };
  /** Default "sft". */
  method?: CycleMethod;
  /**
   * Folder of the accepted training lines per domain (`<domain>.jsonl`): replayed into the next
   * cycle's SFT set so earlier lessons are kept, rewritten after a publish. Absent: no replay.
   */
  replayDir?: string;
  /** The share of its own taught suite the candidate must answer right (default TAUGHT_MIN_RATE). */
  taughtMinRate?: number;
  /**
   * Publish the taught suites' cases (users' prompts and answers) in the registry lineage, so
   * the app's gate judges them too. Off by default: the lineage goes to every install, so only
   * the suites' ids are published and the cases stay in `replayDir` (`<domain>.taught.json.gz`),
   * where the next cycle's cloud gate reads them.
   */
  publishTaughtCases?: boolean;
  /**
   * Learn from the live specialist's own checked attempts instead of the export (see above).
   * Needs a live version of the domain; the method defaults to "sft+dpo".
   */
  selfImprove?: SelfImproveOptions;
  /**
   * GRPO: the users' trajectories as groups (the cloud's groups export) join the training data
   * (default true). Without `selfImprove` they are all a GRPO cycle learns from.
   */
  userGroups?: boolean;
  /**
   * Train the router too (router-cycle.ts): a routing head for this base from the live
   * adapters' routing examples, the seed training prompts in `seedsDir` and the routing outcomes
   * in the raw export (`outcomes`, default true), judged on the contract's router suite against
   * the live router. A passing head rides in the published version's lineage; a rejected one is
   * dropped and the parent's head, if it carried one, is carried on.
   */
  router?: { seedsDir?: string; outcomes?: boolean; minRate?: number };
  log?: (line: string) => void;
  onTrainProgress?: (p: TrainProgress) => void;
  signal?: AbortSignal;
}

export interface CycleResult {
  domain: string;
  method: CycleMethod;
  exported: {
    train: number;
    heldout: number;
    report: ExportReport;
    /** The preference export (dpo, sft+dpo). */
    preference?: { train: number; heldout: number; report: ExportReport };
    /** The groups export: users' trajectories as GRPO groups (grpo). */
    groups?: { train: number; heldout: number; report: ExportReport };
    /** Earlier accepted lines added to the SFT set. */
    replayed: number;
  };
  /** This cycle's taught suite (its held-out SFT lines) and every earlier one judged. */
  taught: { own: TaughtSuite; earlier: TaughtSuite[]; verdict: TaughtVerdict | null };
  /** DPO: held-out preference accuracy before and after (null without held-out pairs). */
  preferenceAccuracy: { before: number | null; after: number | null } | null;
  parent: RegistryEntry | null;
  trained: TrainResult;
  /** The contract's report with the taught suites' verdict merged in. */
  contract: ContractReport & { taught?: TaughtVerdict };
  /** The registry entry when the candidate passed, null when it was rejected. */
  published: RegistryEntry | null;
  /** A self-improvement cycle's data: samples, share that passed per domain, lines and pairs. */
  selfImprove?: SelfImproveReport;
  /** `selfImprove.episodes`: live and candidate on episode tasks not trained on (episode-gate.ts). */
  episodesGate?: EpisodeGate;
  /** The router stage (`router`): the head trained, its verdict, and whether it was published. */
  router?: {
    version: number;
    verdict: RouterStageResult["verdict"];
    examples: RouterStageResult["examples"];
    /** The head published with the version: the new one, the parent's carried on, or none. */
    published: "new" | "carried" | "none";
  };
  /** Why the parent's router artifact was not carried on (unusable); absent when it was or none. */
  parentRouterDropped?: string;
  /** `export` is the sampling and judging of a self-improvement cycle. */
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
  contract: ContractReport & { taught?: TaughtVerdict },
  exportSha: string,
  cycle: {
    method: CycleMethod;
    suites: TaughtSuite[];
    publishCases: boolean;
    report: ExportReport;
    preference: ExportReport | null;
    replayed: number;
    preferenceAccuracy: CycleResult["preferenceAccuracy"];
    sft: TrainResult | null;
    selfImprove: SelfImproveReport | null;
    /** GRPO: the groups trained by source, and the users' groups export's report. */
    groupSources: { user: number; selfGenerated: number } | null;
    userGroups: ExportReport | null;
    episodesGate: EpisodeGate | null;
    compatibleBases: string[];
    /** What the version carries in `details.router` (router-cycle.ts), and the router gate's verdict. */
    router: { encoded: unknown; verdict: RouterStageResult["verdict"] | null } | null;
    /** Why the parent's router artifact was not carried on (unusable), null when it was or none. */
    routerDropped?: string | null;
  },
): PublishManifest {
  const m = trained.manifest;
  const entry = publishManifestOf(m);
  const compatible = cycle.compatibleBases.filter((sha) => sha !== entry.base.baseSha256);
  return {
    ...entry,
    base: { ...entry.base, ...(compatible.length > 0 ? { compatibleSha256: compatible } : {}) },
    // A retrained version keeps what the router knows of the adapter: the router cases then
    // judge the same routing on both sides, and the router learns on its own from the user.
    routingExamples: parentEntry ? parentEntry.routingExamples : m.routingExamples,
    lineage: {
      parent: entry.lineage.parent,
      trainedFrom: `${cycle.selfImprove ? "self-improve" : "export"}:${m.domain}.jsonl@sha256:${exportSha}`,
      details: {
        ...entry.lineage.details,
        contract: {
          label: `${contract.contract}@${contract.version}`,
          passed: contract.passed,
          passRate: contract.passRate,
          comparison: contract.comparison ?? null,
        },
        // Every taught suite so far, this cycle's last with the rate it was accepted at: the
        // next cycle and the app's gate judge later candidates on them.
        taught: encodeTaught(cycle.suites, cycle.publishCases),
        cycle: {
          method: cycle.method,
          replayed: cycle.replayed,
          // Self-generated data: no export, but what was sampled, how much passed, what was kept.
          ...(cycle.selfImprove
            ? { selfImprove: { selfGenerated: true, ...cycle.selfImprove } }
            : {
                export: {
                  dropped: cycle.report.dropped,
                  splits: cycle.report.splits,
                  quality: cycle.report.quality,
                },
              }),
          ...(cycle.preference
            ? { preferenceExport: { dropped: cycle.preference.dropped, splits: cycle.preference.splits } }
            : {}),
          // Which groups came from users' trajectories and which the live version generated.
          ...(cycle.groupSources ? { groupSources: cycle.groupSources } : {}),
          ...(cycle.userGroups
            ? {
                userGroupsExport: {
                  dropped: cycle.userGroups.dropped,
                  splits: cycle.userGroups.splits,
                  ...(cycle.userGroups.trajectories ? { trajectories: cycle.userGroups.trajectories } : {}),
                },
              }
            : {}),
          ...(cycle.preferenceAccuracy ? { preferenceAccuracy: cycle.preferenceAccuracy } : {}),
          ...(cycle.sft
            ? {
                sftStage: {
                  examples: cycle.sft.dataset.examples,
                  heldout: cycle.sft.manifest.lineage.heldout,
                },
              }
            : {}),
          taughtResults: contract.taught?.suites ?? [],
          ...(cycle.episodesGate ? { episodesGate: cycle.episodesGate } : {}),
          ...(cycle.router?.verdict ? { routerGate: withoutCases(cycle.router.verdict) } : {}),
          ...(cycle.routerDropped ? { parentRouterDropped: cycle.routerDropped } : {}),
        },
        ...(cycle.router ? { [ROUTER_LINEAGE_KEY]: cycle.router.encoded } : {}),
      },
    },
    releaseNotes: `Trained (${cycle.method}) on ${m.lineage.dataset.examples} examples from ${cycle.selfImprove ? `its own checked attempts (self-generated: ${cycle.method === "grpo" ? `${cycle.groupSources?.selfGenerated ?? m.lineage.dataset.lines} GRPO groups` : `${cycle.selfImprove.sftLines} SFT lines, ${cycle.selfImprove.dpoPairs} DPO pairs`}, ${cycle.selfImprove.samples} samples per prompt${cycle.selfImprove.episodes ? `; self-generated episodes: ${cycle.selfImprove.episodes.sftLines} done trajectories, ${cycle.selfImprove.episodes.dpoPairs} pairs against failed ones, of ${cycle.selfImprove.episodes.episodes} episodes` : ""})` : "feedback"}${userGroupsNote(cycle.groupSources, cycle.userGroups)}; ${contract.contract}@${contract.version} passed at ${(contract.passRate * 100).toFixed(0)}%.`,
  };
}

/** The release notes' words on users' trajectory groups, when a GRPO cycle trained any. */
function userGroupsNote(
  sources: { user: number; selfGenerated: number } | null,
  report: ExportReport | null,
): string {
  if (!sources || sources.user === 0) return "";
  const trained = report?.trajectories?.negativesTrained;
  return (
    `; users' trajectories: ${sources.user} GRPO groups` +
    (trained
      ? ` (${trained.inGroups} failed answers, ${trained.unpaired} of them with no success beside them)`
      : "")
  );
}

/** Runs one cycle. Throws on a failure to export, train or evaluate; a rejection is a result. */
export async function runCycle(o: CycleOptions): Promise<CycleResult> {
  const log = o.log ?? (() => undefined);
  const method = o.method ?? (o.selfImprove ? "sft+dpo" : "sft");
  if (method === "grpo" && !o.selfImprove && o.userGroups === false)
    throw new Error(
      "GRPO trains on groups of answers with rewards: the users' trajectories or --self-improve's samples.",
    );
  const started = performance.now();
  await rm(o.work, { recursive: true, force: true });
  await mkdir(o.work, { recursive: true });

  let t = performance.now();
  // The parent is this base's live version: another base's was trained on other weights.
  const baseSha256 = await sha256File(o.base);
  const index = await fetchRegistryIndex(o.cloud, o.signal, baseSha256);
  const parent = liveEntry(index, o.domain, baseSha256);
  const earlier = parent ? await earlierSuites(o.replayDir, o.domain, parent.lineage.details) : [];
  const liveDir = join(o.work, "live");
  await mkdir(liveDir, { recursive: true });
  const parentPath = parent ? await fetchParent(o, parent, liveDir) : null;

  const query = { url: o.cloud, adminKey: o.adminKey, domain: o.domain, ...o.export };
  const get = (type: ExportType, split: "train" | "heldout") =>
    fetchExport({ ...query, type, split }, o.signal);
  let self: SelfImproveReport | null = null;
  let groups: Array<GroupLine | EpisodeGroupLine> = [];
  // Users' trajectories, succeeded and failed, as GRPO groups with their rewards (groups export).
  const users =
    method === "grpo" && o.userGroups !== false
      ? { train: await get("groups", "train"), heldout: await get("groups", "heldout") }
      : null;
  const userGroups = users?.train.lines ?? [];
  let selfSuite: Contract | null = null;
  let train: FetchedExport;
  let heldout: FetchedExport;
  let pref: { train: FetchedExport; heldout: FetchedExport } | null;
  if (o.selfImprove) {
    if (!parent) throw new Error(`Self-improvement needs a live ${o.domain} version to sample from.`);
    // The export's lines are read for their prompts only (users' prompts, judged like the rest).
    const prompts = await get("sft", "train");
    const data = await selfImproveData({
      domain: o.domain,
      live: (fn) => withLiveCore({ base: o.base, liveDir, makeEngine: o.makeEngine }, fn),
      heldout: o.contract,
      options: o.selfImprove,
      userLines: o.selfImprove.userPrompts === false ? [] : prompts.lines,
      signal: o.signal,
      log,
    });
    self = data.report;
    selfSuite = data.suite;
    const generated = (type: "sft" | "preference", split: "train" | "heldout", lines: unknown[]) =>
      selfGenerated(prompts.report, type, split, lines);
    train = generated("sft", "train", [...data.selection.sft, ...(data.episodes?.sft ?? [])]);
    heldout = generated("sft", "heldout", []);
    pref =
      method === "sft" || method === "grpo"
        ? null
        : {
            train: generated("preference", "train", [...data.selection.dpo, ...(data.episodes?.dpo ?? [])]),
            heldout: generated("preference", "heldout", []),
          };
    // Episodes' groups: completions with their calls, results outside the loss (tokenize-dataset.ts).
    groups = [...data.groups, ...(data.episodes?.groups ?? [])];
    if (method === "grpo" && groups.length === 0 && userGroups.length === 0)
      throw new Error(
        `No ${o.domain} prompt's sampled answers differ in reward and no user's trajectory was exported: GRPO has nothing to learn from.`,
      );
    if (method !== "dpo" && method !== "grpo" && train.lines.length === 0)
      throw new Error(
        `No sampled ${o.domain} answer passed its checks${data.episodes ? " and no episode was done" : ""}: nothing to learn from.`,
      );
  } else {
    // The SFT export: training lines (sft, sft+dpo) and the held-out split, the taught suite.
    train = await get("sft", "train");
    heldout = await get("sft", "heldout");
    pref =
      method === "sft" || method === "grpo"
        ? null
        : { train: await get("preference", "train"), heldout: await get("preference", "heldout") };
    if (method === "grpo" && userGroups.length === 0)
      throw new Error(
        `The ${o.domain} groups export has no user's trajectory to learn from (${JSON.stringify(users!.train.report.dropped)}).`,
      );
    if (method !== "dpo" && method !== "grpo" && train.lines.length === 0)
      throw new Error(
        `The ${o.domain} export has no training example (${JSON.stringify(train.report.dropped)}).`,
      );
  }
  if (pref && method === "dpo" && pref.train.lines.length === 0)
    throw new Error(
      `The ${o.domain} preference ${self ? "data" : "export"} has no pair (${JSON.stringify(pref.train.report.dropped)}).`,
    );

  // Replay: earlier accepted lines whose prompt is neither in this export nor held out.
  const replay = await readReplay(o.replayDir, o.domain);
  const taken = new Set([...train.lines, ...heldout.lines].map(linePrompt));
  for (const s of earlier) for (const c of s.cases) taken.add(promptKey(c.conversation));
  const replayed = replay.filter((l) => !taken.has(linePrompt(l))).slice(0, REPLAY_MAX_LINES);
  const trainPath = join(o.work, `${o.domain}.jsonl`);
  const heldoutPath = join(o.work, `${o.domain}.heldout.jsonl`);
  await writeFile(trainPath, toJsonl([...train.lines, ...replayed]));
  if (heldout.lines.length > 0) await writeFile(heldoutPath, heldout.jsonl);
  const prefPath = join(o.work, `${o.domain}.preference.jsonl`);
  const prefHeldoutPath = join(o.work, `${o.domain}.preference.heldout.jsonl`);
  if (pref) {
    await writeFile(prefPath, pref.train.jsonl);
    if (pref.heldout.lines.length > 0) await writeFile(prefHeldoutPath, pref.heldout.jsonl);
  }
  const groupsPath = join(o.work, `${o.domain}.groups.jsonl`);
  const groupsHeldoutPath = join(o.work, `${o.domain}.groups.heldout.jsonl`);
  if (method === "grpo") await writeFile(groupsPath, toJsonl([...groups, ...userGroups]));
  // The users' held-out groups: the trainer's held-out loss and pairwise accuracy.
  if (users && users.heldout.lines.length > 0) await writeFile(groupsHeldoutPath, users.heldout.jsonl);
  const groupSources = method === "grpo" ? { user: userGroups.length, selfGenerated: groups.length } : null;
  const exportSeconds = since(t);
  log(
    `${self ? "self-generated" : "exported"} ${train.lines.length} training and ${heldout.lines.length} held-out examples of ${o.domain}` +
      (replayed.length ? `, replaying ${replayed.length} earlier accepted lines` : "") +
      (pref ? `; ${pref.train.lines.length} preference pairs (${pref.heldout.lines.length} held out)` : "") +
      (users
        ? `; ${users.train.lines.length} groups of users' trajectories (${users.heldout.lines.length} held out)`
        : ""),
  );

  log(
    parent ? `parent: ${parent.id} ${parent.version}` : `no live ${o.domain} version: training from the base`,
  );

  t = performance.now();
  const common = {
    base: o.base,
    id: o.domain,
    domain: o.domain,
    signal: o.signal,
    ...o.training,
  };
  const progress = o.onTrainProgress ?? (() => undefined);
  let sft: TrainResult | null = null;
  if (method !== "dpo" && method !== "grpo") {
    sft = await trainAdapter(
      {
        ...common,
        data: trainPath,
        heldout: heldout.lines.length > 0 ? heldoutPath : undefined,
        out: join(o.work, method === "sft" ? "candidate" : "sft"),
        from: parentPath ?? undefined,
        parentVersion: parent?.version,
      },
      progress,
    );
  }
  let trained: TrainResult;
  if (method === "sft") trained = sft!;
  else if (method === "grpo") {
    // The groups were sampled by the live version: it is the reference and the start.
    const usersPart = `${userGroups.length} groups of users' trajectories`;
    log(
      self
        ? `GRPO on ${groups.length} groups of sampled answers whose rewards differ` +
            (userGroups.length > 0 ? ` and ${usersPart}` : "")
        : `GRPO on ${usersPart}`,
    );
    trained = await trainAdapter(
      {
        ...common,
        method: "grpo",
        data: groupsPath,
        heldout: users && users.heldout.lines.length > 0 ? groupsHeldoutPath : undefined,
        out: join(o.work, "candidate"),
        from: parentPath ?? undefined,
        parentVersion: parent?.version,
      },
      progress,
    );
  } else if (pref!.train.lines.length === 0) {
    log("no preference pair to learn from: the SFT stage is the candidate");
    trained = sft!;
  } else {
    // DPO from the SFT stage (its own reference) or from the live version.
    trained = await trainAdapter(
      {
        ...common,
        method: "dpo",
        data: prefPath,
        heldout: pref!.heldout.lines.length > 0 ? prefHeldoutPath : undefined,
        out: join(o.work, "candidate"),
        from: sft?.adapterPath ?? parentPath ?? undefined,
        parentVersion: parent?.version,
        version: sft?.manifest.version,
      },
      progress,
    );
  }
  const trainSeconds = since(t);
  const heldoutReport = trained.report.heldout;
  const preferenceAccuracy =
    trained.manifest.lineage.method === "dpo" || trained.manifest.lineage.method === "grpo"
      ? {
          before: heldoutReport?.preferenceAccuracyBefore ?? null,
          after: heldoutReport?.preferenceAccuracyAfter ?? null,
        }
      : null;
  log(
    `trained ${trained.manifest.id} ${trained.manifest.version} (${method}) in ${trainSeconds.toFixed(1)} s` +
      (preferenceAccuracy
        ? `; held-out preference accuracy ${fmt(preferenceAccuracy.before)} → ${fmt(preferenceAccuracy.after)}`
        : ""),
  );

  // This cycle's suite: its held-out lines that no earlier suite holds (the split is a function
  // of the prompt, so what earlier cycles held out is held out again while it is stored).
  const earlierPrompts = new Set(earlier.flatMap((s) => s.cases.map((c) => promptKey(c.conversation))));
  const own = taughtSuiteFrom(
    heldout.lines.filter((l) => !earlierPrompts.has(linePrompt(l))),
    o.domain,
    trained.manifest.version,
  );
  t = performance.now();
  let contract = await runCloudGate({
    base: o.base,
    liveDir,
    livePath: parentPath,
    candidatePath: trained.adapterPath,
    candidate: { adapterId: o.domain, version: trained.manifest.version },
    // A self-improvement candidate also answers generated prompts it was not trained on.
    contract: withSuite(domainSuite(o.contract, o.domain), selfSuite),
    makeEngine: o.makeEngine,
    taught: { suites: [...earlier, own], ownId: own.id, minRate: o.taughtMinRate },
    signal: o.signal,
  });
  // Episodes: the candidate must not do worse than live on episode tasks it was not trained on.
  let episodesGateResult: EpisodeGate | null = null;
  if (self?.episodes && o.selfImprove?.episodes) {
    episodesGateResult = await episodeGate({
      base: o.base,
      liveDir,
      candidate: trained,
      work: o.work,
      makeEngine: o.makeEngine,
      options: { ...o.selfImprove.episodes, salt: self.episodes.salt },
      trained: self.episodes.taskIds,
      samples: self.samples,
      temperature: self.temperature,
      minP: self.minP,
      promptSeed: self.promptSeed,
      margin: o.contract.thresholds.maxRegression ?? 0,
      signal: o.signal,
      log,
    });
    if (!episodesGateResult.passed)
      contract = { ...contract, passed: false, reasons: [...contract.reasons, episodesGateResult.reason!] };
  }
  const contractSeconds = since(t);
  log(`contract ${contract.contract}@${contract.version}: ${contract.passed ? "passed" : "failed"}`);
  for (const r of contract.taught?.suites ?? [])
    log(
      `taught ${r.id}${r.own ? " (this cycle)" : ""}: ${r.candidatePassed}/${r.cases} right` +
        (r.liveRate === null ? "" : `, live ${fmt(r.liveRate)}`) +
        `, required ${fmt(r.required)} ${r.ok ? "ok" : "FAILED"}`,
    );

  let routerStage: RouterStageResult | null = null;
  let routerPublished: { encoded: unknown; verdict: RouterStageResult["verdict"] | null } | null = null;
  // Decoded before it is carried on: an unusable parent head is dropped, not inherited forever.
  const parentCarry = parentRouterToCarry(parent ? routerInLineage(parent.lineage) : undefined, log);
  const parentRouter = parentCarry.encoded;
  if (contract.passed && o.router) {
    const candidates = routerCandidates(index, baseSha256, o.domain, parent ?? trained.manifest);
    const outcomes: RoutingLabel[] =
      o.router.outcomes === false
        ? []
        : routingOutcomes(
            await fetchRawExport(
              o.cloud,
              o.adminKey,
              [...new Set(candidates.map((c) => c.domain))],
              o.signal,
            ),
            candidates.map((c) => c.id),
          );
    routerStage = await runRouterStage({
      base: o.base,
      baseSha256,
      candidates,
      carrier: o.domain,
      contract: o.contract,
      makeEngine: o.makeEngine,
      seedsDir: o.router.seedsDir,
      outcomes,
      minRate: o.router.minRate,
      log,
    });
    routerPublished = routerStage.verdict.passed
      ? { encoded: routerStage.encoded, verdict: routerStage.verdict }
      : parentRouter !== undefined
        ? { encoded: parentRouter, verdict: routerStage.verdict }
        : null;
  } else if (parentRouter !== undefined) routerPublished = { encoded: parentRouter, verdict: null };

  t = performance.now();
  let published: RegistryEntry | null = null;
  if (contract.passed) {
    const ownResult = contract.taught?.suites.find((r) => r.own);
    const suites = [...earlier, { ...own, acceptedRate: ownResult?.candidateRate ?? null }].filter(
      (s) => s.cases.length > 0,
    );
    const file = await readFile(trained.adapterPath);
    const datasetPath = method === "dpo" ? prefPath : method === "grpo" ? groupsPath : trainPath;
    const datasetText = await readFile(datasetPath, "utf8");
    published = await publishAdapter(
      { url: o.cloud, adminKey: o.adminKey },
      publishManifest(trained, parent, contract, createSha(datasetText), {
        method,
        suites,
        publishCases: o.publishTaughtCases === true,
        report: train.report,
        preference: pref?.train.report ?? null,
        replayed: replayed.length,
        preferenceAccuracy,
        sft: method === "sft+dpo" ? sft : null,
        selfImprove: self,
        groupSources,
        userGroups: users?.train.report ?? null,
        episodesGate: episodesGateResult,
        compatibleBases: o.compatibleBases ?? [],
        router: routerPublished,
        routerDropped: parentCarry.dropped,
      }),
      file,
    );
    log(`published ${published.id} ${published.version}`);
    // What this version learned is what the next cycle replays.
    if (o.replayDir && method !== "dpo" && method !== "grpo")
      await writeReplay(o.replayDir, o.domain, [...train.lines, ...replay].slice(0, REPLAY_MAX_LINES));
    if (o.replayDir) await writeTaught(o.replayDir, o.domain, suites);
  }
  await writeFile(join(o.work, "contract.json"), `${JSON.stringify(contract, null, 2)}\n`);
  return {
    domain: o.domain,
    method,
    exported: {
      train: train.lines.length,
      heldout: heldout.lines.length,
      report: train.report,
      ...(pref ? { preference: summary(pref) } : {}),
      ...(users ? { groups: summary(users) } : {}),
      replayed: replayed.length,
    },
    taught: { own, earlier, verdict: contract.taught ?? null },
    preferenceAccuracy,
    parent,
    trained,
    contract,
    published,
    ...(self ? { selfImprove: self } : {}),
    ...(episodesGateResult ? { episodesGate: episodesGateResult } : {}),
    ...(parentCarry.dropped ? { parentRouterDropped: parentCarry.dropped } : {}),
    ...(routerStage
      ? {
          router: {
            version: routerStage.head.version,
            verdict: routerStage.verdict,
            examples: routerStage.examples,
            published: !published
              ? ("none" as const)
              : routerStage.verdict.passed
                ? ("new" as const)
                : routerPublished
                  ? ("carried" as const)
                  : ("none" as const),
          },
        }
      : {}),
    seconds: {
      export: exportSeconds,
      train: trainSeconds,
      contract: contractSeconds,
      publish: since(t),
      total: since(started),
    },
  };
}

const fmt = (x: number | null): string => (x === null ? "n/a" : x.toFixed(2));

/** The router gate's verdict for the lineage: counts and reason (the per-case list stays here). */
function withoutCases(v: RouterStageResult["verdict"]) {
  const { perCase: _cases, ...rest } = v;
  return rest;
}

/**
 * What the app's router will choose among once the candidate is live: every adapter's live
 * version for this base in the registry, with the cycle's domain as the candidate (its routing
 * examples are the parent's, see publishManifest).
 */
function routerCandidates(
  index: RegistryIndexOf,
  baseSha256: string,
  domain: string,
  own: {
    id: string;
    domain: string;
    defaultScale: number;
    routingExamples: readonly string[];
    lineage: unknown;
  },
): RouterCandidate[] {
  const ids = [...new Set(index.adapters.map((e) => e.id))].filter((id) => id !== domain).sort();
  const live = ids.flatMap((id) => {
    const e = liveEntry(index, id, baseSha256);
    return e
      ? [
          {
            id: e.id,
            domain: e.domain,
            defaultScale: e.defaultScale,
            routingExamples: e.routingExamples,
            lineage: e.lineage,
          },
        ]
      : [];
  });
  return [
    ...live,
    {
      id: domain,
      domain: own.domain,
      defaultScale: own.defaultScale,
      routingExamples: own.routingExamples,
      lineage: own.lineage,
    },
  ];
}

type RegistryIndexOf = Awaited<ReturnType<typeof fetchRegistryIndex>>;

function summary(p: { train: FetchedExport; heldout: FetchedExport }) {
  return { train: p.train.lines.length, heldout: p.heldout.lines.length, report: p.train.report };
}

/**
 * Self-generated lines in the export's shape: the report keeps the export's options and the
 * store's per-domain counts, and counts only these lines (nothing was read or dropped).
 */
function selfGenerated(
  like: ExportReport,
  type: "sft" | "preference",
  split: "train" | "heldout",
  lines: unknown[],
): FetchedExport {
  const dropped = Object.fromEntries(Object.keys(like.dropped).map((k) => [k, 0])) as ExportReport["dropped"];
  return {
    jsonl: toJsonl(lines),
    lines,
    report: {
      type,
      domain: like.domain,
      split,
      options: like.options,
      items: 0,
      byKind: {},
      candidates: lines.length,
      written: lines.length,
      splits: {
        train: split === "train" ? lines.length : 0,
        heldout: split === "heldout" ? lines.length : 0,
      },
      dropped,
      domains: like.domains,
    },
  };
}

const toJsonl = (lines: readonly unknown[]): string => lines.map((l) => `${JSON.stringify(l)}\n`).join("");

/** The prompt key of an SFT line: the conversation before its last answer. */
function linePrompt(line: unknown): string {
  const messages = ((line as { messages?: Message[] }).messages ?? []).filter(
    (m) => m.role === "user" || m.role === "assistant",
  );
  return promptKey(messages.slice(0, -1));
}

/**
 * The live version's taught suites: the cases from its lineage when they were published, else
 * from the cloud's own copy in `dir`, limited to the ids the lineage names (a suite of a
 * version that was rolled back is not judged).
 */
async function earlierSuites(
  dir: string | undefined,
  domain: string,
  details: unknown,
): Promise<TaughtSuite[]> {
  const published = taughtOf(details);
  if (published.length > 0 || !dir) return published;
  const ids = (details as { taught?: { ids?: unknown } } | null | undefined)?.taught?.ids;
  const path = join(dir, `${domain}.taught.json.gz`);
  if (!Array.isArray(ids) || !existsSync(path)) return [];
  const kept = taughtOf({ taught: { gz: (await readFile(path)).toString("base64") } });
  return kept.filter((s) => ids.includes(s.id));
}

/** The cloud's own copy of a published version's taught suites (gzipped JSON, as in a lineage). */
async function writeTaught(dir: string, domain: string, suites: readonly TaughtSuite[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${domain}.taught.json.gz`);
  await writeFile(`${path}.tmp`, Buffer.from(encodeTaught(suites, true).gz!, "base64"));
  await rename(`${path}.tmp`, path);
}

async function readReplay(dir: string | undefined, domain: string): Promise<unknown[]> {
  if (!dir) return [];
  const path = join(dir, `${domain}.jsonl`);
  if (!existsSync(path)) return [];
  return (await readFile(path, "utf8"))
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as unknown);
}

/** The accepted lines, newest first, one per prompt; written aside and renamed. */
async function writeReplay(dir: string, domain: string, lines: readonly unknown[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  const seen = new Set<string>();
  const unique = lines.filter((l) => {
    const k = linePrompt(l);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const path = join(dir, `${domain}.jsonl`);
  await writeFile(`${path}.tmp`, toJsonl(unique));
  await rename(`${path}.tmp`, path);
}

function createSha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
