/**
 * A GRPO cycle on users' trajectories, end to end on loopback (issue 29 item 2): the shipped
 * Agent is live; users' answers that called tools are stored in the cloud, succeeded and failed
 * (a denied call, an invalid one, a bad rating), some prompts with a success beside the failure
 * and some with a failure alone. `runCycle({method: "grpo"})` without self-improvement takes
 * the cloud's groups export (cloud/prepare/groups.ts): each prompt's answers as one group with
 * their rewards, a lone one against the baseline; the real trainer's GRPO from the live version,
 * the cloud gate, and a lineage that says the groups came from users, with the negatives trained.
 *
 * Not asserted: that the candidate answers better (on the 0.7M demo the gate compares 0/N with
 * 0/N, bench/README.md "self-improve"); what is asserted is what it trained on.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FeedbackItem, TrajectoryStepWire } from "../../common/feedback-protocol";
import { defaultContract } from "../../electron/core/contract/default-contract";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { demoBasePath } from "../../native/gguf/demo-files";
import { LOOP_HANG_GUARD_MS } from "../../testing/core/calibrated-budget";
import { demoCloud } from "../../testing/cloud/demo-cloud";
import { makeItem } from "../../testing/cloud/items";
import { suiteDir } from "../../testing/core/temp-dir";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { runCycle } from "./cycle";

const dir = suiteDir("macaron-user-groups-loop-");
const ADMIN = "admin-key-user-groups-1234";
const DOMAIN = "agent";
const INSTALL = "00000000-0000-4000-8000-00000000cd01";

const cloud = demoCloud({ dataDir: () => join(dir.path, "cloud"), adminKey: ADMIN, domain: DOMAIN });

const timer = {
  name: "set_timer",
  description: "Start a countdown timer.",
  parameters: { type: "object", properties: { minutes: { type: "number" } }, required: ["minutes"] },
  server: "builtin",
  tool: "set_timer",
};
const outcome = { steps: 1, done: 1, denied: 0, errors: 0, invalid: 0, stopped: 0, truncated: 0, totalMs: 5 };

function step(minutes: number, over: Partial<TrajectoryStepWire> = {}): TrajectoryStepWire {
  return {
    index: 0,
    server: "builtin",
    tool: "set_timer",
    arguments: { minutes },
    decision: "once",
    state: "done",
    result: `Timer set for ${minutes} minutes.`,
    truncated: false,
    error: null,
    durationMs: 5,
    ...over,
  };
}

/** What each prompt times: different words, so no two prompts fold as near-duplicates. */
const WHAT = [
  "the green tea",
  "boiling pasta",
  "my laundry",
  "a quick nap",
  "the oven bread",
  "stretching",
  "homework review",
  "parking meter",
  "phone call prep",
  "meditation",
  "soft eggs",
  "rice cooker",
  "plant watering",
  "chess blitz",
  "bike repair",
  "paint drying",
  "dough rising",
  "piano scales",
  "email triage",
  "tax forms",
  "dog walking",
  "slide deck",
  "garden hose",
  "yoga flow",
  "cookie batch",
  "reading sprint",
  "room cleanup",
  "pizza dough",
  "coffee brew",
  "movie break",
];

let n = 0;
/** A user's answer to a timer request for `m` minutes that made `s` and said `text`. */
function answer(
  m: number,
  s: TrajectoryStepWire,
  text: string,
  over: Partial<FeedbackItem> = {},
): FeedbackItem {
  return makeItem(`user-groups-${++n}`, {
    kind: "trajectory",
    rating: null,
    domain: DOMAIN,
    prompt: [{ role: "user", text: `Please time ${WHAT[m - 1]} (${m} min).` }],
    response: text,
    toolOutcome: outcome,
    trajectory: { tools: [timer], steps: [s] },
    ...over,
  });
}

const denied = (m: number) => step(m, { decision: "deny", state: "denied", result: null });
const invalid = (m: number) =>
  step(m, { state: "invalid", decision: null, result: null, error: "bad minutes" });

