/**
 * GRPO groups from the scored samples of a self-improvement cycle (issue 29): per prompt, every
 * sampled answer with text and its reward, the line cloud/training/group-line.ts reads, which
 * `--method grpo` trains on (the trainer's group-relative advantages, cloud/trainer/README.md).
 *
 * The reward is the contract's judgement of the answer (score.ts): 1 when every check passed;
 * otherwise half the share of its checks that passed (a near miss is better than a miss, and no
 * failing answer reaches a passing one); 0 for what the guards fail — an empty answer, one that
 * errored, one that is the same as an answer to a different prompt ("distinct") — so an answer
 * that games a check is never rewarded. Answers without text are left out of the group (the
 * trainer needs tokens to score); a prompt with fewer than 2 answers left has no group. A group
 * whose rewards are all equal carries no signal (its advantages are all 0): counted, not written.
 */
import type { Contract } from "../../../electron/core/contract/contract-schema";
import type { ScoredSample } from "./score";

/** A group line as group-line.ts reads it. */
export interface GroupLine {
  prompt: Array<{ role: "user" | "assistant"; content: string }>;
  completions: Array<Array<{ role: "assistant"; content: string }>>;
  rewards: number[];
}

export interface GroupStats {
  /** Prompts with at least 2 answers with text. */
  groups: number;
  /** Groups whose rewards differ (written): the share the policy gradient learns from. */
  withSignal: number;
  /** withSignal / groups (0 without groups). */
  signalShare: number;
  /** Mean reward over the answers of every group. */
  meanReward: number;
}

/** A partial answer's reward is this times the share of its checks that passed. */
export const PARTIAL_CREDIT = 0.5;

/** The reward of one judged answer (see the module comment). */
export function rewardOf(s: ScoredSample): number {
  if (s.pass) return 1;
  if (s.error !== null || s.output.trim() === "" || s.reason.startsWith("distinct")) return 0;
  return PARTIAL_CREDIT * s.score;
}

/** The groups with signal of `scored` (in the contract's case order) and per-tag counts. */
export function selectGroups(
  contract: Contract,
  scored: readonly ScoredSample[],
): { groups: GroupLine[]; stats: Record<string, GroupStats> } {
  const byCase = new Map<string, ScoredSample[]>();
  for (const s of scored) byCase.set(s.caseId, [...(byCase.get(s.caseId) ?? []), s]);
  const groups: GroupLine[] = [];
  const stats: Record<string, GroupStats> = {};
  const rewardSums: Record<string, { sum: number; n: number }> = {};
  for (const c of contract.cases) {
    const answers = (byCase.get(c.id) ?? []).filter((s) => s.error === null && s.output.trim() !== "");
    if (answers.length < 2) continue;
    const tag = c.tags[0] ?? "untagged";
    const st = (stats[tag] ??= { groups: 0, withSignal: 0, signalShare: 0, meanReward: 0 });
    const sums = (rewardSums[tag] ??= { sum: 0, n: 0 });
    const rewards = answers.map(rewardOf);
    st.groups++;
    sums.sum += rewards.reduce((a, b) => a + b, 0);
    sums.n += rewards.length;
    if (Math.max(...rewards) === Math.min(...rewards)) continue;
    st.withSignal++;
    groups.push({
      prompt: c.conversation
        .filter((m) => m.role !== "system")
        .map((m) => ({ role: m.role as "user" | "assistant", content: m.content })),
      completions: answers.map((s) => [{ role: "assistant", content: s.output }]),
      rewards,
    });
  }
  for (const [tag, st] of Object.entries(stats)) {
    st.signalShare = st.groups ? st.withSignal / st.groups : 0;
    st.meanReward = rewardSums[tag]!.n ? rewardSums[tag]!.sum / rewardSums[tag]!.n : 0;
  }
  return { groups, stats };
}

/**
 * The cycle's "self-generated: …" line: what was trained on. GRPO trains on the groups whose
 * rewards differ (neither SFT lines nor DPO pairs); sft, dpo and sft+dpo on the selection.
 */
export function selfGeneratedSummary(
  method: string,
  s: {
    sftLines: number;
    dpoPairs: number;
    groups: Readonly<Record<string, GroupStats>>;
    samples: number;
    temperature: number;
  },
): string {
  const sampling = `(K=${s.samples}, T=${s.temperature})`;
  if (method !== "grpo")
    return `self-generated: ${s.sftLines} SFT lines, ${s.dpoPairs} DPO pairs ${sampling}`;
  const all = Object.values(s.groups);
  const withSignal = all.reduce((n, g) => n + g.withSignal, 0);
  const groups = all.reduce((n, g) => n + g.groups, 0);
  return `self-generated: ${withSignal} GRPO groups with rewards that differ, of ${groups} ${sampling}`;
}
