/**
 * A self-improvement cycle with GRPO, end to end on loopback (issue 29): the shipped Agent is
 * live; `runCycle({selfImprove, method: "grpo"})` samples K answers per generated task prompt,
 * judges each with the contract's checks, writes every prompt's answers whose rewards differ as
 * one group (self-improve/groups.ts), trains them with the PyTorch trainer's GRPO from the live
 * version, runs the same cloud gate (the default contract's agent cases, candidate against live)
 * and publishes with a lineage that says grpo and self-generated. Seeded sampling on one engine
 * thread: the same samples every run.
 *
 * Not asserted: a rise of the pass rate (bench/README.md, "self-improve": on the 0.7M demo the
 * candidate did not pass more prompts it was not trained on).
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

const dir = suiteDir("macaron-self-improve-grpo-loop-");
const ADMIN = "admin-key-self-improve-grpo-1234";
const DOMAIN = "agent";
const PROMPTS = 24;
const SAMPLES = 4;

const cloud = demoCloud({ dataDir: () => join(dir.path, "cloud"), adminKey: ADMIN, domain: DOMAIN });

describe("self-improvement with GRPO", () => {
  it(
    "trains every prompt's rewarded answers as groups, gates and publishes with grpo, self-generated lineage",
    async () => {
      const logs: string[] = [];
      const result = await runCycle({
        cloud: cloud().url,
        adminKey: ADMIN,
        domain: DOMAIN,
        base: demoBasePath(),
        work: join(dir.path, "cycle"),
        contract: defaultContract(),
        method: "grpo",
        selfImprove: { samples: SAMPLES, prompts: PROMPTS, suite: 0 },
        training: { epochs: 4, lr: 2e-3, seed: 0 },
        export: { bytesPerToken: 1 },
        makeEngine: () => new EngineSupervisor(spawnTestEngine()),
        log: (l) => logs.push(l),
      });
      const s = result.selfImprove!;
      const g = s.groups[DOMAIN]!;
      console.log(
        `self-improve grpo loop: ${JSON.stringify({ groups: g, passed: s.byDomain[DOMAIN]!.passed, preferenceAccuracy: result.preferenceAccuracy, seconds: result.seconds })}`,
      );
      expect(result.method).toBe("grpo");
      expect(g.groups).toBeGreaterThan(0);
      expect(g.withSignal).toBeGreaterThan(0);
      expect(g.signalShare).toBeCloseTo(g.withSignal / g.groups);
      expect(logs).toContain(`GRPO on ${g.withSignal} groups of sampled answers whose rewards differ`);
      // The trainer read the groups: the tokenized ones (minus the held-out share) are its examples.
      const lineage = result.trained.manifest.lineage;
      expect(lineage.method).toBe("grpo");
      expect(lineage.dataset.lines).toBe(g.withSignal);
      expect(lineage.parent).toBe("1.0.0");
      // The same gate: the default contract's agent cases, candidate against live.
      expect(result.contract.comparison!.byTag[DOMAIN]).toBeDefined();
      expect(result.contract.passed).toBe(true);
      expect(result.published).toMatchObject({ id: DOMAIN, version: "1.1.0", lineage: { parent: "1.0.0" } });
      expect(result.published!.lineage.trainedFrom).toMatch(
        /^self-improve:agent\.jsonl@sha256:[0-9a-f]{64}$/,
      );
      expect(result.published!.lineage.details).toMatchObject({
        cycle: {
          method: "grpo",
          selfImprove: { selfGenerated: true, samples: SAMPLES, groups: { [DOMAIN]: g } },
        },
      });
      expect(result.published!.releaseNotes).toMatch(
        new RegExp(`self-generated: ${g.withSignal} GRPO groups, ${SAMPLES} samples per prompt`),
      );
    },
    LOOP_HANG_GUARD_MS,
  );
});
