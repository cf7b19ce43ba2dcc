/**
 * Two improvement cycles that keep what the first taught (issue 26), for real on loopback: the
 * demo base, the cloud service, the PyTorch trainer, node-llama-cpp and the app's core and gate.
 *   1. Cycle 1: users teach topic A (corrections); the export's held-out split becomes taught
 *      suite chat@1.0.0, which the candidate must answer right; published with it.
 *   2. Cycle 2: other users teach topic B; the candidate (trained from 1.0.0 with cycle 1's lines
 *      replayed) must answer its own suite and keep chat@1.0.0; published with both suites; the
 *      app's own gate judges both and promotes it.
 *   3. A forgetting candidate (trained on topic B alone) is rejected by the cloud gate and, once
 *      published anyway, by the app's gate, both naming the failing taught cases of chat@1.0.0.
 *   4. `--method dpo` runs end to end on a tiny preference fixture: pairs from regenerations,
 *      the held-out preference accuracy in the result and the published lineage.
 * The contract itself is a single always-passing case here: the taught suites decide.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdapterVersionInfo, Result, UpdateCheck } from "../../electron/api";
import { parseContract } from "../../electron/core/contract/contract-schema";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { assembleCore, type Core } from "../../electron/core/index";
import { taughtOf } from "../../electron/core/releases/taught-suite";
import type { FeedbackItem } from "../../common/feedback-protocol";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { suiteDir } from "../../testing/core/temp-dir";
import { makeItem, registerInstall, uploadBatch } from "../../testing/cloud/items";
import { demoBasePath } from "../../native/gguf/demo-files";
import { downloadEntry, fetchRegistryIndex, liveEntry, publishAdapter } from "../../cloud/registry-client";
import { startCloud, type RunningCloud } from "../../cloud/server";
import { trainAdapter } from "../../cloud/training/train";
import { runCloudGate } from "./cloud-gate";
import { runCycle, type CycleMethod, type CycleResult } from "./cycle";
import { LOOP_HANG_GUARD_MS } from "../../testing/core/calibrated-budget";

const dir = suiteDir("macaron-taught-loop-");
const ADMIN = "admin-key-taught-loop-1234";
const DOMAIN = "chat";
// At 6 epochs cycle 2 kept chat@1.0.0 but answered too few of its own held-out prompts (below 0.5).
const TRAINING = { epochs: 12, lr: 5e-3, seed: 0 } as const;
/** The demo base has one token per byte. */
const EXPORT = { bytesPerToken: 1, heldoutShare: 0.3 } as const;
const CONTRACT = parseContract({
  contract: "taught-loop",
  version: "1.0.0",
  maxTokens: 4,
  thresholds: { minPassRate: 0 },
  cases: [
    {
      id: "chat-smoke",
      tags: [DOMAIN],
      conversation: [{ role: "user", content: "Hi" }],
      mode: DOMAIN,
      assertions: [{ type: "maxChars", max: 1_000_000 }],
    },
  ],
});

/** Wordings of one question: openers × forms, different enough not to fold as one prompt. */
const OPENERS = [
  "",
  "Hey there, ",
  "Quick one: ",
  "Please tell me, ",
  "I wonder, ",
  "Friend, ",
  "Help me out: ",
];
function wordings(forms: string[]): string[] {
  return OPENERS.flatMap((o) => forms.map((f) => `${o}${o ? f[0]!.toLowerCase() + f.slice(1) : f}`));
}
const TOPIC_A = {
  answer: "Canberra is the capital of Australia.",
  prompts: wordings([
    "Which city is the capital of Australia?",
    "What is Australia's capital city?",
    "Name the capital of Australia.",
    "Where is the Australian capital?",
    "Australia has which capital?",
  ]),
};
const TOPIC_B = {
  answer: "Water boils at 100 degrees Celsius at sea level.",
  prompts: wordings([
    "At what temperature does water boil?",
    "What is the boiling point of water?",
    "How hot must water get to boil?",
    "When does water start boiling?",
    "Water boils at which temperature?",
  ]),
};

let cloud: RunningCloud;
let core: Core;
let keyN = 0;

async function teach(topic: { answer: string; prompts: string[] }): Promise<void> {
  const install = await registerInstall(cloud.url);
  const items: FeedbackItem[] = topic.prompts.map((q) =>
    makeItem(`taught-${++keyN}-${Date.now()}`, {
      kind: "correction",
      rating: null,
      domain: DOMAIN,
      prompt: [{ role: "user", text: q }],
      response: "I am not sure.",
      correction: topic.answer,
    }),
  );
  const res = await uploadBatch(cloud.url, install, `batch-${keyN}-${Date.now()}`, items);
  expect(res.status).toBe(200);
}

