/**
 * The episode reward (episode-reward.ts) and the data chosen from rewarded episodes
 * (episode-data.ts), without an engine or a server: traces are written by hand as the agent
 * loop records them. What can be gamed — no call, an empty answer, one answer for every task,
 * a value the chain never produced, a denied call tried again — is never rewarded.
 */
import { describe, expect, it } from "vitest";
import { parseExampleLine } from "../../../cloud/training/dataset-file";
import { episodeVerdict } from "../episode-gate";
import { selectEpisodes } from "./episode-data";
import {
  EPISODE_PARTIAL,
  type EpisodeCall,
  type EpisodeTrace,
  episodeOutcome,
  episodeOutcomes,
} from "./episode-reward";
import type { Episode } from "./episode-runner";
import { EPISODE_FAMILIES, episodeCode, episodeTasks } from "./episode-tasks";

const SALT = "test-salt";
const tasks = episodeTasks({ salt: SALT });
const task = (family: string) => tasks.find((t) => t.family === family)!;

const done = (tool: string, args: Record<string, unknown>, result: unknown): EpisodeCall => ({
  tool,
  server: "episodes",
  arguments: args,
  state: "done",
  result: JSON.stringify(result),
  error: null,
});

/** The right chain of an order-tracking task, and its tracking code. */
function orderChain(t = task("order-tracking")) {
  const order = episodeCode("ORD", SALT, t.first);
  const tracking = episodeCode("TRK", SALT, order);
  const calls = [
    done("find_order", { customer: t.first }, { customer: t.first, order_id: order }),
    done("order_status", { order_id: order }, { order_id: order, status: "shipped", tracking }),
  ];
  return { t, order, tracking, calls };
}

const trace = (
  taskId: string,
  calls: EpisodeCall[],
  answer: string,
  extra: Partial<EpisodeTrace> = {},
): EpisodeTrace => ({
  taskId,
  calls,
  answer,
  error: null,
  ...extra,
});

describe("episode tasks", () => {
  it("are multi-step: every chain has two or more calls, each family is present, ids are unique", () => {
    expect(new Set(tasks.map((t) => t.family))).toEqual(new Set(EPISODE_FAMILIES));
    expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
    for (const t of tasks) {
      expect(t.steps.length).toBeGreaterThanOrEqual(2);
      expect(t.prompt.toLowerCase()).toContain(t.first.toLowerCase());
    }
    // The codes depend on the salt: another cycle's episodes cannot teach this one's values.
    expect(episodeCode("ORD", "a", "Ana Ruiz")).not.toBe(episodeCode("ORD", "b", "Ana Ruiz"));
    expect(episodeTasks({ salt: SALT, count: 3 }).map((t) => t.family)).toEqual(EPISODE_FAMILIES.slice(0, 3));
  });
});

