/**
 * The data of a self-improvement cycle (`npm run cycle -- --self-improve`): the live specialist
 * answers each task prompt K times (temperature > 0, a distinct seed per answer) through the
 * app's own core and the contract runner's way of asking a case (`sampleCase`); each answer is
 * judged by the contract's checks (score.ts); the best passing answers become SFT lines and
 * (best passing, worst failing) the DPO pairs that cycle.ts trains on like an export; with
 * `--method grpo`, every answer of a prompt with its reward (groups.ts) is one GRPO group.
 *
 * Prompts: generated per domain from the training pools (tasks.ts), and optionally the prompts
 * users asked (the export's SFT lines of the domain: rated-good answers and corrections, whose
 * answer serves as the reference the checks are built from). Neither may be a held-out case of
 * the contract that gates the candidate (`assertDisjoint`).
 *
 * With `episodes` (agent domain only), the live Agent also runs multi-step episodes through the
 * agent loop on the same live core (episodes.ts): the done ones are SFT lines with their calls,
 * (done, failed) episodes DPO pairs, added to the single-call lines and pairs.
 */
import type { ContractTarget } from "../../../electron/core/contract/contract-runner";
import { sampleCase } from "../../../electron/core/contract/contract-runner";
import type { Contract } from "../../../electron/core/contract/contract-schema";
import type { TaskDomain } from "../../../electron/core/contract/task-contract";
import { TASK_DOMAINS } from "../../../electron/core/contract/task-contract";
import { DEFAULT_SYSTEM_PROMPT } from "../../../common/prompts";
import { type GroupLine, type GroupStats, selectGroups } from "./groups";
import type { EpisodeGroupLine, EpisodePairLine, EpisodeSftLine } from "./episode-data";
import { episodeData, type EpisodeOptions, type EpisodeReport } from "./episodes";
import { type Sample, scoreSamples, selectTraining, type Selection } from "./score";
import {
  assertDisjoint,
  selfImproveContract,
  selfImproveSuite,
  selfImproveTasks,
  type SelfImproveTask,
} from "./tasks";

export interface SelfImproveOptions {
  /** K: answers sampled per prompt (default 4). */
  samples?: number;
  /** Sampling temperature, > 0 (default 0.8). */
  temperature?: number;
  /**
   * min-p of the sampler (default 0.1): drops the tail of unlikely tokens, where a small model's
   * samples turn to noise, and keeps the answers different from each other.
   */
  minP?: number;
  /** How many generated task prompts (default 40). */
  prompts?: number;
  /** First sampling seed; answer k of prompt i gets seed + i·K + k (default 1). */
  seed?: number;
  /** Which draw of generated prompts (tasks.ts; default "0"). */
  promptSeed?: string;
  /** Only these task families (tasks.ts names), e.g. ["agent-tools"]. */
  families?: string[];
  /** Also the prompts users asked (the export's SFT training lines of the domain). Default true. */
  userPrompts?: boolean;
  /**
   * Generated task prompts that are not sampled, judged by the gate beside the contract
   * (candidate against live, tag `<domain>-self`): a candidate that learned its sampled prompts
   * and got worse on the others of the same pools is rejected (default 16; 0: none).
   */
  suite?: number;
  /** Multi-step agent episodes too (agent domain; episodes.ts): K episodes per episode task. */
  episodes?: EpisodeOptions;
}

/** What the lineage records of self-generated data. */
export interface SelfImproveReport {
  samples: number;
  temperature: number;
  minP: number;
  seed: number;
  promptSeed: string;
  families: string[] | null;
  prompts: {
    generated: number;
    users: number;
    /** Users' prompts without a check to judge them by (e.g. code whose tests are unknown). */
    usersUnchecked: number;
    /** Users' prompts that are a held-out case of the contract: left out. */
    usersHeldout: number;
  };
  sftLines: number;
  dpoPairs: number;
  /** Per domain: prompts, samples, share of samples that passed their checks… (score.ts). */
  byDomain: Selection["stats"];
  /** GRPO (groups.ts): per domain, groups, those whose rewards differ (written), mean reward. */
  groups: Record<string, GroupStats>;
  samplesPerSecond: number;
  seconds: { sample: number; score: number };
  /** The agent episodes of the cycle (`episodes`): rewards, lines, negatives; null without. */
  episodes: EpisodeReport | null;
}