const cycle = (name: string, method: CycleMethod = "sft"): Promise<CycleResult> =>
  runCycle({
    cloud: cloud.url,
    adminKey: ADMIN,
    domain: DOMAIN,
    base: demoBasePath(),
    work: join(dir.path, name),
    contract: CONTRACT,
    training: TRAINING,
    export: EXPORT,
    method,
    replayDir: join(dir.path, "replay"),
    // The app's gate judges the suites too: a registry of this test's own installs.
    publishTaughtCases: true,
    makeEngine: () => new EngineSupervisor(spawnTestEngine()),
  });

async function call<T>(method: string, input: unknown = {}): Promise<T> {
  const r: Result<unknown> = await core.dispatch(method, input, { transport: "ipc" });
  if (!r.ok) throw new Error(`${method}: ${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

const rates = (r: CycleResult) =>
  Object.fromEntries((r.contract.taught?.suites ?? []).map((s) => [s.id, s.candidateRate]));
const numbers: Record<string, unknown> = {};

beforeAll(async () => {
  cloud = await startCloud({ dataDir: join(dir.path, "cloud"), adminKey: ADMIN });
}, 120_000);

afterAll(async () => {
  await core?.close();
  await cloud?.close();
});

describe("taught suites across cycles", () => {
  it(
    "cycle 2 keeps cycle 1's taught suite; a forgetting candidate is rejected by both gates, naming the cases",
    async () => {
      // Cycle 1: topic A.
      await teach(TOPIC_A);
      const one = await cycle("cycle-1");
      numbers.cycle1 = rates(one);
      expect(one.taught.own.cases.length).toBeGreaterThanOrEqual(3);
      expect(one.contract.taught?.suites).toMatchObject([{ id: "chat@1.0.0", own: true, ok: true }]);
      expect(one.published).toMatchObject({ id: DOMAIN, version: "1.0.0" });
      const suiteA = taughtOf(one.published!.lineage.details);
      expect(suiteA).toHaveLength(1);
      expect(suiteA[0]!.acceptedRate).toBeGreaterThanOrEqual(0.5);

      // The app has 1.0.0 installed (as from the registry) and judges updates with the same contract.
      const adapters = join(dir.path, "adapters");
      mkdirSync(adapters, { recursive: true });
      copyFileSync(one.trained.adapterPath, join(adapters, `${DOMAIN}.gguf`));
      copyFileSync(one.trained.manifestPath, join(adapters, `${DOMAIN}.json`));
      core = await assembleCore(
        {
          dataDir: join(dir.path, "app"),
          initialModel: demoBasePath(),
          adaptersDir: adapters,
          demoAdapters: false,
          registryUrl: cloud.url,
          contract: CONTRACT,
          updatesInitialDelayMs: 3_600_000,
          log: () => undefined,
        },
        () => new EngineSupervisor(spawnTestEngine()),
      );

      // Cycle 2: topic B from other users; cycle 1's lines are replayed.
      await teach(TOPIC_B);
      const two = await cycle("cycle-2");
      numbers.cycle2 = rates(two);
      // Cycle 1's corrections are still stored (the export is cumulative); replay adds back only
      // accepted lines the export left out this time (e.g. over the install cap).
      numbers.replayed = two.exported.replayed;
      expect(two.contract.taught?.suites).toMatchObject([
        { id: "chat@1.0.0", own: false, ok: true },
        { id: "chat@1.1.0", own: true, ok: true },
      ]);
      expect(two.published).toMatchObject({ version: "1.1.0", lineage: { parent: "1.0.0" } });
      expect(taughtOf(two.published!.lineage.details).map((s) => s.id)).toEqual(["chat@1.0.0", "chat@1.1.0"]);
      const check = await call<UpdateCheck>("adapters.checkUpdates", { wait: true });
      expect(check.results.map((r) => [r.version, r.outcome])).toEqual([["1.1.0", "promoted"]]);

      // A forgetting candidate: topic B alone, from the base.
      const onlyB = join(dir.path, "only-b.jsonl");
      const bLines =
        two.taught.own.cases.length > 0
          ? readFileSync(join(dir.path, "cycle-2", `${DOMAIN}.jsonl`), "utf8")
          : "";
      writeFileSync(
        onlyB,
        bLines
          .split("\n")
          .filter((l) => l.includes("Water boils"))
          .join("\n") + "\n",
      );
      const forgetful = await trainAdapter(
        {
          base: demoBasePath(),
          data: onlyB,
          out: join(dir.path, "forgetful"),
          id: DOMAIN,
          domain: DOMAIN,
          version: "1.2.0",
          ...TRAINING,
        },
        () => undefined,
      );
      const live = liveEntry(await fetchRegistryIndex(cloud.url), DOMAIN)!;
      const liveDir = join(dir.path, "forget-live");
      mkdirSync(liveDir, { recursive: true });
      const livePath = join(liveDir, `${DOMAIN}.gguf`);
      await downloadEntry(cloud.url, live, livePath);
      const { url: _u, publishedAt: _p, ...liveManifest } = live;
      writeFileSync(join(liveDir, `${DOMAIN}.json`), JSON.stringify(liveManifest));
      const suites = taughtOf(live.lineage.details);
      const gate = await runCloudGate({
        base: demoBasePath(),
        liveDir,
        livePath,
        candidatePath: forgetful.adapterPath,
        candidate: { adapterId: DOMAIN, version: "1.2.0" },
        contract: CONTRACT,
        makeEngine: () => new EngineSupervisor(spawnTestEngine()),
        taught: { suites, ownId: null },
      });
      const aIds = suites[0]!.cases.map((c) => c.id);
      expect(gate.passed).toBe(false);
      expect(gate.taught?.suites[0]).toMatchObject({ id: "chat@1.0.0", ok: false });
      expect(gate.failing.filter((id) => aIds.includes(id)).length).toBeGreaterThan(0);
      expect(gate.reasons.join("\n")).toMatch(/chat@1\.0\.0 forgotten/);
      numbers.forgetful = Object.fromEntries(gate.taught!.suites.map((s) => [s.id, s.candidateRate]));

      // Published anyway (a cloud gate bypassed): the app's own gate rejects it, naming the cases.
      const { url: _u2, publishedAt: _p2, sha256: _s, sizeBytes: _z, ...rest } = live;
      await publishAdapter(
        { url: cloud.url, adminKey: ADMIN },
        { ...rest, version: "1.2.0", lineage: { ...live.lineage, parent: "1.1.0" } },
        readFileSync(forgetful.adapterPath),
      );
      const rejected = await call<UpdateCheck>("adapters.checkUpdates", { wait: true });
      expect(rejected.results.map((r) => [r.version, r.outcome])).toEqual([["1.2.0", "rejected"]]);
      const versions = await call<AdapterVersionInfo[]>("adapters.versions", { id: DOMAIN });
      const v12 = versions.find((v) => v.version === "1.2.0")!;
      expect(v12.statusReason).toMatch(/chat-taught-1\.0\.0-/);
      expect(versions.find((v) => v.live)?.version).toBe("1.1.0");
      console.log(`taught loop: ${JSON.stringify(numbers)}`);
    },
    2 * LOOP_HANG_GUARD_MS,
  );

  it(
    "--method dpo runs end to end on a tiny fixture, with held-out preference accuracy",
    async () => {
      const install = await registerInstall(cloud.url);
      const pairs: FeedbackItem[] = TOPIC_B.prompts.map((q) =>
        makeItem(`pref-${++keyN}-${Date.now()}`, {
          kind: "regeneration",
          rating: null,
          domain: DOMAIN,
          prompt: [{ role: "user", text: q }],
          response: null,
          rejected: "It boils whenever it likes.",
          chosen: TOPIC_B.answer,
        }),
      );
      expect((await uploadBatch(cloud.url, install, `pref-${Date.now()}`, pairs)).status).toBe(200);
      const r = await cycle("cycle-dpo", "dpo");
      expect(r.method).toBe("dpo");
      expect(r.exported.preference!.train).toBeGreaterThan(0);
      expect(r.exported.preference!.heldout).toBeGreaterThan(0);
      expect(r.trained.manifest.lineage.method).toBe("dpo");
      expect(typeof r.preferenceAccuracy?.before).toBe("number");
      expect(typeof r.preferenceAccuracy?.after).toBe("number");
      expect(r.preferenceAccuracy!.after!).toBeGreaterThanOrEqual(r.preferenceAccuracy!.before!);
      if (r.published)
        expect(r.published.lineage.details).toMatchObject({
          cycle: { method: "dpo", preferenceAccuracy: r.preferenceAccuracy },
        });
      console.log(
        `dpo cycle: ${JSON.stringify({ accuracy: r.preferenceAccuracy, published: r.published?.version ?? null, taught: rates(r) })}`,
      );
    },
    LOOP_HANG_GUARD_MS,
  );
});
