/**
 * Training data from agent episodes (episode-runner.ts, rewarded by episode-reward.ts), in the
 * trainer's chat + tool_calls layout (cloud/training/dataset-file.ts): the prompt, then per
 * round an assistant message with its text and `tool_calls` and one `tool` message per call
 * (the result as the model was given it), then the final answer; `tools` is what the loop
 * offered. Every line carries its `outcome` (reward, done, calls valid, no denied call retried)
 * and `source: "self-generated-episode"`; the trainer reads neither.
 *
 * Per task: the best episode with reward 1 (done, every call valid, no call outside the chain: a
 * done episode padded with repeats or calls not asked for scores below 1 and is never a target,
 * at most a rejected side beside a clean one) is an SFT line; with a
 * failing episode beside it (reward < 1, with a call or text: a side the trainer can score), the
 * pair (best, worst) is a DPO pair, the failure as the rejected side. Failing episodes without a
 * passing one to pair with are counted as negatives in the report, never a target. For GRPO,
 * every task's scorable episodes with their rewards are one group (when the rewards differ): the
 * reward itself is what the policy gradient learns from, failures with partial credit included.
 */
import type { ToolDefinition } from "../../../electron/core/engine/types";
import type { EpisodeOutcome } from "./episode-reward";
import type { Episode } from "./episode-runner";
import type { EpisodeTask } from "./episode-tasks";

export const EPISODE_SOURCE = "self-generated-episode";

type Msg =
  | { role: "user" | "assistant"; content: string }
  | {
      role: "assistant";
      content: string;
      tool_calls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
    }
  | { role: "tool"; tool_call_id: string; content: string };

type Tools = Array<{ type: "function"; function: ToolDefinition }>;

export interface EpisodeLineOutcome {
  reward: number;
  done: boolean;
  callsValid: boolean;
  deniedRetried: boolean;
  reason: string;
}

export interface EpisodeSftLine {
  messages: Msg[];
  tools: Tools;
  source: typeof EPISODE_SOURCE;
  outcome: EpisodeLineOutcome;
}
export interface EpisodePairLine {
  prompt: Array<{ role: "user"; content: string }>;
  chosen: Msg[];
  rejected: Msg[];
  tools: Tools;
  source: typeof EPISODE_SOURCE;
  outcome: { chosen: EpisodeLineOutcome; rejected: EpisodeLineOutcome };
}

export interface EpisodeGroupLine {
  prompt: Array<{ role: "user"; content: string }>;
  completions: Msg[][];
  rewards: number[];
  tools: Tools;
  source: typeof EPISODE_SOURCE;
  outcomes: EpisodeLineOutcome[];
}

export interface EpisodeStats {
  tasks: number;
  episodes: number;
  /** Episodes with reward 1. */
  done: number;
  /** done / episodes. */
  doneShare: number;
  /** Tasks with at least one episode of reward 1 (= SFT lines). */
  tasksSolved: number;
  meanReward: number;
  /**
   * Share of episodes with at least one schema-valid call (any state but invalid): non-zero even
   * where no step is verified, so the gate sees a candidate that stopped calling tools.
   */
  validCallShare: number;
  /** Mean steps verified per episode. */
  meanVerified: number;
  /** Episodes with reward 0 and why (no call, empty answer, constant answer, denied retried…). */
  zero: Record<string, number>;
  /** Episodes with a call that failed its schema. */
  invalidCalls: number;
  deniedRetried: number;
  sftLines: number;
  dpoPairs: number;
  /** Failing episodes (reward < 1) that are a DPO pair's rejected side. */
  negativesPaired: number;
  /** Failing episodes with no passing one of their task to pair with: counted, not trained on by SFT/DPO. */
  negativesUnpaired: number;
  /** GRPO: tasks with 2+ scorable episodes, and those whose rewards differ (the groups written). */
  groups: number;
  groupsWithSignal: number;
}

const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v ?? ""));

/** An episode's answer messages: its rounds with their calls and results, then the final text. */
export function episodeMessages(e: Episode): Msg[] {
  const out: Msg[] = [];
  let n = 0;
  for (const round of e.rounds) {
    if (round.calls.length === 0) continue;
    const ids = round.calls.map(() => `call_${n++}`);
    out.push({
      role: "assistant",
      content: round.text,
      tool_calls: round.calls.map((c, i) => ({
        id: ids[i]!,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
      })),
    });
    round.calls.forEach((c, i) => out.push({ role: "tool", tool_call_id: ids[i]!, content: text(c.result) }));
  }
  out.push({ role: "assistant", content: e.answer });
  return out;
}

const toolsOf = (e: Episode): Tools => e.tools.map((f) => ({ type: "function", function: f }));

const lineOutcome = (o: EpisodeOutcome): EpisodeLineOutcome => ({
  reward: o.reward,
  done: o.done,
  callsValid: o.callsValid,
  deniedRetried: o.deniedRetried,
  reason: o.reason,
});