export interface SelfImproveData {
  selection: Selection;
  /** Every prompt's answers with their rewards, for GRPO: the groups whose rewards differ. */
  groups: GroupLine[];
  report: SelfImproveReport;
  /** The tasks as cases (what was sampled and judged). */
  tasks: Contract;
  /** Unsampled generated tasks for the gate (`options.suite`), tagged `<domain>-self`; null for none. */
  suite: Contract | null;
  /** The episodes' SFT lines and DPO pairs (tool calls), beside `selection`'s; null without. */
  episodes: { sft: EpisodeSftLine[]; dpo: EpisodePairLine[]; groups: EpisodeGroupLine[] } | null;
}

export const SELF_IMPROVE_DEFAULTS = {
  samples: 4,
  temperature: 0.8,
  minP: 0.1,
  prompts: 40,
  seed: 1,
  suite: 16,
} as const;

/** The contract the gate of a self-improvement cycle runs: the domain's cases and the suite's. */
export function withSuite(contract: Contract, suite: Contract | null): Contract {
  if (!suite) return contract;
  const ids = new Set(contract.cases.map((c) => c.id));
  return {
    ...contract,
    cases: [...contract.cases, ...suite.cases.filter((c) => !ids.has(c.id))],
    thresholds: {
      ...contract.thresholds,
      // The suite must not fall below live either (the contract's margin, else none).
      maxRegression: contract.thresholds.maxRegression ?? 0,
    },
  };
}

const isTaskDomain = (d: string): d is TaskDomain => (TASK_DOMAINS as readonly string[]).includes(d);

/** Single-turn SFT lines of users → tasks (their answer as the reference). */
function userTasks(domain: TaskDomain, lines: readonly unknown[]): SelfImproveTask[] {
  const out: SelfImproveTask[] = [];
  for (const line of lines) {
    const messages = (line as { messages?: Array<{ role?: unknown; content?: unknown }> }).messages;
    if (!Array.isArray(messages)) continue;
    const turns = messages.filter((m) => m.role !== "system");
    if (turns.length !== 2 || turns[0]!.role !== "user" || turns[1]!.role !== "assistant") continue;
    const [user, answer] = [turns[0]!.content, turns[1]!.content];
    if (typeof user !== "string" || typeof answer !== "string" || !user.trim() || !answer.trim()) continue;
    out.push({ domain, family: "users", prompt: user, reference: answer });
  }
  return out;
}

/**
 * Samples, judges and selects. `live` answers (the gate's core with the live adapters);
 * `heldout` is the contract that gates the candidate (its cases are never sampled).
 */
