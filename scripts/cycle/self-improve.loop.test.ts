/**
 * A self-improvement cycle end to end, on loopback (issue 29): the demo base, the cloud service,
 * node-llama-cpp, the contract's checks and the PyTorch trainer, no human correction. The shipped
 * Agent is live; `runCycle({selfImprove})` samples K answers per generated task prompt from it
 * through the gate's core (`withLiveCore`, `sampleCase`), judges each with the contract's checks,
 * trains SFT on the passing ones and DPO on best-vs-worst, gates the candidate against live on
 * the default contract's agent cases, publishes it and records in the lineage that the data was
 * self-generated. Seeded sampling on one engine thread: the same samples every run.
 *
 * Not asserted, printed: a rise of the pass rate. On the 0.7M demo, 3–5% of sampled tool calls
 * pass every check and learning from them does not carry to prompts that were not sampled
 * (bench/README.md, "self-improve": 0–1 of 16 after, 0–2 before, in six runs of several
 * settings); the candidate learns the passing answers' arguments instead of copying the prompt's.
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

const dir = suiteDir("macaron-self-improve-loop-");
const ADMIN = "admin-key-self-improve-loop-1234";
const DOMAIN = "agent";
/** Generated prompts and answers per prompt (the bench's settings: 3 of 96 pass). */
const PROMPTS = 24;
const SAMPLES = 4;
const TRAINING = { epochs: 4, lr: 2e-3, seed: 0 } as const;

const cloud = demoCloud({ dataDir: () => join(dir.path, "cloud"), adminKey: ADMIN, domain: DOMAIN });

describe("self-improvement", () => {
  it(
    "samples, judges, trains on the passing attempts, gates and publishes with self-generated lineage",
    async () => {
      const result = await runCycle({
        cloud: cloud().url,
        adminKey: ADMIN,
        domain: DOMAIN,
        base: demoBasePath(),
        work: join(dir.path, "cycle"),
        contract: defaultContract(),
        // The unsampled-prompts suite (default 16) rejects this candidate on the demo: off here,
        // the bench measures it.
        selfImprove: { samples: SAMPLES, prompts: PROMPTS, suite: 0 },
        training: TRAINING,
        export: { bytesPerToken: 1 },
        makeEngine: () => new EngineSupervisor(spawnTestEngine()),
      });
      const s = result.selfImprove!;
      const rates = result.contract.comparison!.byTag[DOMAIN]!;
      console.log(
        `self-improve loop: ${JSON.stringify({ sampled: s.byDomain[DOMAIN], samplesPerSecond: s.samplesPerSecond, contract: { live: rates.liveRate, candidate: rates.candidateRate }, seconds: result.seconds })}`,
      );
      expect(result.method).toBe("sft+dpo");
      expect(s).toMatchObject({ samples: SAMPLES, prompts: { generated: PROMPTS, users: 0 } });
      const d = s.byDomain[DOMAIN]!;
      expect(d.samples).toBe(PROMPTS * SAMPLES);
      expect(d.passed).toBeGreaterThan(0);
      expect(d.passShare).toBeCloseTo(d.passed / d.samples);
      // One SFT line per prompt with a passing answer; a pair where a failing one had text.
      expect(s.sftLines).toBe(d.promptsSolved);
      expect(s.dpoPairs).toBeLessThanOrEqual(s.sftLines);
      expect(result.exported).toMatchObject({ train: s.sftLines, heldout: 0 });
      expect(result.exported.preference?.train).toBe(s.dpoPairs);
      expect(result.contract.passed).toBe(true);
      expect(result.published).toMatchObject({ id: DOMAIN, version: "1.1.0", lineage: { parent: "1.0.0" } });
      expect(result.published!.lineage.trainedFrom).toMatch(
        /^self-improve:agent\.jsonl@sha256:[0-9a-f]{64}$/,
      );
      expect(result.published!.lineage.details).toMatchObject({
        cycle: {
          method: "sft+dpo",
          selfImprove: {
            selfGenerated: true,
            samples: SAMPLES,
            sftLines: s.sftLines,
            dpoPairs: s.dpoPairs,
            byDomain: { [DOMAIN]: { passShare: d.passShare } },
          },
        },
      });
      expect(result.published!.releaseNotes).toMatch(/self-generated/);
    },
    LOOP_HANG_GUARD_MS,
  );
});
