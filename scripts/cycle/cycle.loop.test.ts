/**
 * The learning loop for real, on loopback: the trained demo base and specialists, the real
 * cloud service, the PyTorch trainer, node-llama-cpp, the app's core and its API.
 *   1. The live Coding v1 is weak (a few steps on a few examples). The user corrects coding
 *      answers through the app's API (chat.send → feedback.correct), sharing on; they sync.
 *   2. `runCycle` exports them, trains v1.1 from v1, runs the coding suite of the contract on
 *      the cloud side (candidate vs live): its pass rate rises, it is published with lineage.
 *   3. The app finds it, runs its own gate (the whole contract), and it goes live.
 *   4. Poison: the user deletes what was uploaded and sends corrections whose answers belong to
 *      other topics; the next cycle trains v1.2 from v1.1 and the contract rejects it, naming
 *      its failing cases; nothing is published, v1.1 stays live.
 *   5. Rollback to v1 in the app.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdapterVersionInfo, Conversation, PrivacyState, Result, UpdateCheck } from "../../electron/api";
import { type Contract, loadContract } from "../../electron/core/contract/contract-schema";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { assembleCore, type Core } from "../../electron/core/index";
import { EventRecorder } from "../../testing/core/events";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { suiteDir } from "../../testing/core/temp-dir";
import { sha256File } from "../../common/hashing";
import { demoAdaptersDir, demoBasePath } from "../../native/gguf/demo-files";
import { publishAdapter, publishManifestOf } from "../../cloud/registry-client";
import { startCloud, type RunningCloud } from "../../cloud/server";
import { trainAdapter } from "../../cloud/training/train";
import { runCycle, type CycleResult } from "./cycle";
import { LOOP_HANG_GUARD_MS } from "../../testing/core/calibrated-budget";

const ctx = { transport: "ipc" } as const;
const dir = suiteDir("macaron-cycle-loop-");
const ADMIN = "admin-key-cycle-loop-1234";
/** Corrections the user makes per round: enough to learn from, small enough for CI. */
const CORRECTIONS = 80;
/** The candidate's coding pass rate must rise by at least this much over the weak v1. */
const MIN_RISE = 0.25;
/** The demo base: one token per byte, so the export's length limit counts bytes. */
const BYTES_PER_TOKEN = 1;
const TRAINING = { epochs: 8, lr: 5e-3, seed: 0 } as const;
/**
 * The contract both gates run here: the format-only contract v2 (testing/releases). Contract v3
 * judges answers right or wrong, and the tiny demo base answers 0 of 36 cases right in every
 * specialist, before and after a cycle: no rise can show on it. This loop tests the cycle's
 * mechanics (corrections → export → train → gate → publish → the app's gate → live, a
 * poisoned set rejected, rollback) under a contract the demo can move; v3's rejection of wrong
 * and degenerate answers is contract-v3.test.ts's and contract-command.test.ts's.
 */
let contract: Contract;

let cloud: RunningCloud;
let core: Core;
let events: EventRecorder;
export const numbers: Record<string, number> = {};

type Example = { messages: { role: string; content: string }[] };
const seed = (name: string): Example[] =>
  readFileSync(join(import.meta.dirname, "../../resources/training", name), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Example);
const user = (e: Example) => e.messages.find((m) => m.role === "user")!.content;
const answer = (e: Example) => e.messages.find((m) => m.role === "assistant")!.content;

