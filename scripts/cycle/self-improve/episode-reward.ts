/**
 * The reward of an agent episode (issue 29 item 2): what the episode achieved, judged from the
 * calls the agent loop recorded (tool, arguments, state, result) and the final answer, never
 * from what the answer claims. Hardened after an outside test (a model earned reward it had not).
 *
 * - A step of the task's chain is **verified** by a call of its tool, after the previous step's
 *   call, that ran (done; or denied, for a tool the task's user denies) with the carried value as
 *   its argument — the prompt's for the first step, the previous step's produced value for the
 *   others; a search query or a memory's text holds it on word boundaries with at most
 *   `EPISODE_EXTRA_WORDS` other words (stuffing verifies nothing); a note's line is checked too —
 *   and, for a step that hands a value on, whose result produced exactly the value the task
 *   expects (known when the task is built: the server's codes are a function of the salt) or, for
 *   a memory's id, a value outside any text the call's own arguments supplied (an echo is never a
 *   value). The matching calls are tried in order: the first that produced the value verifies the
 *   step, so a retry that corrects a failed try gets credit.
 * - **Guessed**: a call of a later step's tool whose argument no earlier result produced (an
 *   invented id, every city tried): the episode is not done, and no step from that call on counts.
 * - **Done**: every step verified, nothing guessed, the final answer holds the final value and no
 *   other value of its shape (listing every candidate is no answer), and the final state is right
 *   (memory tasks: the memory is gone).
 * - **Reward**: done with every call schema-valid: 1 − `EPISODE_EXTRA_CALL` per call outside the
 *   chain (a repeat, a tool not asked for such as cancelling the user's order; failed tries of a
 *   step are not counted), never below `EPISODE_PARTIAL` + `EPISODE_EXTRA_CALL`; otherwise
 *   `EPISODE_PARTIAL` × the share of steps verified, less the same cost per call outside the
 *   chain, never below 0 (partial credit is verifiable progress only; it does not read the
 *   answer). 0 whatever else for an episode that errored, made no call, has an empty final
 *   answer, called a denied tool again, or whose final answer is the same as that of an episode of
 *   a task with another final value (a constant answer; two tasks whose chains end on the same
 *   value may share a correct answer).
 */
import { type EpisodeStep, type EpisodeTask } from "./episode-tasks";

/** One call as the agent loop recorded it (its tool_steps row). */
export interface EpisodeCall {
  tool: string;
  server: string;
  arguments: unknown;
  state: string;
  result: string | null;
  error: string | null;
}

/** What an episode left: its calls in order, the final answer, the final state. */
export interface EpisodeTrace {
  taskId: string;
  calls: EpisodeCall[];
  /** The text after the last call (the whole answer when no call was made). */
  answer: string;
  /** The episode did not run to its end (engine failure). */
  error: string | null;
  /** The memories' texts after the episode. */
  memories?: string[];
}

export interface EpisodeOutcome {
  reward: number;
  done: boolean;
  /** No call failed its schema (state invalid). */
  callsValid: boolean;
  /** A tool was called again after the user denied it. */
  deniedRetried: boolean;
  /** Steps of the chain verified, of `steps`. */
  verified: number;
  steps: number;
  /** Calls outside the chain (repeats, tools not asked for); failed tries of a step excluded. */
  extraCalls: number;
  /** A later step's tool was called with a value no earlier result produced. */
  guessed: boolean;
  reason: string;
}

/** A partial episode's reward is this times the share of its steps verified. */
export const EPISODE_PARTIAL = 0.5;
/** What each call outside the chain costs (enough to rank a clean chain above a padded one). */
export const EPISODE_EXTRA_CALL = 0.05;
/** A `contains` argument may hold the value and at most this many other words. */
export const EPISODE_EXTRA_WORDS = 3;

const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, " ").trim();
const words = (t: string): string[] =>
  t
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/** Whether `text` holds `value` as whole words, with at most EPISODE_EXTRA_WORDS other words. */
function holdsWords(text: string, value: string): boolean {
  const a = words(text);
  const v = words(value);
  if (v.length === 0 || a.length - v.length > EPISODE_EXTRA_WORDS) return false;
  for (let i = 0; i + v.length <= a.length; i++) if (v.every((w, j) => a[i + j] === w)) return true;
  return false;
}

