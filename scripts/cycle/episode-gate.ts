/**
 * The episodes' part of a self-improvement cycle's gate (`--episodes`): live and candidate each
 * run K episodes of episode tasks the cycle did not train on (the next tasks of the same draw,
 * another salt: codes neither has seen), through the agent loop on the cloud side's core
 * (self-improve/episodes.ts); the candidate is rejected when its mean episode reward, or its
 * share of episodes with at least one schema-valid call, falls more than the contract's
 * `maxRegression` below live's. The second signal is there because the reward alone is blind
 * where it is 0 on both sides (the demo: a candidate that stopped calling tools passed 0 vs 0).
 * The same seeds on both sides.
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_SYSTEM_PROMPT } from "../../common/prompts";
import type { EngineClient } from "../../electron/core/engine/types";
import type { TrainResult } from "../../cloud/training/train";
import { withLiveCore } from "./cloud-gate";
import { episodeData, type EpisodeOptions } from "./self-improve/episodes";

/** What the gate compares of one side's episodes. */
export interface EpisodeSide {
  meanReward: number;
  done: number;
  /** Share of episodes with at least one schema-valid call. */
  validCallShare: number;
}

export interface EpisodeGate {
  /** Episodes per side. */
  episodes: number;
  live: EpisodeSide;
  candidate: EpisodeSide;
  /** The most the candidate's mean reward may fall below live's. */
  margin: number;
  passed: boolean;
  /** Why it was rejected; null when it passed. */
  reason: string | null;
  salt: string;
}

/**
 * The verdict: the candidate's mean reward and its share of episodes with a schema-valid call
 * each at most `margin` below live's; why not, when not.
 */
export function episodeVerdict(
  live: Pick<EpisodeSide, "meanReward" | "validCallShare">,
  candidate: Pick<EpisodeSide, "meanReward" | "validCallShare">,
  margin: number,
): { passed: boolean; reason: string | null } {
  const reasons: string[] = [];
  if (candidate.meanReward < live.meanReward - margin - 1e-9)
    reasons.push(`mean reward ${candidate.meanReward.toFixed(3)} against live ${live.meanReward.toFixed(3)}`);
  if (candidate.validCallShare < live.validCallShare - margin - 1e-9)
    reasons.push(
      `episodes with a valid call ${candidate.validCallShare.toFixed(3)} against live ${live.validCallShare.toFixed(3)}`,
    );
  return {
    passed: reasons.length === 0,
    reason: reasons.length === 0 ? null : `agent episodes: ${reasons.join("; ")} (margin ${margin})`,
  };
}

export async function episodeGate(o: {
  base: string;
  liveDir: string;
  /** The trained candidate (its adapter file and manifest). */
  candidate: Pick<TrainResult, "adapterPath" | "manifest">;
  /** A folder of its own for the candidate's copy. */
  work: string;
  makeEngine: () => EngineClient;
  options: EpisodeOptions;
  /** The tasks the candidate was trained on: left out. */
  trained: readonly string[];
  samples: number;
  temperature: number;
  minP?: number;
  /** The training episodes' draw of tasks (the gate takes the next ones of it). */
  promptSeed: string;
  margin: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}): Promise<EpisodeGate> {
  const log = o.log ?? (() => undefined);
  const salt = `${o.options.salt ?? "cycle"}-gate`;
  const candidateDir = join(o.work, "candidate-episodes");
  await mkdir(candidateDir, { recursive: true });
  await copyFile(o.candidate.adapterPath, join(candidateDir, `${o.candidate.manifest.id}.gguf`));
  await writeFile(
    join(candidateDir, `${o.candidate.manifest.id}.json`),
    `${JSON.stringify(o.candidate.manifest, null, 2)}\n`,
  );
  const run = (liveDir: string) =>
    withLiveCore({ base: o.base, liveDir, makeEngine: o.makeEngine }, async (target) => {
      const r = await episodeData({
        target,
        options: { ...o.options, salt, exclude: o.trained },
        samples: o.samples,
        temperature: o.temperature,
        ...(o.minP !== undefined ? { minP: o.minP } : {}),
        // Tasks the candidate was not trained on, seeds of their own.
        seed: 1_000_001,
        promptSeed: o.promptSeed,
        systemPrompt: DEFAULT_SYSTEM_PROMPT,
        signal: o.signal,
      });
      return {
        meanReward: r.report.meanReward,
        done: r.report.done,
        validCallShare: r.report.validCallShare,
        episodes: r.report.episodes,
      };
    });
  const live = await run(o.liveDir);
  const candidate = await run(candidateDir);
  const { passed, reason } = episodeVerdict(live, candidate, o.margin);
  log(
    `episodes gate: candidate ${candidate.done}/${candidate.episodes} done, mean reward ${candidate.meanReward.toFixed(3)}, ` +
      `${candidate.validCallShare.toFixed(3)} with a valid call; live ${live.done}/${live.episodes}, ` +
      `${live.meanReward.toFixed(3)}, ${live.validCallShare.toFixed(3)}: ${passed ? "ok" : "FAILED"}`,
  );
  return {
    episodes: live.episodes,
    live: { meanReward: live.meanReward, done: live.done, validCallShare: live.validCallShare },
    candidate: {
      meanReward: candidate.meanReward,
      done: candidate.done,
      validCallShare: candidate.validCallShare,
    },
    margin: o.margin,
    passed,
    reason,
    salt,
  };
}