describe("episode reward", () => {
  it("is 1 for the task done: the chain's calls with the carried values and the final value in the answer", () => {
    const { t, tracking, calls } = orderChain();
    const o = episodeOutcome(t, trace(t.id, calls, `The tracking code is ${tracking}.`));
    expect(o).toMatchObject({ reward: 1, done: true, callsValid: true, deniedRetried: false, verified: 2 });
  });

  it("gives partial credit only for verified steps", () => {
    const { t, order, tracking, calls } = orderChain();
    // The first call only: one of two steps.
    expect(episodeOutcome(t, trace(t.id, calls.slice(0, 1), `Your order is ${order}.`)).reward).toBe(
      EPISODE_PARTIAL / 2,
    );
    // Both calls but the answer lacks the value: not done, both steps verified.
    const lacking = episodeOutcome(t, trace(t.id, calls, "I checked your order, it has shipped."));
    expect(lacking).toMatchObject({ done: false, verified: 2, reward: EPISODE_PARTIAL });
    expect(lacking.reason).toMatch(/lacks/);
    // A second call with a value no result gave (a guessed id) verifies nothing.
    const guessed = [calls[0]!, done("order_status", { order_id: "ORD-0000" }, { tracking: "TRK-1111" })];
    const g = episodeOutcome(t, trace(t.id, guessed, "The tracking code is TRK-1111."));
    expect(g).toMatchObject({ done: false, verified: 1, reward: EPISODE_PARTIAL / 2 });
    // An argument stuffed with several values is none of them.
    const stuffed = [
      calls[0]!,
      done("order_status", { order_id: `ORD-0000 ${order} ORD-FFFF` }, { tracking }),
    ];
    expect(episodeOutcome(t, trace(t.id, stuffed, `It is ${tracking}.`)).verified).toBe(1);
    // Calls in the wrong order: the second step cannot come before the first's value.
    const reversed = episodeOutcome(t, trace(t.id, [calls[1]!, calls[0]!], `It is ${tracking}.`));
    expect(reversed.verified).toBe(1);
    expect(reversed.reward).toBeLessThan(1);
  });

  it("never rewards a gamed episode: no call, an empty answer, an error, a constant answer", () => {
    const { t, tracking, calls } = orderChain();
    // No call, even with an answer that names every possible code.
    expect(episodeOutcome(t, trace(t.id, [], `TRK-0000 ${tracking}`))).toMatchObject({
      reward: 0,
      reason: "no call",
    });
    // The right calls and an empty answer.
    expect(episodeOutcome(t, trace(t.id, calls, "   "))).toMatchObject({ reward: 0, reason: "empty answer" });
    expect(episodeOutcome(t, trace(t.id, calls, `It is ${tracking}.`, { error: "engine died" })).reward).toBe(
      0,
    );
    // One answer for every task: 0 for each, even the one it happens to fit.
    const other = task("city-forecast");
    const constant = `Done: ${tracking}.`;
    const outcomes = episodeOutcomes(tasks, [
      trace(t.id, calls, constant),
      trace(other.id, [done("city_of", { person: other.first }, { city: "Oslo" })], constant),
    ]);
    expect(outcomes.map((o) => o.reward)).toEqual([0, 0]);
    expect(outcomes[0]!.reason).toMatch(/constant answer/);
    // The same answer to one task sampled twice is no constant answer.
    const same = episodeOutcomes(tasks, [trace(t.id, calls, constant), trace(t.id, calls, constant)]);
    expect(same.map((o) => o.reward)).toEqual([1, 1]);
  });

  it("fails a denied call tried again, and counts a denied call as made when the user denies it", () => {
    const t = task("denied-cancel");
    const order = episodeCode("ORD", SALT, t.first);
    const find = done("find_order", { customer: t.first }, { order_id: order });
    const denied: EpisodeCall = {
      ...done("cancel_order", { order_id: order }, null),
      state: "denied",
      result: null,
    };
    expect(episodeOutcome(t, trace(t.id, [find, denied], `I did not cancel ${order}.`))).toMatchObject({
      reward: 1,
      done: true,
    });
    const retried = episodeOutcome(t, trace(t.id, [find, denied, denied], `I did not cancel ${order}.`));
    expect(retried).toMatchObject({ reward: 0, deniedRetried: true, reason: "called a denied tool again" });
  });

  it("caps an episode with an invalid call below 1, and judges the final state of memory tasks", () => {
    const { t, tracking, calls } = orderChain();
    const invalid: EpisodeCall = { ...calls[1]!, state: "invalid", arguments: { order: 1 }, result: null };
    const o = episodeOutcome(t, trace(t.id, [invalid, ...calls], `It is ${tracking}.`));
    expect(o).toMatchObject({ done: true, callsValid: false, reward: EPISODE_PARTIAL });
    const m = task("memory-forget");
    const id = "3f1c";
    const memCalls = [
      done("remember", { text: m.first }, { remembered: m.first, id }),
      done("forget", { id }, { forgotten: m.first, id }),
    ];
    expect(episodeOutcome(m, trace(m.id, memCalls, `Forgotten: ${id}.`, { memories: [] })).reward).toBe(1);
    // The memory is still there: not done.
    expect(
      episodeOutcome(m, trace(m.id, memCalls, `Forgotten: ${id}.`, { memories: [m.first] })),
    ).toMatchObject({ done: false, reason: "the final state is wrong" });
  });
});