function argOf(call: EpisodeCall, arg: string): string | null {
  const args = call.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  const v = (args as Record<string, unknown>)[arg];
  return typeof v === "string" && v.trim() !== "" ? v : null;
}

/** Whether the call's argument carries `value` (is it, or holds it with `contains`), and its `with`. */
function carries(call: EpisodeCall, step: EpisodeStep, value: string): boolean {
  const v = argOf(call, step.arg);
  if (v === null) return false;
  if (!(step.contains ? holdsWords(v, value) : norm(v) === norm(value))) return false;
  if (!step.with) return true;
  const w = argOf(call, step.with.arg);
  return w !== null && holdsWords(w, step.with.value);
}

/**
 * The values `pattern` finds in the call's result (group 1, else the match), in order, leaving
 * out any that overlaps text the call's own arguments supplied (as given or JSON-escaped): a
 * value the model wrote into its call and the tool echoed back is no value the tool produced.
 */
export function producedValues(pattern: string, call: EpisodeCall): string[] {
  const result = call.result;
  if (!pattern || result === null) return [];
  const echoes: Array<[number, number]> = [];
  const args = call.arguments;
  const strings =
    typeof args === "object" && args !== null
      ? Object.values(args as Record<string, unknown>).filter((v): v is string => typeof v === "string")
      : [];
  for (const s of strings)
    for (const form of new Set([s, JSON.stringify(s).slice(1, -1)])) {
      if (form.trim() === "") continue;
      for (let at = result.indexOf(form); at >= 0; at = result.indexOf(form, at + 1))
        echoes.push([at, at + form.length]);
    }
  const out: string[] = [];
  for (const m of result.matchAll(new RegExp(pattern, "gd"))) {
    const [a, b] = m.indices![1] ?? m.indices![0]!;
    if (echoes.some(([x, y]) => a < y && b > x)) continue;
    out.push(m[1] ?? m[0]);
  }
  return out;
}

/** The value a task's chain must end on, when known at build time (else null: a memory's id). */
export function finalValue(task: EpisodeTask): string | null {
  for (let n = task.steps.length - 1; n >= 0; n--) if (task.steps[n]!.produces) return task.steps[n]!.expect;
  return task.first;
}

