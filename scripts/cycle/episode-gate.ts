/**
 * The episodes' part of a self-improvement cycle's gate (`--episodes`): live and candidate each
 * run K episodes of episode tasks the cycle did not train on (the next tasks of the same draw,
 * another salt: codes neither has seen), through the agent loop on the cloud side's core
 * (self-improve/episodes.ts); the candidate is rejected when its mean episode reward falls more
 * than the contract's `maxRegression` below live's. The same seeds on both sides.
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_SYSTEM_PROMPT } from "../../common/prompts";
import type { EngineClient } from "../../electron/core/engine/types";
import type { TrainResult } from "../../cloud/training/train";
import { withLiveCore } from "./cloud-gate";
import { episodeData, type EpisodeOptions } from "./self-improve/episodes";

export interface EpisodeGate {
  /** Episodes per side. */
  episodes: number;
  live: { meanReward: number; done: number };
  candidate: { meanReward: number; done: number };
  /** The most the candidate's mean reward may fall below live's. */
  margin: number;
  passed: boolean;
  /** Why it was rejected; null when it passed. */
  reason: string | null;
  salt: string;
}

/** The verdict: the candidate's mean reward at most `margin` below live's; why not, when not. */
export function episodeVerdict(
  live: { meanReward: number },
  candidate: { meanReward: number },
  margin: number,
): { passed: boolean; reason: string | null } {
  const passed = candidate.meanReward >= live.meanReward - margin - 1e-9;
  return {
    passed,
    reason: passed
      ? null
      : `agent episodes: mean reward ${candidate.meanReward.toFixed(3)} against live ${live.meanReward.toFixed(3)} (margin ${margin})`,
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
      return { meanReward: r.report.meanReward, done: r.report.done, episodes: r.report.episodes };
    });
  const live = await run(o.liveDir);
  const candidate = await run(candidateDir);
  const { passed, reason } = episodeVerdict(live, candidate, o.margin);
  log(
    `episodes gate: candidate ${candidate.done}/${candidate.episodes} done, mean reward ${candidate.meanReward.toFixed(3)}; ` +
      `live ${live.done}/${live.episodes}, ${live.meanReward.toFixed(3)}: ${passed ? "ok" : "FAILED"}`,
  );
  return {
    episodes: live.episodes,
    live: { meanReward: live.meanReward, done: live.done },
    candidate: { meanReward: candidate.meanReward, done: candidate.done },
    margin: o.margin,
    passed,
    reason,
    salt,
  };
}