async function call<T>(method: string, input: unknown = {}): Promise<T> {
  const r: Result<unknown> = await core.dispatch(method, input, ctx);
  if (!r.ok) throw new Error(`${method}: ${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

/** The user asks `prompt` of the pinned Coding adapter and corrects the answer to `better`. */
async function correct(conv: Conversation, prompt: string, better: string): Promise<void> {
  const done = events.next("chat.done", (d) => d.conversationId === conv.id);
  await call("chat.send", {
    conversationId: conv.id,
    text: prompt,
    adapters: { pinned: "coding" },
    sampling: { temperature: 0, maxTokens: 4 },
  });
  const message = (await done).message;
  await call("feedback.correct", { messageId: message.id, text: better });
}

/** Correct `pairs` in fresh conversations (one turn each: the export's prompts stay single-turn). */
async function collect(pairs: [string, string][]): Promise<void> {
  for (const [prompt, better] of pairs) {
    const conv = await call<Conversation>("conversations.create", {});
    await correct(conv, prompt, better);
  }
  const status = await call<{ state: string; queued: number }>("privacy.syncNow");
  expect(status).toMatchObject({ queued: 0 });
}

const cycle = (): Promise<CycleResult> =>
  runCycle({
    cloud: cloud.url,
    adminKey: ADMIN,
    domain: "coding",
    base: demoBasePath(),
    work: join(dir.path, `cycle-${Date.now()}`),
    contract,
    training: TRAINING,
    export: { bytesPerToken: BYTES_PER_TOKEN },
    // The held-out coding prompts are new subjects: the demo base, trained with today's
    // defaults, answers few of them as taught (issue 26 part 6). This loop asserts the rise on
    // the contract; the taught suites' rules are asserted in taught.loop.test.ts. Earlier
    // suites are still judged here (no forgetting).
    taughtMinRate: 0,
    makeEngine: () => new EngineSupervisor(spawnTestEngine()),
  });

const versions = (id: string) => call<AdapterVersionInfo[]>("adapters.versions", { id });
const live = async (id: string) => (await versions(id)).find((v) => v.live)?.version;

beforeAll(async () => {
  contract = await loadContract(join(import.meta.dirname, "../../testing/releases/format-contract-v2.json"));
  cloud = await startCloud({ dataDir: join(dir.path, "cloud"), adminKey: ADMIN });
  // The app's adapters: the shipped Chat, Agent and UI, and a weak Coding v1.
  const adapters = join(dir.path, "adapters");
  mkdirSync(adapters, { recursive: true });
  for (const id of ["chat", "agent", "ui"])
    for (const ext of ["gguf", "json"])
      copyFileSync(join(demoAdaptersDir(), `${id}.${ext}`), join(adapters, `${id}.${ext}`));
  const few = join(dir.path, "coding-few.jsonl");
  writeFileSync(
    few,
    seed("coding.train.jsonl")
      .slice(0, 4)
      .map((e) => JSON.stringify(e) + "\n")
      .join(""),
  );
  const v1 = await trainAdapter(
    { base: demoBasePath(), data: few, out: adapters, id: "coding", domain: "coding", steps: 2, seed: 0 },
    () => undefined,
  );
  await publishAdapter(
    { url: cloud.url, adminKey: ADMIN },
    publishManifestOf(v1.manifest),
    readFileSync(v1.adapterPath),
  );

  core = await assembleCore(
    {
      dataDir: join(dir.path, "app"),
      initialModel: demoBasePath(),
      adaptersDir: adapters,
      demoAdapters: false,
      contract,
      registryUrl: cloud.url,
      feedbackEndpoint: cloud.url,
      feedbackTiming: { debounceMs: 3_600_000, statusThrottleMs: 0 },
      updatesInitialDelayMs: 3_600_000,
      log: () => undefined,
    },
    () => new EngineSupervisor(spawnTestEngine()),
  );
  events = new EventRecorder((l) => core.subscribe(l));
  await call<{ privacy: PrivacyState }>("privacy.update", { sharing: "ratings_and_text" });
}, 240_000);

afterAll(async () => {
  await core?.close();
  await cloud?.close();
});

describe("the learning loop", () => {
  it(
    "learns from corrections, is proven by the (format) contract, goes live; a poisoned set is rejected; rollback",
    async () => {
      expect(await live("coding")).toBe("1.0.0");
      const corrections = seed("coding.train.jsonl").slice(4, 4 + CORRECTIONS);
      await collect(corrections.map((e) => [user(e), answer(e)]));

      // The cycle: export → train from the live v1 → contract on the cloud side → publish.
      const good = await cycle();
      numbers.cycleSeconds = good.seconds.total;
      numbers.trainSeconds = good.seconds.train;
      numbers.contractSeconds = good.seconds.contract;
      expect(good.parent?.version).toBe("1.0.0");
      // Every correction reached the export; near-duplicate ones were folded, ~10% held out.
      expect(good.exported.report.items).toBe(CORRECTIONS);
      expect(good.exported.train).toBeGreaterThan(CORRECTIONS / 2);
      expect(good.trained.manifest.lineage).toMatchObject({ parent: "1.0.0", method: "sft" });
      const rates = good.contract.comparison!.byTag.coding!;
      numbers.livePassRate = rates.liveRate;
      numbers.candidatePassRate = rates.candidateRate;
      numbers.ownTaughtRate = good.contract.taught?.suites.find((s) => s.own)?.candidateRate ?? -1;
      expect(rates.candidateRate - rates.liveRate).toBeGreaterThanOrEqual(MIN_RISE);
      expect(good.contract.passed).toBe(true);
      expect(good.published).toMatchObject({ id: "coding", version: "1.1.0", lineage: { parent: "1.0.0" } });
      expect(good.published!.lineage.details).toMatchObject({
        harnessVersion: expect.any(String) as unknown,
        dataset: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown },
      });
      expect(good.published!.sha256).toBe(await sha256File(good.trained.adapterPath));

      // The app downloads it and runs its own gate: live.
      const check = await call<UpdateCheck>("adapters.checkUpdates", { wait: true });
      expect(check.results.map((r) => [r.version, r.outcome])).toEqual([["1.1.0", "promoted"]]);
      expect(await live("coding")).toBe("1.1.0");

      // Poison: what was uploaded is deleted, then coding prompts get other topics' answers.
      expect((await call<{ deletedItems: number }>("privacy.deleteUploaded")).deletedItems).toBeGreaterThan(
        0,
      );
      const wrong = [...seed("chat.train.jsonl"), ...seed("agent.train.jsonl")];
      await collect(corrections.map((e, i) => [user(e), answer(wrong[i]!)]));
      const poisoned = await cycle();
      expect(poisoned.parent?.version).toBe("1.1.0");
      expect(poisoned.contract.passed).toBe(false);
      expect(poisoned.published).toBeNull();
      expect(poisoned.contract.failing.length).toBeGreaterThan(0);
      expect(poisoned.contract.failing.every((id) => id.startsWith("coding"))).toBe(true);
      numbers.poisonedPassRate = poisoned.contract.comparison!.byTag.coding!.candidateRate;
      const none = await call<UpdateCheck>("adapters.checkUpdates", { wait: true });
      expect(none.available).toEqual([]);
      expect(await live("coding")).toBe("1.1.0");

      // Rollback to v1.
      await call("adapters.rollback", { id: "coding", version: "1.0.0" });
      expect(await live("coding")).toBe("1.0.0");
      console.log(`learning loop: ${JSON.stringify(numbers)}`);
    },
    LOOP_HANG_GUARD_MS,
  );
});
