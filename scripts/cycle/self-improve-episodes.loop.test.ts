/**
 * A self-improvement cycle with agent episodes, end to end on loopback (issue 29 item 2): the
 * shipped demo Agent is live; `runCycle({selfImprove: {episodes}})` samples the single-call tasks
 * as self-improve.loop.test.ts does and, on the same live core, runs K episodes of each episode
 * task through the agent loop (AgentTurns.run) with the built-in tools and the episodes' MCP
 * server over stdio; each episode is rewarded (episode-reward.ts), done ones become SFT lines with
 * their calls and (done, failed) pairs DPO pairs; the same trainer and gate follow, and the
 * lineage records the episodes as self-generated with their rewards and negatives. The gate also
 * runs live and candidate on episode tasks the cycle did not train on (episode-gate.ts).
 *
 * Not asserted: that the 0.7M demo finishes an episode (it was trained on single calls; the
 * numbers are printed and in bench/README.md, "episodes").
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultContract } from "../../electron/core/contract/default-contract";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { demoBasePath } from "../../native/gguf/demo-files";
import { LOOP_HANG_GUARD_MS } from "../../testing/core/calibrated-budget";
import { demoCloud } from "../../testing/cloud/demo-cloud";
import { suiteDir } from "../../testing/core/temp-dir";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { runCycle } from "./cycle";
import { EPISODE_FAMILIES } from "./self-improve/episode-tasks";

const dir = suiteDir("macaron-self-improve-episodes-loop-");
const ADMIN = "admin-key-self-improve-episodes-1234";
const DOMAIN = "agent";
/** The single-call settings of self-improve.loop.test.ts (some samples pass: there is an SFT set). */
const PROMPTS = 24;
const SAMPLES = 4;
/** One episode task per family. */
const TASKS = EPISODE_FAMILIES.length;

const cloud = demoCloud({ dataDir: () => join(dir.path, "cloud"), adminKey: ADMIN, domain: DOMAIN });

describe("self-improvement with agent episodes", () => {
  it(
    "runs the live Agent's episodes through the agent loop, rewards them and records them in the lineage",
    async () => {
      const logs: string[] = [];
      const result = await runCycle({
        cloud: cloud().url,
        adminKey: ADMIN,
        domain: DOMAIN,
        base: demoBasePath(),
        work: join(dir.path, "cycle"),
        contract: defaultContract(),
        selfImprove: {
          samples: SAMPLES,
          prompts: PROMPTS,
          suite: 0,
          episodes: { tasks: TASKS, salt: "episodes-loop", maxTokens: 96 },
        },
        training: { epochs: 2, lr: 2e-3, seed: 0 },
        export: { bytesPerToken: 1 },
        makeEngine: () => new EngineSupervisor(spawnTestEngine()),
        log: (l) => logs.push(l),
      });
      const e = result.selfImprove!.episodes!;
      console.log(
        `self-improve episodes loop: ${JSON.stringify({ episodes: e, gate: result.episodesGate, seconds: result.seconds })}`,
      );
      expect(e).toMatchObject({
        source: "self-generated-episode",
        tasks: TASKS,
        episodes: TASKS * SAMPLES,
        samples: SAMPLES,
        salt: "episodes-loop",
      });
      // Every episode has a reward in [0, 1]; those at 0 are counted by reason.
      expect(e.meanReward).toBeGreaterThanOrEqual(0);
      expect(e.meanReward).toBeLessThanOrEqual(1);
      expect(e.sftLines).toBe(e.tasksSolved);
      expect(e.negativesPaired).toBe(e.dpoPairs);
      // The episodes ran through the loop (one log line per task) before training.
      expect(logs.filter((l) => l.startsWith("episodes: task ")).length).toBe(TASKS);
      // The training set holds the single-call lines and the done episodes.
      expect(result.exported.train).toBe(result.selfImprove!.sftLines + e.sftLines);
      expect(result.exported.preference?.train).toBe(result.selfImprove!.dpoPairs + e.dpoPairs);
      // The gate's episodes: other tasks of the draw, another salt, live and candidate alike.
      const gate = result.episodesGate!;
      expect(gate).toMatchObject({ episodes: TASKS * SAMPLES, salt: "episodes-loop-gate" });
      expect(gate.passed).toBe(
        gate.candidate.meanReward >= gate.live.meanReward - gate.margin - 1e-9 &&
          gate.candidate.validCallShare >= gate.live.validCallShare - gate.margin - 1e-9,
      );
      expect(result.contract.passed).toBe(result.contract.reasons.length === 0);
      if (!gate.passed) expect(result.contract.reasons).toContain(gate.reason);
      expect(logs.some((l) => l.startsWith("episodes gate: "))).toBe(true);
      if (result.published)
        expect(result.published.lineage.details).toMatchObject({
          cycle: {
            selfImprove: { selfGenerated: true, episodes: { source: "self-generated-episode" } },
            episodesGate: { passed: true },
          },
        });
    },
    LOOP_HANG_GUARD_MS,
  );
});
