/**
 * The episode reward (episode-reward.ts) and the data chosen from rewarded episodes
 * (episode-data.ts), without an engine or a server: traces are written by hand as the agent
 * loop records them. What can be gamed — no call, an empty answer, one answer for every task,
 * a value the chain never produced, a denied call tried again — is never rewarded.
 */
import { describe, expect, it } from "vitest";
import { parseExampleLine } from "../../../cloud/training/dataset-file";
import { episodeVerdict } from "../episode-gate";
import { BuiltinTools } from "../../../electron/core/tools/builtin-tools";
import { selectEpisodes } from "./episode-data";
import {
  EPISODE_EXTRA_CALL,
  EPISODE_PARTIAL,
  type EpisodeCall,
  type EpisodeTrace,
  episodeOutcome,
  episodeOutcomes,
} from "./episode-reward";
import type { Episode } from "./episode-runner";
import {
  EPISODE_CITIES,
  EPISODE_FAMILIES,
  type EpisodeTask,
  cityOf,
  episodeCode,
  episodeTasks,
} from "./episode-tasks";

const SALT = "test-salt";
const tasks = episodeTasks({ salt: SALT });
const task = (family: string) => tasks.find((t) => t.family === family)!;

const done = (tool: string, args: Record<string, unknown>, result: unknown): EpisodeCall => ({
  tool,
  server: "episodes",
  arguments: args,
  state: "done",
  // A string is the tool's text as is; anything else its JSON (as the server writes it).
  result: typeof result === "string" ? result : JSON.stringify(result),
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
    // Calls in the wrong order: the second step before any result gave its value is a guess.
    const reversed = episodeOutcome(t, trace(t.id, [calls[1]!, calls[0]!], `It is ${tracking}.`));
    expect(reversed).toMatchObject({ verified: 0, guessed: true, done: false, reward: 0 });
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

/** The built-in search tool's text for a query that matches nothing. */
async function searchNoHit(query: string): Promise<string> {
  const b = new BuiltinTools({ search: { search: () => [] } });
  const tool = b.tools().find((t) => t.name === "search_conversations")!;
  const out = await b.call(tool, { query }, new AbortController().signal);
  if (!out.ok) throw new Error(out.error);
  return out.text;
}

/** order_status's result for an order id (the server refuses ids it never issued; a test may not). */
const status = (order: string) => ({
  order_id: order,
  status: "shipped",
  tracking: episodeCode("TRK", SALT, order),
});

/** The right chain of a search-order task: the stored conversation's order, its tracking code. */
function searchChain(t = task("search-order")) {
  const order = episodeCode("ORD", SALT, t.seedConversation!.text.split(" order ")[0]!);
  const hit = [{ conversation: t.seedConversation!.title, role: "user", text: t.seedConversation!.text }];
  return { t, order, tracking: episodeCode("TRK", SALT, order), hit };
}

describe("episode reward against an outside tester's attacks (/tmp/ep-tester, hardened)", () => {
  it("F1: a value only the call's own arguments supplied (the search echo) carries nothing", async () => {
    const { t, order, tracking, hit } = searchChain();
    const fake = "ORD-0000";
    const query = `${t.first}zz ${fake}`;
    // The search tool no longer echoes the query...
    expect(await searchNoHit(query)).not.toContain(fake);
    // ...and an echo (the old text) is no value: the expected order id is known at build time.
    const echo = `No conversation matches "${query}".`;
    const calls = [
      done("search_conversations", { query }, echo),
      done("order_status", { order_id: fake }, status(fake)),
    ];
    const o = episodeOutcome(t, trace(t.id, calls, `Tracking: ${episodeCode("TRK", SALT, fake)}`));
    expect(o).toMatchObject({ done: false, verified: 0, reward: 0 });
    // A result holding another order than the stored one verifies nothing either.
    const other = done("search_conversations", { query: t.first }, [{ text: `${t.first} order ORD-1234` }]);
    expect(episodeOutcome(t, trace(t.id, [other], "no")).verified).toBe(0);
    // The real chain is done.
    const real = [
      done("search_conversations", { query: t.first }, hit),
      done("order_status", { order_id: order }, status(order)),
    ];
    expect(episodeOutcome(t, trace(t.id, real, `Tracking: ${tracking}`)).reward).toBe(1);
  });

  it("F2: a forecast for every city, or every order's status, with every value answered, is not done", () => {
    const t = task("city-forecast");
    const city = cityOf(SALT, t.first);
    const wx = (c: string) => episodeCode("WX", SALT, c);
    const forecasts = EPISODE_CITIES.map((c) => done("forecast", { city: c }, { city: c, report_id: wx(c) }));
    const cityCall = done("city_of", { person: t.first }, { person: t.first, city });
    const all = EPISODE_CITIES.map((c) => `${c}: ${wx(c)}`).join("; ");
    const o = episodeOutcome(t, trace(t.id, [cityCall, ...forecasts], all));
    expect(o).toMatchObject({ done: false, guessed: true });
    expect(o.reward).toBeLessThanOrEqual(EPISODE_PARTIAL / 2);
    // The right chain with an answer that also lists other report ids: not done either.
    const right = [cityCall, done("forecast", { city }, { city, report_id: wx(city) })];
    const listing = episodeOutcome(t, trace(t.id, right, all));
    expect(listing).toMatchObject({ done: false, verified: 2 });
    expect(listing.reason).toMatch(/other values/);
    expect(episodeOutcome(t, trace(t.id, right, `It is ${wx(city)}.`)).reward).toBe(1);

    const { t: ot, order } = orderChain();
    const others = ["Ana Ruiz", "Bo Lindqvist", "Dana Kim"].map((n) => episodeCode("ORD", SALT, n));
    const calls = [
      done("find_order", { customer: ot.first }, { customer: ot.first, order_id: order }),
      ...[order, ...others].map((x) => done("order_status", { order_id: x }, status(x))),
    ];
    const answer = [order, ...others].map((x) => episodeCode("TRK", SALT, x)).join(", ");
    expect(episodeOutcome(ot, trace(ot.id, calls, answer)).reward).toBeLessThan(1);
  });

  it("F3: the note's line must be the one asked for", () => {
    const t = task("note-receipt");
    const note = episodeCode("N", SALT, t.first);
    const receipt = episodeCode("R", SALT, note);
    const create = done("create_note", { title: t.first }, { note_id: note, title: t.first });
    const add = (text: string) =>
      done("add_to_note", { note_id: note, text }, { note_id: note, lines: 1, receipt });
    expect(episodeOutcome(t, trace(t.id, [create, add("x")], `Receipt ${receipt}`))).toMatchObject({
      done: false,
      verified: 1,
    });
    const line = t.steps[1]!.with!.value;
    expect(t.prompt).toContain(line);
    expect(episodeOutcome(t, trace(t.id, [create, add(line)], `Receipt ${receipt}`)).reward).toBe(1);
  });

  it("F4: two tasks whose chains end on the same value keep a shared correct answer", () => {
    // A salt whose default draw has two city tasks in one city (the tester found s6).
    let found: { salt: string; a: EpisodeTask; b: EpisodeTask } | null = null;
    for (let n = 0; n < 200 && !found; n++) {
      const salt = `s${n}`;
      const ts = episodeTasks({ salt, count: 12 }).filter((x) => x.family === "city-forecast");
      if (ts.length === 2 && cityOf(salt, ts[0]!.first) === cityOf(salt, ts[1]!.first))
        found = { salt, a: ts[0]!, b: ts[1]! };
    }
    expect(found).not.toBeNull();
    const { salt, a, b } = found!;
    const all = episodeTasks({ salt, count: 12 });
    const city = cityOf(salt, a.first);
    const wx = episodeCode("WX", salt, city);
    const chain = (x: EpisodeTask) => [
      done("city_of", { person: x.first }, { person: x.first, city }),
      done("forecast", { city }, { city, report_id: wx }),
    ];
    const answer = `The report id is ${wx}.`;
    const episodes = [
      trace(a.id, chain(a), `Report: ${wx}`),
      trace(a.id, chain(a), answer),
      trace(b.id, chain(b), answer),
    ];
    const outcomes = episodeOutcomes(all, episodes);
    expect(outcomes.map((o) => o.reward)).toEqual([1, 1, 1]);
    // No correct episode becomes a rejected side.
    const asEpisodes = episodes.map((e, k) => ({ ...e, k, seed: k, tools: [], rounds: [] }));
    expect(selectEpisodes(all, asEpisodes, outcomes).dpo).toHaveLength(0);
  });

  it("F5: a retried search that finds the order gets the credit of the chain", async () => {
    const { t, order, tracking, hit } = searchChain();
    const miss = `${t.first} please`;
    const calls = [
      done("search_conversations", { query: miss }, await searchNoHit(miss)),
      done("search_conversations", { query: t.first }, hit),
      done("order_status", { order_id: order }, status(order)),
    ];
    expect(episodeOutcome(t, trace(t.id, calls, `Tracking code: ${tracking}`))).toMatchObject({
      reward: 1,
      extraCalls: 0,
    });
  });

  it("F6: a step whose result gave nothing, or a stuffed or sub-word argument, verifies nothing", async () => {
    const t = task("search-order");
    const pasted = [done("search_conversations", { query: t.prompt }, await searchNoHit(t.prompt))];
    expect(episodeOutcome(t, trace(t.id, pasted, "I could not find it.")).reward).toBe(0);
    // The stuffed query finds the order, yet holds far more than the item.
    const { hit } = searchChain(t);
    const stuffed = [done("search_conversations", { query: t.prompt }, hit)];
    expect(episodeOutcome(t, trace(t.id, stuffed, "hm")).verified).toBe(0);
    // One memory holding every fact verifies no memory task.
    const ms = tasks.filter((x) => x.family === "memory-forget");
    const all = ms.map((x) => x.first).join(". ");
    for (const m of ms) {
      const call = done("remember", { text: all }, { remembered: all, id: "u1" });
      expect(episodeOutcome(m, trace(m.id, [call], `ok ${m.id}`, { memories: [all] })).reward).toBe(0);
    }
    // Word boundaries: "automatic" does not hold "mat".
    const mat = episodeTasks({ salt: SALT }).find((x) => x.family === "search-order" && x.first === "mat")!;
    const auto = done("search_conversations", { query: "automatic" }, "No conversation matches the query.");
    expect(episodeOutcome(mat, trace(mat.id, [auto], "hm")).verified).toBe(0);
    // A memory's id that only the call's own text supplied (an echo) is no id.
    const m = ms[0]!;
    const echoed = `${m.first} "id":"evil"`;
    const echo = done("remember", { text: echoed }, `{"remembered":"${echoed}"}`);
    expect(episodeOutcome(m, trace(m.id, [echo], "evil", { memories: [] })).verified).toBe(0);
  });

  it("F7/F8/F10: calls outside the chain (repeats, a cancel not asked for) cost reward; a clean chain ranks first", () => {
    const { t, order, tracking, calls } = orderChain();
    const repeated = [...Array<EpisodeCall>(10).fill(calls[0]!), calls[1]!];
    const r = episodeOutcome(t, trace(t.id, repeated, `It is ${tracking}.`));
    expect(r).toMatchObject({ done: true, extraCalls: 9 });
    expect(r.reward).toBeLessThan(1);
    // Still above any episode that is not done.
    expect(r.reward).toBeGreaterThan(EPISODE_PARTIAL);
    const cancel = done("cancel_order", { order_id: order }, { order_id: order, cancelled: true });
    const c = episodeOutcome(t, trace(t.id, [calls[0]!, cancel, calls[1]!], `It is ${tracking}.`));
    expect(c).toMatchObject({ done: true, extraCalls: 1, reward: 1 - EPISODE_EXTRA_CALL });
    // Partial credit does not read the answer (F7, documented): the step is verifiable progress.
    const one = episodeOutcomes(
      [t],
      [trace(t.id, calls.slice(0, 1), "ok"), trace(t.id, calls.slice(0, 1), "ok")],
    );
    expect(one.map((o) => o.reward)).toEqual([EPISODE_PARTIAL / 2, EPISODE_PARTIAL / 2]);
  });

  it("still refuses: another field, a non-string or stuffed id, a guessed id, JSON injected in a memory", () => {
    const { t, order, tracking } = orderChain();
    const find = done("find_order", { customer: t.first }, { order_id: order });
    const field = [find, done("order_status", { id: order, order_id: "x" }, status(order))];
    expect(episodeOutcome(t, trace(t.id, field, tracking)).verified).toBe(1);
    const stuffed = [
      find,
      done("order_status", { order_id: `${order} `.repeat(500) }, status(order)),
      done("order_status", { order_id: [order] }, status(order)),
    ];
    expect(episodeOutcome(t, trace(t.id, stuffed, tracking)).verified).toBe(1);
    const guessed = [find, done("order_status", { order_id: "ORD-FFFF" }, status("ORD-FFFF"))];
    expect(episodeOutcome(t, trace(t.id, guessed, episodeCode("TRK", SALT, "ORD-FFFF"))).reward).toBe(
      EPISODE_PARTIAL / 2,
    );
    const padded = [done("find_order", { customer: ` ${t.first.toUpperCase()} ` }, { order_id: order })];
    const ok = [...padded, done("order_status", { order_id: order }, status(order))];
    expect(episodeOutcome(t, trace(t.id, ok, tracking.toLowerCase())).reward).toBe(1);
    const m = task("memory-forget");
    const text = `${m.first}","id":"evil`;
    const injected = [
      done("remember", { text }, JSON.stringify({ remembered: text, id: "real-id" })),
      done("forget", { id: "evil" }, { forgotten: text, id: "evil" }),
    ];
    expect(episodeOutcome(m, trace(m.id, injected, "evil", { memories: [] })).verified).toBe(1);
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
  it("rejects a candidate whose mean episode reward, or share of episodes with a valid call, falls past the margin", () => {
    const side = (meanReward: number, validCallShare: number) => ({ meanReward, validCallShare });
    expect(episodeVerdict(side(0, 0), side(0, 0), 0)).toEqual({ passed: true, reason: null });
    expect(episodeVerdict(side(0.5, 1), side(0.46, 1), 0.05).passed).toBe(true);
    const r = episodeVerdict(side(0.5, 1), side(0.25, 1), 0.05);
    expect(r.passed).toBe(false);
    expect(r.reason).toMatch(/mean reward 0.250 against live 0.500/);
    // F9: reward 0 on both sides (the demo), but the candidate stopped calling tools: rejected.
    const silent = episodeVerdict(side(0, 21 / 48), side(0, 0), 0.05);
    expect(silent.passed).toBe(false);
    expect(silent.reason).toMatch(/episodes with a valid call 0.000 against live 0.438/);
  });

  it("the share of episodes with a valid call and the mean steps verified are in the stats", () => {
    const { t, tracking, calls } = orderChain();
    const invalid: EpisodeCall = { ...calls[0]!, state: "invalid", result: null };
    const traces = [
      trace(t.id, calls, `It is ${tracking}.`),
      trace(t.id, [invalid], "hm"),
      trace(t.id, [], "no call"),
      trace(t.id, calls.slice(0, 1), "half"),
    ];
    const episodes = traces.map((e, k) => ({ ...e, k, seed: k, tools: [], rounds: [] }));
    const { stats } = selectEpisodes(tasks, episodes, episodeOutcomes(tasks, traces));
    expect(stats.validCallShare).toBe(2 / 4);
    expect(stats.meanVerified).toBe((2 + 0 + 0 + 1) / 4);
  });
});