/** The outcome of one episode on its own (the constant-answer guard needs the batch: `episodeOutcomes`). */
export function episodeOutcome(task: EpisodeTask, trace: EpisodeTrace): EpisodeOutcome {
  const deny = new Set(task.deny ?? []);
  const calls = trace.calls;
  const callsValid = calls.every((c) => c.state !== "invalid");
  const deniedRetried = calls.some(
    (c, i) => c.state === "denied" && calls.slice(i + 1).some((d) => d.tool === c.tool),
  );
  const ran = (c: EpisodeCall) => c.state === "done" || (c.state === "denied" && deny.has(c.tool));
  // Guessed: a later step's tool called with a value no earlier result produced.
  const firstTools = new Set([task.steps[0]!.tool]);
  let guess = calls.length;
  calls.forEach((c, i) => {
    if (i >= guess || c.state === "invalid" || firstTools.has(c.tool)) return;
    const n = task.steps.findIndex((s, k) => k > 0 && s.tool === c.tool);
    if (n < 0) return;
    const step = task.steps[n]!;
    const prev = task.steps[n - 1]!;
    if (step.contains || !prev.produces) return;
    const v = argOf(c, step.arg);
    const given = calls
      .slice(0, i)
      .filter((d) => d.tool === prev.tool && d.state === "done")
      .flatMap((d) => producedValues(prev.produces, d));
    if (v === null || !given.some((g) => norm(g) === norm(v))) guess = i;
  });
  let carried: string = task.first;
  let from = 0;
  let verified = 0;
  const chain = new Set<number>();
  const tries = new Set<number>();
  for (const step of task.steps) {
    let chosen = -1;
    let value: string | null = null;
    for (let i = from; i < guess; i++) {
      const c = calls[i]!;
      if (c.tool !== step.tool || !carries(c, step, carried)) continue;
      if (ran(c)) {
        if (!step.produces) {
          chosen = i;
          break;
        }
        const v = producedValues(step.produces, c)[0] ?? null;
        if (v !== null && (step.expect === null || norm(v) === norm(step.expect))) {
          chosen = i;
          value = v;
          break;
        }
      }
      // A try at this step whose result did not give the value: not counted as a call outside.
      tries.add(i);
    }
    if (chosen < 0) break;
    verified++;
    chain.add(chosen);
    from = chosen + 1;
    if (value !== null) carried = value;
  }
  // Before a guess (after it nothing counts): invalid calls already cap the reward.
  const extraCalls = calls.filter(
    (c, i) => i < guess && !chain.has(i) && !tries.has(i) && c.state !== "invalid",
  ).length;
  const guessed = guess < calls.length;
  const steps = task.steps.length;
  const stateOk =
    task.memoryAbsent === undefined ||
    (trace.memories !== undefined && !trace.memories.some((m) => norm(m).includes(norm(task.memoryAbsent!))));
  const others = [...trace.answer.matchAll(new RegExp(task.answerShape, "gi"))].filter(
    (m) => norm(m[0]) !== norm(carried),
  );
  const answered = norm(trace.answer).includes(norm(carried)) && others.length === 0;
  const done = verified === steps && !guessed && answered && stateOk;
  const base = { done, callsValid, deniedRetried, verified, steps, extraCalls, guessed };
  const zero = (reason: string): EpisodeOutcome => ({ ...base, reward: 0, done: false, reason });
  if (trace.error !== null) return zero(`error: ${trace.error}`);
  if (calls.length === 0) return zero("no call");
  if (trace.answer.trim() === "") return zero("empty answer");
  if (deniedRetried) return zero("called a denied tool again");
  const cost = EPISODE_EXTRA_CALL * extraCalls;
  if (done && callsValid)
    return {
      ...base,
      reward: Math.max(EPISODE_PARTIAL + EPISODE_EXTRA_CALL, 1 - cost),
      reason: extraCalls > 0 ? `done, with ${extraCalls} calls outside the chain` : "done",
    };
  const why = done
    ? "done, with an invalid call"
    : guessed
      ? `${verified} of ${steps} steps verified; ${calls[guess]!.tool} called with a value no result gave`
      : verified < steps
        ? `${verified} of ${steps} steps verified`
        : !answered
          ? others.length > 0
            ? `the answer holds other values than ${carried}`
            : `the answer lacks ${carried}`
          : "the final state is wrong";
  return { ...base, reward: Math.max(0, (EPISODE_PARTIAL * verified) / steps - cost), reason: why };
}

/**
 * Every episode's outcome, with the constant-answer guard: an episode whose final answer
 * (normalized) is also the final answer of an episode of a task with another final value gets 0
 * (tasks whose chains end on the same value, two people in one city, may share an answer).
 */
export function episodeOutcomes(
  tasks: readonly EpisodeTask[],
  traces: readonly EpisodeTrace[],
): EpisodeOutcome[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const finalOf = (taskId: string): string => {
    const task = byId.get(taskId);
    const v = task ? finalValue(task) : null;
    return v === null ? `task:${taskId}` : norm(v);
  };
  const finalsOfAnswer = new Map<string, Set<string>>();
  for (const t of traces) {
    const key = norm(t.answer);
    if (!key) continue;
    const set = finalsOfAnswer.get(key) ?? new Set<string>();
    set.add(finalOf(t.taskId));
    finalsOfAnswer.set(key, set);
  }
  return traces.map((t) => {
    const task = byId.get(t.taskId);
    if (!task) throw new Error(`episode of unknown task ${t.taskId}`);
    const outcome = episodeOutcome(task, t);
    if (outcome.reward > 0 && (finalsOfAnswer.get(norm(t.answer))?.size ?? 0) > 1)
      return { ...outcome, reward: 0, done: false, reason: "constant answer (the same for another task)" };
    return outcome;
  });
}