/** Whether the trainer can score this episode as a side: a call, or a final text. */
const scorable = (e: Episode): boolean =>
  e.error === null && (e.rounds.some((r) => r.calls.length > 0) || e.answer.trim() !== "");

export function selectEpisodes(
  tasks: readonly EpisodeTask[],
  episodes: readonly Episode[],
  outcomes: readonly EpisodeOutcome[],
): { sft: EpisodeSftLine[]; dpo: EpisodePairLine[]; groups: EpisodeGroupLine[]; stats: EpisodeStats } {
  const stats: EpisodeStats = {
    tasks: 0,
    episodes: episodes.length,
    done: 0,
    doneShare: 0,
    tasksSolved: 0,
    meanReward: 0,
    validCallShare: 0,
    meanVerified: 0,
    zero: {},
    invalidCalls: 0,
    deniedRetried: 0,
    sftLines: 0,
    dpoPairs: 0,
    negativesPaired: 0,
    negativesUnpaired: 0,
    groups: 0,
    groupsWithSignal: 0,
  };
  const groups: EpisodeGroupLine[] = [];
  const sft: EpisodeSftLine[] = [];
  const dpo: EpisodePairLine[] = [];
  const byTask = new Map<string, Array<{ e: Episode; o: EpisodeOutcome }>>();
  episodes.forEach((e, i) => {
    const o = outcomes[i]!;
    byTask.set(e.taskId, [...(byTask.get(e.taskId) ?? []), { e, o }]);
    stats.meanReward += o.reward;
    stats.meanVerified += o.verified;
    if (e.calls.some((c) => c.state !== "invalid")) stats.validCallShare++;
    if (o.reward === 1) stats.done++;
    if (o.reward === 0) {
      const why = o.reason.replace(/:.*$/, "").replace(/ \(.*\)$/, "");
      stats.zero[why] = (stats.zero[why] ?? 0) + 1;
    }
    if (!o.callsValid) stats.invalidCalls++;
    if (o.deniedRetried) stats.deniedRetried++;
  });
  stats.meanReward = episodes.length ? stats.meanReward / episodes.length : 0;
  stats.meanVerified = episodes.length ? stats.meanVerified / episodes.length : 0;
  stats.validCallShare = episodes.length ? stats.validCallShare / episodes.length : 0;
  stats.doneShare = episodes.length ? stats.done / episodes.length : 0;
  for (const task of tasks) {
    const list = byTask.get(task.id);
    if (!list) continue;
    stats.tasks++;
    const prompt = [{ role: "user" as const, content: task.prompt }];
    const scored = list.filter((x) => scorable(x.e));
    if (scored.length >= 2) {
      stats.groups++;
      const rewards = scored.map((x) => x.o.reward);
      if (Math.max(...rewards) !== Math.min(...rewards)) {
        stats.groupsWithSignal++;
        groups.push({
          prompt,
          completions: scored.map((x) => episodeMessages(x.e)),
          rewards,
          tools: toolsOf(scored[0]!.e),
          source: EPISODE_SOURCE,
          outcomes: scored.map((x) => lineOutcome(x.o)),
        });
      }
    }
    const passing = list.filter((x) => x.o.reward === 1);
    const failing = list.filter((x) => x.o.reward < 1);
    if (passing.length === 0) {
      stats.negativesUnpaired += failing.length;
      continue;
    }
    stats.tasksSolved++;
    // The passing episode with the fewest calls (then the first): the shortest way to done.
    const best = [...passing].sort((a, b) => a.e.calls.length - b.e.calls.length || a.e.k - b.e.k)[0]!;
    const chosen = episodeMessages(best.e);
    sft.push({
      messages: [...prompt, ...chosen],
      tools: toolsOf(best.e),
      source: EPISODE_SOURCE,
      outcome: lineOutcome(best.o),
    });
    stats.sftLines++;
    const rejectable = failing.filter((x) => scorable(x.e));
    stats.negativesUnpaired += failing.length - rejectable.length;
    if (rejectable.length === 0) continue;
    const worst = [...rejectable].sort((a, b) => a.o.reward - b.o.reward || a.e.k - b.e.k)[0]!;
    const rejected = episodeMessages(worst.e);
    stats.negativesUnpaired += rejectable.length - 1;
    if (JSON.stringify(rejected) === JSON.stringify(chosen)) continue;
    dpo.push({
      prompt,
      chosen,
      rejected,
      tools: toolsOf(best.e),
      source: EPISODE_SOURCE,
      outcome: { chosen: lineOutcome(best.o), rejected: lineOutcome(worst.o) },
    });
    stats.dpoPairs++;
    stats.negativesPaired++;
  }
  return { sft, dpo, groups, stats };
}
