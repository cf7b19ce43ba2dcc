/**
 * The reward of an agent episode (issue 29 item 2): what the episode achieved, judged from the
 * calls the agent loop recorded (tool, arguments, state, result) and the final answer, never
 * from what the answer claims.
 *
 * - A step of the task's chain is **verified** when, after the previous verified call, a call of
 *   its tool ran (done; or denied, for a tool the task's user denies) with the value as its
 *   argument (or in it, for a search query or a memory's text): the prompt's for the first step, the value the previous verified call's result
 *   handed on for the others (episode-tasks.ts `produces`). A value no earlier result gave cannot
 *   verify a step: the codes are opaque.
 * - **Done**: every step verified, the final answer holds the last value the chain produced, and
 *   the final state is right (memory tasks: the memory is gone).
 * - **Reward**: 1 when done with every call schema-valid; otherwise `EPISODE_PARTIAL` × the share
 *   of steps verified (verifiable progress only). 0 whatever else for an episode that errored,
 *   made no call, has an empty final answer, called a denied tool again, or whose final answer is
 *   the same as an episode of a different task (a constant answer): what can be gamed is never
 *   rewarded.
 */
import { type EpisodeTask, producedValue } from "./episode-tasks";

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
  reason: string;
}

/** A partial episode's reward is this times the share of its steps verified. */
export const EPISODE_PARTIAL = 0.5;

const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, " ").trim();

/** Whether the call's argument `arg` is `value` (or holds it, with `contains`), case-insensitive. */
function carries(call: EpisodeCall, arg: string, value: string, contains = false): boolean {
  const args = call.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) return false;
  const v = (args as Record<string, unknown>)[arg];
  if (typeof v !== "string" || v.trim() === "") return false;
  return contains ? norm(v).includes(norm(value)) : norm(v) === norm(value);
}

/** The outcome of one episode on its own (the constant-answer guard needs the batch: `episodeOutcomes`). */
export function episodeOutcome(task: EpisodeTask, trace: EpisodeTrace): EpisodeOutcome {
  const deny = new Set(task.deny ?? []);
  const callsValid = trace.calls.every((c) => c.state !== "invalid");
  const deniedRetried = trace.calls.some(
    (c, i) => c.state === "denied" && trace.calls.slice(i + 1).some((d) => d.tool === c.tool),
  );
  let carried: string = task.first;
  let from = 0;
  let verified = 0;
  for (const [n, step] of task.steps.entries()) {
    const j = trace.calls.findIndex(
      (c, i) =>
        i >= from &&
        c.tool === step.tool &&
        (c.state === "done" || (c.state === "denied" && deny.has(c.tool))) &&
        carries(c, step.arg, carried, step.contains),
    );
    if (j < 0) break;
    verified++;
    from = j + 1;
    if (!step.produces) continue;
    const value = producedValue(step.produces, trace.calls[j]!.result);
    if (value === null) break;
    carried = value;
    // The last step's value is what the answer must hold.
    if (n === task.steps.length - 1) break;
  }
  const steps = task.steps.length;
  const stateOk =
    task.memoryAbsent === undefined ||
    (trace.memories !== undefined && !trace.memories.some((m) => norm(m).includes(norm(task.memoryAbsent!))));
  const answered = norm(trace.answer).includes(norm(carried));
  const done = verified === steps && answered && stateOk;
  const zero = (reason: string): EpisodeOutcome => ({
    reward: 0,
    done: false,
    callsValid,
    deniedRetried,
    verified,
    steps,
    reason,
  });
  if (trace.error !== null) return zero(`error: ${trace.error}`);
  if (trace.calls.length === 0) return zero("no call");
  if (trace.answer.trim() === "") return zero("empty answer");
  if (deniedRetried) return zero("called a denied tool again");
  if (done && callsValid)
    return { reward: 1, done, callsValid, deniedRetried, verified, steps, reason: "done" };
  const why = done
    ? "done, with an invalid call"
    : verified < steps
      ? `${verified} of ${steps} steps verified`
      : !answered
        ? `the answer lacks ${carried}`
        : "the final state is wrong";
  return {
    reward: (EPISODE_PARTIAL * verified) / steps,
    done,
    callsValid,
    deniedRetried,
    verified,
    steps,
    reason: why,
  };
}

/**
 * Every episode's outcome, with the constant-answer guard: an episode whose final answer
 * (normalized) is also the final answer of an episode of a different task gets 0.
 */
export function episodeOutcomes(
  tasks: readonly EpisodeTask[],
  traces: readonly EpisodeTrace[],
): EpisodeOutcome[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const tasksOfAnswer = new Map<string, Set<string>>();
  for (const t of traces) {
    const key = norm(t.answer);
    if (!key) continue;
    const set = tasksOfAnswer.get(key) ?? new Set<string>();
    set.add(t.taskId);
    tasksOfAnswer.set(key, set);
  }
  return traces.map((t) => {
    const task = byId.get(t.taskId);
    if (!task) throw new Error(`episode of unknown task ${t.taskId}`);
    const outcome = episodeOutcome(task, t);
    if (outcome.reward > 0 && (tasksOfAnswer.get(norm(t.answer))?.size ?? 0) > 1)
      return { ...outcome, reward: 0, done: false, reason: "constant answer (the same for another task)" };
    return outcome;
  });
}