export async function selfImproveData(o: {
  domain: string;
  live: <T>(fn: (target: ContractTarget) => Promise<T>) => Promise<T>;
  heldout: Contract;
  options: SelfImproveOptions;
  /** The export's SFT training lines of the domain (users' prompts), when asked for. */
  userLines?: readonly unknown[];
  signal?: AbortSignal;
  log?: (line: string) => void;
}): Promise<SelfImproveData> {
  const log = o.log ?? (() => undefined);
  if (!isTaskDomain(o.domain))
    throw new Error(`--self-improve needs a task domain (${TASK_DOMAINS.join(", ")}), not "${o.domain}"`);
  const domain = o.domain;
  const K = o.options.samples ?? SELF_IMPROVE_DEFAULTS.samples;
  const temperature = o.options.temperature ?? SELF_IMPROVE_DEFAULTS.temperature;
  const minP = o.options.minP ?? SELF_IMPROVE_DEFAULTS.minP;
  const seed = o.options.seed ?? SELF_IMPROVE_DEFAULTS.seed;
  const promptSeed = o.options.promptSeed ?? "0";
  if (!Number.isInteger(K) || K < 2) throw new Error("self-improvement needs at least 2 samples per prompt");
  if (!(temperature > 0)) throw new Error("self-improvement samples at a temperature above 0");
  if (o.options.episodes && domain !== "agent")
    throw new Error(`episodes are agent tasks: --episodes needs --domain agent, not "${domain}"`);

  const generated = selfImproveTasks(domain, { seed: promptSeed, families: o.options.families }).slice(
    0,
    o.options.prompts ?? SELF_IMPROVE_DEFAULTS.prompts,
  );
  const generatedContract = selfImproveContract(domain, generated);
  const generatedCases = generatedContract.cases;
  // Users' prompts: checked like the generated ones; those the contract holds out are left out.
  const users = userTasks(domain, o.userLines ?? []);
  const heldoutPrompts = new Set(
    o.heldout.cases.map((c) => c.conversation[c.conversation.length - 1]!.content.toLowerCase().trim()),
  );
  const usable = users.filter((t) => !heldoutPrompts.has(t.prompt.toLowerCase().trim()));
  const userCases = (usable.length ? selfImproveContract(domain, usable, "users").cases : []).map((c) => ({
    ...c,
    id: c.id.replace("-self-", "-user-"),
  }));
  const tasks: Contract = {
    ...generatedContract,
    cases: [...generatedCases, ...userCases],
  };
  assertDisjoint(tasks, o.heldout);
  const suiteSize = o.options.suite ?? SELF_IMPROVE_DEFAULTS.suite;
  const drawn =
    suiteSize > 0 ? selfImproveSuite(domain, generated, suiteSize, { families: o.options.families }) : null;
  const suite = drawn
    ? {
        ...drawn,
        cases: drawn.cases.map((c) => ({
          ...c,
          id: c.id.replace("-self-", "-selfsuite-"),
          tags: [`${domain}-self`],
        })),
      }
    : null;
  if (suite) assertDisjoint(suite, o.heldout);
  log(
    `self-improve: ${generatedCases.length} generated and ${userCases.length} users' ${domain} prompts, ` +
      `${K} samples each at temperature ${temperature}`,
  );

  let t = performance.now();
  // Set inside the live session (a holder: TypeScript does not follow assignments in callbacks).
  const ran: { episodes: Awaited<ReturnType<typeof episodeData>> | null } = { episodes: null };
  const samples = await o.live(async (target) => {
    const out: Sample[] = [];
    for (const [i, c] of tasks.cases.entries()) {
      for (let k = 0; k < K; k++) {
        const s = seed + i * K + k;
        const a = await sampleCase(
          target,
          c,
          tasks,
          { temperature, seed: s, minP },
          { systemPrompt: DEFAULT_SYSTEM_PROMPT, signal: o.signal },
        );
        out.push({ ...a, caseId: c.id, k, seed: s });
      }
    }
    if (o.options.episodes)
      ran.episodes = await episodeData({
        target,
        options: o.options.episodes,
        samples: K,
        temperature,
        minP,
        seed,
        promptSeed,
        systemPrompt: DEFAULT_SYSTEM_PROMPT,
        signal: o.signal,
        log,
      });
    return out;
  });
  const sampleSeconds = (performance.now() - t) / 1000;
  t = performance.now();
  const scored = await scoreSamples(tasks, samples);
  const selection = selectTraining(tasks, scored);
  const grouped = selectGroups(tasks, scored);
  const scoreSeconds = (performance.now() - t) / 1000;
  const st = selection.stats[domain];
  log(
    `self-improve: ${st?.passed ?? 0}/${st?.samples ?? 0} samples passed their checks; ` +
      `${selection.sft.length} SFT lines, ${selection.dpo.length} DPO pairs ` +
      `(sampling ${sampleSeconds.toFixed(1)} s, ${(samples.length / sampleSeconds).toFixed(2)} samples/s; judging ${scoreSeconds.toFixed(1)} s)`,
  );
  const g = grouped.stats[domain];
  log(
    `self-improve: ${g?.withSignal ?? 0} of ${g?.groups ?? 0} prompts' answers differ in reward ` +
      `(GRPO groups; mean reward ${(g?.meanReward ?? 0).toFixed(3)})`,
  );
  return {
    selection,
    groups: grouped.groups,
    tasks,
    suite,
    episodes: ran.episodes
      ? { sft: ran.episodes.sft, dpo: ran.episodes.dpo, groups: ran.episodes.groups }
      : null,
    report: {
      samples: K,
      temperature,
      minP,
      seed,
      promptSeed,
      families: o.options.families ?? null,
      prompts: {
        generated: generatedCases.length,
        users: userCases.length,
        usersUnchecked: usable.length - userCases.length,
        usersHeldout: users.length - usable.length,
      },
      sftLines: selection.sft.length,
      dpoPairs: selection.dpo.length,
      byDomain: selection.stats,
      groups: grouped.stats,
      samplesPerSecond: samples.length / sampleSeconds,
      seconds: { sample: sampleSeconds, score: scoreSeconds },
      episodes: ran.episodes?.report ?? null,
    },
  };
}