describe("episode data", () => {
  const episode = (t: EpisodeTrace, k: number): Episode => ({
    ...t,
    k,
    seed: k,
    tools: [{ name: "find_order" }, { name: "order_status" }],
    rounds: t.calls.map((c) => ({
      text: "",
      calls: [{ name: c.tool, arguments: c.arguments, result: c.result }],
    })),
  });

  it("makes SFT lines of done episodes and DPO pairs against failures, in the trainer's layout", () => {
    const { t, tracking, calls } = orderChain();
    const other = task("city-forecast");
    const episodes = [
      episode(trace(t.id, calls, `The tracking code is ${tracking}.`), 0),
      episode(trace(t.id, calls.slice(0, 1), "It shipped."), 1),
      episode(trace(t.id, [], ""), 2),
      // A task never solved: its failure is a negative with nothing to pair with.
      episode(trace(other.id, [done("city_of", { person: other.first }, { city: "Oslo" })], "Oslo."), 0),
    ];
    const outcomes = episodeOutcomes(tasks, episodes);
    const { sft, dpo, groups, stats } = selectEpisodes(tasks, episodes, outcomes);
    expect(stats).toMatchObject({
      tasks: 2,
      episodes: 4,
      done: 1,
      tasksSolved: 1,
      sftLines: 1,
      dpoPairs: 1,
      negativesPaired: 1,
      // The no-call episode (nothing to score) and the unsolved task's failure.
      negativesUnpaired: 2,
      zero: { "no call": 1 },
    });
    // GRPO: the solved task's scorable episodes with their rewards (the no-call one has nothing
    // to score); the other task has one episode, no group.
    expect(stats).toMatchObject({ groups: 1, groupsWithSignal: 1 });
    expect(groups[0]!.rewards).toEqual([1, EPISODE_PARTIAL / 2]);
    expect(parseExampleLine(JSON.stringify(groups[0]), 1)).toMatchObject({
      kind: "grpo",
      rewards: [1, EPISODE_PARTIAL / 2],
      completions: [`The tracking code is ${tracking}.`, "It shipped."],
    });
    expect(sft[0]!.outcome).toMatchObject({ reward: 1, done: true });
    expect(sft[0]!.source).toBe("self-generated-episode");
    expect(dpo[0]!.outcome.rejected.reward).toBe(EPISODE_PARTIAL / 2);
    // The trainer's own parser reads both: the SFT line with two rounds, the pair with calls.
    const parsed = parseExampleLine(JSON.stringify(sft[0]), 1);
    expect(parsed).toMatchObject({ kind: "sft", answer: `The tracking code is ${tracking}.` });
    expect(typeof parsed !== "string" && parsed.kind === "sft" ? parsed.rounds?.length : -1).toBe(2);
    expect(parseExampleLine(JSON.stringify(dpo[0]), 1)).toMatchObject({
      kind: "dpo",
      rejected: "It shipped.",
    });
  });
});

describe("episode gate", () => {
  it("rejects a candidate whose mean episode reward falls more than the margin below live's", () => {
    expect(episodeVerdict({ meanReward: 0 }, { meanReward: 0 }, 0)).toEqual({ passed: true, reason: null });
    expect(episodeVerdict({ meanReward: 0.5 }, { meanReward: 0.46 }, 0.05).passed).toBe(true);
    const r = episodeVerdict({ meanReward: 0.5 }, { meanReward: 0.25 }, 0.05);
    expect(r.passed).toBe(false);
    expect(r.reason).toMatch(/mean reward 0.250 against live 0.500/);
  });
});
