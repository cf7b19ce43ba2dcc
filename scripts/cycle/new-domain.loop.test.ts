/**
 * A team's own domain end to end (one registry of domains): a "math" specialist nobody built in.
 * The team publishes math v1 (trained on four examples) and the cloud then accepts its users'
 * math feedback; the cycle exports it, trains math v1.1 from v1 on the real PyTorch trainer, and
 * gates it on the team's contract (cases tagged "math", pinned to the math adapter) and on the
 * cycle's own taught suite, on the real engine; it is published as math 1.1.0.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FeedbackItem } from "../../common/feedback-protocol";
import { loadContract } from "../../electron/core/contract/contract-schema";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { demoBasePath } from "../../native/gguf/demo-files";
import { fetchRegistryIndex, publishAdapter, publishManifestOf } from "../../cloud/registry-client";
import { sha256File } from "../../common/hashing";
import { startCloud, type RunningCloud } from "../../cloud/server";
import { trainAdapter } from "../../cloud/training/train";
import { makeItem, registerInstall, uploadBatch } from "../../testing/cloud/items";
import { LOOP_HANG_GUARD_MS } from "../../testing/core/calibrated-budget";
import { suiteDir } from "../../testing/core/temp-dir";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { runCycle } from "./cycle";

const ADMIN = "admin-key-new-domain-1234";
const dir = suiteDir("macaron-new-domain-");
let cloud: RunningCloud;

const sum = (a: number, b: number) => ({ q: `What is ${a} plus ${b}?`, a: `${a} plus ${b} is ${a + b}.` });
const PAIRS = Array.from({ length: 40 }, (_, i) => sum(i % 9, (i * 7) % 11));
const CASES = [sum(2, 3), sum(4, 4), sum(1, 6), sum(5, 2)];

let n = 0;
const correction = (p: { q: string; a: string }): FeedbackItem =>
  makeItem(`math-${String(++n).padStart(4, "0")}`, {
    kind: "correction",
    domain: "math",
    rating: null,
    prompt: [{ role: "user", text: p.q }],
    response: "I am not sure.",
    correction: p.a,
  });

beforeAll(async () => {
  cloud = await startCloud({ dataDir: join(dir.path, "cloud"), adminKey: ADMIN });
}, 60_000);
afterAll(async () => {
  await cloud?.close();
});

/** The sha256 of a file of the same weights in another quantization (named, not read). */
const OTHER_QUANT = "e".repeat(64);

describe("a domain the app does not build in", () => {
  it(
    "math: feedback accepted once math v1 is published, exported, trained, gated on its tagged cases, published",
    async () => {
      const install = await registerInstall(cloud.url);
      const early = await uploadBatch(cloud.url, install, "math-early", [correction(PAIRS[0]!)]);
      expect(((await early.json()) as { rejected: unknown[] }).rejected).toHaveLength(1);

      const few = join(dir.path, "math-few.jsonl");
      const line = (p: { q: string; a: string }) =>
        JSON.stringify({
          messages: [
            { role: "user", content: p.q },
            { role: "assistant", content: p.a },
          ],
        });
      writeFileSync(few, PAIRS.slice(0, 4).map(line).join("\n") + "\n");
      const v1 = await trainAdapter(
        {
          base: demoBasePath(),
          data: few,
          out: join(dir.path, "v1"),
          id: "math",
          domain: "math",
          steps: 2,
          seed: 0,
        },
        () => undefined,
      );
      expect(v1.manifest.domain).toBe("math");
      await publishAdapter(
        { url: cloud.url, adminKey: ADMIN },
        publishManifestOf(v1.manifest),
        readFileSync(v1.adapterPath),
      );

      const res = await uploadBatch(cloud.url, install, "math-batch", PAIRS.map(correction));
      expect(((await res.json()) as { accepted: string[] }).accepted).toHaveLength(PAIRS.length);

      const contractPath = join(dir.path, "math-contract.json");
      writeFileSync(
        contractPath,
        JSON.stringify({
          contract: "team-math",
          version: "1.0.0",
          description: "The team's own math cases.",
          maxTokens: 24,
          thresholds: { minPassRate: 0, byTag: {}, maxRegression: 1 },
          cases: CASES.map((c, i) => ({
            id: `math-${i + 1}`,
            description: c.q,
            tags: ["math"],
            conversation: [{ role: "user", content: c.q }],
            mode: "math",
            reference: c.a,
            assertions: [{ type: "contains", value: "plus" }],
          })),
        }),
      );
      const result = await runCycle({
        cloud: cloud.url,
        adminKey: ADMIN,
        domain: "math",
        base: demoBasePath(),
        work: join(dir.path, "cycle"),
        contract: await loadContract(contractPath),
        training: { epochs: 2, lr: 5e-3, seed: 0 },
        export: { bytesPerToken: 1 },
        taughtMinRate: 0,
        // Another quantization of the same weights: the version is offered to it too.
        compatibleBases: [OTHER_QUANT],
        makeEngine: () => new EngineSupervisor(spawnTestEngine()),
      });
      expect(result.exported.report.items).toBe(PAIRS.length);
      expect(result.exported.train).toBeGreaterThan(0);
      expect(result.parent?.version).toBe("1.0.0");
      expect(result.trained.manifest).toMatchObject({ id: "math", domain: "math" });
      // Gated on the team's cases, pinned to the math adapter, and on its own taught suite.
      expect(result.contract.comparison?.byTag.math?.cases).toBe(CASES.length);
      expect(result.contract.cases.every((c) => c.adapters.some((a) => a.startsWith("math@")))).toBe(true);
      expect(result.taught.own.cases.length).toBeGreaterThan(0);
      expect(result.published).toMatchObject({ id: "math", domain: "math", version: "1.1.0" });
      expect(result.published?.base).toMatchObject({
        baseSha256: await sha256File(demoBasePath()),
        compatibleSha256: [OTHER_QUANT],
      });
      const forQuant = await fetchRegistryIndex(cloud.url, undefined, OTHER_QUANT);
      expect(forQuant.adapters.map((a) => `${a.id} ${a.version}`)).toEqual(["math 1.1.0"]);
    },
    LOOP_HANG_GUARD_MS,
  );
});
