/**
 * The episodes of a self-improvement cycle of the agent domain (`npm run cycle -- --self-improve
 * --episodes`): the live Agent runs K episodes of each episode task (episode-tasks.ts) through
 * the agent loop (episode-runner.ts) on the live core, each is rewarded (episode-reward.ts), and
 * the done ones become SFT lines, (done, failed) DPO pairs, and each task's episodes whose
 * rewards differ a GRPO group (episode-data.ts), beside the single-call data of the same cycle. The report is what the lineage records of them.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ContractTarget } from "../../../electron/core/contract/contract-runner";
import {
  type EpisodeGroupLine,
  type EpisodePairLine,
  type EpisodeSftLine,
  type EpisodeStats,
  selectEpisodes,
} from "./episode-data";
import { EPISODE_PARTIAL, episodeOutcomes } from "./episode-reward";
import { episodeServerSpec, runEpisodes } from "./episode-runner";
import { EPISODE_FAMILIES, episodeTasks } from "./episode-tasks";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export const EPISODE_DEFAULTS = { tasks: 12, maxTokens: 160 } as const;

export interface EpisodeOptions {
  /** Episode tasks (default 12: two of each family). */
  tasks?: number;
  /** Only these families (episode-tasks.ts EPISODE_FAMILIES). */
  families?: string[];
  /** The server's salt (its codes); default a new one per cycle, so codes cannot be learned. */
  salt?: string;
  /** Tokens per generation round (default 160). */
  maxTokens?: number;
  /** Task ids left out (the gate's episodes leave out those the candidate trained on). */
  exclude?: readonly string[];
}

/** What the lineage records of a cycle's episodes. */
export interface EpisodeReport extends EpisodeStats {
  source: "self-generated-episode";
  samples: number;
  salt: string;
  families: string[];
  /** The tasks run (ids, generated: no user text). */
  taskIds: string[];
  partialCredit: number;
  seconds: number;
}

export async function episodeData(o: {
  target: ContractTarget;
  options: EpisodeOptions;
  samples: number;
  temperature: number;
  minP?: number;
  seed: number;
  promptSeed: string;
  systemPrompt: string;
  signal?: AbortSignal;
  log?: (line: string) => void;
}): Promise<{
  sft: EpisodeSftLine[];
  dpo: EpisodePairLine[];
  groups: EpisodeGroupLine[];
  report: EpisodeReport;
}> {
  const log = o.log ?? (() => undefined);
  const salt = o.options.salt ?? randomUUID();
  const excluded = new Set(o.options.exclude ?? []);
  const tasks = episodeTasks({ salt, seed: o.promptSeed, families: o.options.families })
    .filter((t) => !excluded.has(t.id))
    .slice(0, o.options.tasks ?? EPISODE_DEFAULTS.tasks);
  if (tasks.length === 0) throw new Error("no episode task left to run");
  // The live Agent, pinned as the app pins it: its adapters and its manifest's call syntax.
  const resolved = await o.target.resolve({ pinned: "agent" }, tasks[0]!.prompt);
  const dataDir = await mkdtemp(join(tmpdir(), "macaron-episodes-"));
  const t = performance.now();
  try {
    log(`episodes: ${tasks.length} tasks, ${o.samples} episodes each, through the agent loop`);
    const episodes = await runEpisodes({
      tasks,
      samples: o.samples,
      seed: o.seed,
      sampling: {
        temperature: o.temperature,
        ...(o.minP !== undefined ? { minP: o.minP } : {}),
        maxTokens: o.options.maxTokens ?? EPISODE_DEFAULTS.maxTokens,
      },
      engine: {
        generate: (history, options, _onToken, signal) => o.target.generate(history, options, signal),
      },
      adapters: resolved.adapters,
      ...(resolved.toolFormat ? { toolFormat: resolved.toolFormat } : {}),
      systemPrompt: o.systemPrompt,
      server: episodeServerSpec(salt, REPO_ROOT),
      dataDir,
      signal: o.signal,
      log,
    });
    const outcomes = episodeOutcomes(tasks, episodes);
    const { sft, dpo, groups, stats } = selectEpisodes(tasks, episodes, outcomes);
    const seconds = (performance.now() - t) / 1000;
    log(
      `episodes: ${stats.done}/${stats.episodes} done (mean reward ${stats.meanReward.toFixed(3)}); ` +
        `${stats.sftLines} SFT lines, ${stats.dpoPairs} DPO pairs, ${stats.negativesUnpaired} negatives unpaired ` +
        `(${seconds.toFixed(1)} s)`,
    );
    return {
      sft,
      dpo,
      groups,
      report: {
        source: "self-generated-episode",
        samples: o.samples,
        salt,
        families: o.options.families ?? [...EPISODE_FAMILIES],
        taskIds: tasks.map((t) => t.id),
        partialCredit: EPISODE_PARTIAL,
        ...stats,
        seconds,
      },
    };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
