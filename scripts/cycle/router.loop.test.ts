/**
 * The router learns in the cycle (issue 29), end to end on the demo: the four shipped
 * specialists are live in the registry; users' feedback (chat corrections, an "answer again with
 * UI" override, a pinned turn) is uploaded; `runCycle` with `router` trains Chat's next version
 * and a routing head for the demo base (routing examples + seed training prompts + those
 * outcomes), gates the head on the default contract's router suite against the live kernel
 * classifier, and publishes it in Chat 1.1.0's signed lineage. A second cycle without a better
 * head carries the live head on.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256File } from "../../common/hashing";
import type { FeedbackItem } from "../../common/feedback-protocol";
import {
  fetchRegistryIndex,
  liveEntry,
  publishAdapter,
  publishManifestOf,
} from "../../cloud/registry-client";
import { startCloud, type RunningCloud } from "../../cloud/server";
import { defaultContract } from "../../electron/core/contract/default-contract";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { decodeRouterArtifact, routerInLineage } from "../../electron/core/router/routing-head";
import { demoAdaptersDir, demoBasePath } from "../../native/gguf/demo-files";
import { makeItem, registerInstall, uploadBatch } from "../../testing/cloud/items";
import { LOOP_HANG_GUARD_MS } from "../../testing/core/calibrated-budget";
import { suiteDir } from "../../testing/core/temp-dir";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { runCycle } from "./cycle";

const ADMIN = "admin-key-router-cycle-1234";
const dir = suiteDir("macaron-router-cycle-");
let cloud: RunningCloud;

beforeAll(async () => {
  cloud = await startCloud({ dataDir: join(dir.path, "cloud"), adminKey: ADMIN });
  for (const file of readdirSync(demoAdaptersDir()).filter((f) => f.endsWith(".json"))) {
    const manifest = JSON.parse(readFileSync(join(demoAdaptersDir(), file), "utf8")) as Parameters<
      typeof publishManifestOf
    >[0];
    await publishAdapter(
      { url: cloud.url, adminKey: ADMIN },
      publishManifestOf(manifest),
      readFileSync(join(demoAdaptersDir(), file.replace(/\.json$/, ".gguf"))),
    );
  }
}, 60_000);
afterAll(async () => {
  await cloud?.close();
});

let n = 0;
const item = (over: Partial<FeedbackItem>): FeedbackItem =>
  makeItem(`router-${String(++n).padStart(4, "0")}`, over);
/** The versions of an answer by `adapter` alone, routed in `mode`. */
const answeredBy = (adapter: string, mode: "auto" | "pinned"): FeedbackItem["versions"] => ({
  modelSha256: null,
  harnessVersion: "test",
  adapters: [{ id: adapter, version: "1.0.0", scale: 1 }],
  router: { mode, confidence: 1, reason: mode },
  catalogVersion: null,
});

describe("the router in the cycle", () => {
  it(
    "trains a routing head from seeds and outcomes, gates it on the router suite and publishes it with the release",
    async () => {
      const install = await registerInstall(cloud.url);
      // Distinct chat lines (the seed set's first 20) as users' corrections: the export's lines.
      const seeds = readFileSync(
        join(import.meta.dirname, "../../resources/training/chat.train.jsonl"),
        "utf8",
      )
        .split("\n")
        .filter((l) => l.trim())
        .slice(0, 20)
        .map((l) => (JSON.parse(l) as { messages: Array<{ content: string }> }).messages);
      const corrections = seeds.map(([q, a]) =>
        item({
          kind: "correction",
          domain: "chat",
          rating: null,
          prompt: [{ role: "user", text: q!.content }],
          response: "Hm.",
          correction: a!.content,
        }),
      );
      const outcomes = [
        item({
          kind: "router_override",
          domain: "chat",
          rating: null,
          versions: answeredBy("chat", "auto"),
          prompt: [{ role: "user", text: "Draw my weekly steps as a little bar chart." }],
          interaction: { from: ["chat"], chosen: "ui" },
        }),
        item({
          kind: "copy",
          domain: "coding",
          rating: null,
          versions: answeredBy("coding", "pinned"),
          prompt: [{ role: "user", text: "Regex for a five digit zip code?" }],
        }),
      ];
      const res = await uploadBatch(cloud.url, install, "router-batch", [...corrections, ...outcomes]);
      expect(((await res.json()) as { accepted: string[] }).accepted).toHaveLength(22);

      const cycle = (name: string) =>
        runCycle({
          cloud: cloud.url,
          adminKey: ADMIN,
          domain: "chat",
          base: demoBasePath(),
          work: join(dir.path, name),
          contract: defaultContract(),
          training: { steps: 1, lr: 1e-5, seed: 0 },
          export: { bytesPerToken: 1 },
          taughtMinRate: 0,
          router: { seedsDir: join(import.meta.dirname, "../../resources/training") },
          makeEngine: () => new EngineSupervisor(spawnTestEngine()),
        });
      const first = await cycle("cycle-1");
      expect(first.published).toMatchObject({ id: "chat", version: "1.1.0" });
      const router = first.router!;
      // Judged through the app's router on the demo base: better than the live kernel classifier.
      expect(router.verdict).toMatchObject({ passed: true, cases: 16, live: "kernel classifier" });
      expect(router.verdict.candidatePassed).toBeGreaterThan(router.verdict.livePassed);
      expect(router.published).toBe("new");
      expect(router.examples).toMatchObject({ override: 1, pin: 1, seeds: 800 });
      expect(router.examples.routingExamples).toBeGreaterThan(0);

      // In the registry, signed with the entry: the head for this base, with its lineage.
      const baseSha256 = await sha256File(demoBasePath());
      const index = await fetchRegistryIndex(cloud.url, undefined, baseSha256);
      const entry = liveEntry(index, "chat", baseSha256)!;
      expect(entry.version).toBe("1.1.0");
      expect(entry.signature).toBeTruthy();
      const head = decodeRouterArtifact(routerInLineage(entry.lineage));
      expect(head).toMatchObject({ version: 1, baseSha256 });
      expect([...head.labels]).toEqual(["agent", "chat", "coding", "ui"]);
      expect(head.artifact.lineage).toMatchObject({ parent: null, sources: { override: 1, pin: 1 } });
      expect((entry.lineage.details?.cycle as { routerGate?: unknown }).routerGate).toMatchObject({
        passed: true,
        candidatePassed: router.verdict.candidatePassed,
      });

      // The next cycle trains head v2 from the same data: it routes no better than live v1, so
      // it passes only when it ties; either way Chat 1.2.0 carries a head (new or carried on).
      const second = await cycle("cycle-2");
      expect(second.router?.verdict.live).toBe("head v1");
      expect(second.router?.published).toBe(second.router?.verdict.passed ? "new" : "carried");
      const next = liveEntry(await fetchRegistryIndex(cloud.url, undefined, baseSha256), "chat", baseSha256)!;
      expect(next.version).toBe("1.2.0");
      expect(decodeRouterArtifact(routerInLineage(next.lineage)).version).toBe(
        second.router?.verdict.passed ? 2 : 1,
      );
    },
    LOOP_HANG_GUARD_MS,
  );
});