/** Prompts 1–12: a success and a denied call (paired); 13–24 a failure alone; 25–30 a success alone. */
function items(): FeedbackItem[] {
  const out: FeedbackItem[] = [];
  for (let m = 1; m <= 12; m++)
    out.push(answer(m, step(m), `Your ${m}-minute timer is on.`), answer(m, denied(m * 2), ""));
  for (let m = 13; m <= 24; m++)
    out.push(
      m % 2 === 0
        ? answer(m, invalid(m), "Done.")
        : answer(m, step(m + 1), "Timer on.", { kind: "rating", rating: "bad" }),
    );
  for (let m = 25; m <= 30; m++) out.push(answer(m, step(m), `Timer for ${m} minutes started.`));
  return out;
}

describe("a GRPO cycle on users' trajectories", () => {
  it(
    "trains each prompt's answers as a group, lone failures included, and says so in the lineage",
    async () => {
      const store = cloud().store;
      await store.registerInstall(INSTALL, "hash", 0);
      const stored = await store.ingest({
        installId: INSTALL,
        batchId: "user-groups-1",
        digest: "user-groups-1",
        items: items(),
        at: 1_700_000_100_000,
        limits: { maxStoredItems: null },
        answer: ({ accepted, duplicates }) => ({ accepted, duplicates, rejected: [] }),
      });
      expect(stored.kind).toBe("stored");

      const contract = defaultContract();
      const logs: string[] = [];
      const result = await runCycle({
        cloud: cloud().url,
        adminKey: ADMIN,
        domain: DOMAIN,
        base: demoBasePath(),
        work: join(dir.path, "cycle"),
        // A few of the Agent's cases: the gate's mechanics, candidate against live.
        contract: { ...contract, cases: contract.cases.filter((c) => c.tags.includes(DOMAIN)).slice(0, 4) },
        method: "grpo",
        training: { steps: 4, lr: 2e-3, seed: 0 },
        export: { bytesPerToken: 1 },
        makeEngine: () => new EngineSupervisor(spawnTestEngine()),
        log: (l) => logs.push(l),
      });
      const groups = result.exported.groups!;
      const t = groups.report.trajectories!;
      console.log(
        `user groups loop: ${JSON.stringify({ groups: { train: groups.train, heldout: groups.heldout }, trajectories: t, seconds: result.seconds })}`,
      );
      expect(result.method).toBe("grpo");
      expect(result).not.toHaveProperty("selfImprove");
      // 30 prompts, one group each, split by prompt between train and held out.
      expect(groups.train + groups.heldout).toBe(30);
      expect(t).toMatchObject({
        items: 42,
        succeeded: 18,
        failed: 24,
        negativesInGroups: 24,
        negativesUnpaired: 12,
      });
      // The failures of the train split's groups, the lone ones (no success beside them) included.
      expect(t.negativesTrained!.unpaired).toBeGreaterThan(0);
      expect(t.negativesTrained!.inGroups).toBeGreaterThan(t.negativesTrained!.unpaired);
      expect(logs).toContain(`GRPO on ${groups.train} groups of users' trajectories`);

      // The trainer read them all, each call laid out with its result outside the loss.
      const lineage = result.trained.manifest.lineage;
      expect(lineage.method).toBe("grpo");
      expect(lineage.dataset.lines).toBe(groups.train);
      expect(result.trained.dataset.toolCalls).toMatchObject({ unmaskedResults: 0, badTools: 0 });

      expect(result.contract.passed).toBe(true);
      expect(result.published!.lineage.trainedFrom).toMatch(/^export:agent\.jsonl@sha256:[0-9a-f]{64}$/);
      expect(result.published!.lineage.details).toMatchObject({
        cycle: {
          method: "grpo",
          groupSources: { user: groups.train, selfGenerated: 0 },
          userGroupsExport: { splits: { train: groups.train, heldout: groups.heldout }, trajectories: t },
        },
      });
      expect(result.published!.releaseNotes).toMatch(
        new RegExp(
          `users' trajectories: ${groups.train} GRPO groups \\(${t.negativesTrained!.inGroups} failed answers`,
        ),
      );
    },
    LOOP_HANG_GUARD_MS,
  );
});
