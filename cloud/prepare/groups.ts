/**
 * Users' trajectories as GRPO groups (issue 29 item 2): the `groups` export. Every answer that
 * called tools keeps its outcome's reward (1: every call allowed and answered, not rated bad; 0:
 * a denied, invalid, failed or stopped call, or a bad rating: trajectory.ts), and the answers to
 * one prompt (its key, as the preference export pairs them) are one group line in the layout of
 * cloud/training/group-line.ts, laid out with their calls and results like the episodes' groups
 * (the results stay outside the loss: tokenize-dataset.ts drops a line whose result it cannot
 * mask). Unlike the preference export, a failure needs no successful answer beside it to be
 * trained on:
 * - a group whose rewards differ (a success and a failure to one prompt) is an ordinary GRPO
 *   group: its advantages are relative to its own mean and spread;
 * - a group without that contrast (one answer alone, or answers that all failed or all
 *   succeeded) states a baseline, USER_BASELINE = 0.5, and each answer's advantage is its reward
 *   less the baseline: −0.5 for a failure (its calls and answer made less likely), +0.5 for a
 *   success. Fixed rather than the export's mean reward: with mostly failures the mean is near
 *   0 and would leave failures with next to no advantage (all failures: none at all), and the
 *   mix of what users happened to send is not the model's own success rate (their answers came
 *   from whatever versions they ran). 0.5 is halfway between the two rewards: a verdict alone
 *   moves an answer half as far as a contrasting pair (±1) does.
 * Each line carries every answer's `outcome` and `source: "user-trajectory"` (the trainer reads
 * neither; the cycle's lineage counts lines by source).
 */
import type { FeedbackItem } from "../../common/feedback-protocol";
import { USER_GROUP_SOURCE, type Candidate, type UserGroupLine } from "./example";
import type { Message } from "./normalize";
import {
  trajectoryMessages,
  trajectoryOf,
  trajectoryOutcome,
  trajectoryTools,
  type LineMessage,
  type TrajectoryOutcome,
} from "./trajectory";

/** The reward a group without a contrast of its own is measured against (see above). */
export const USER_BASELINE = 0.5;

/**
 * The group of the answers (items with a trajectory, trajectoryEntry's) to one prompt, given in
 * item order with `prompt`, that prompt's messages (promptMessages of the first). An answer
 * identical to an earlier one of the group, reward included, is left out: it would count twice.
 */
export function userGroup(prompt: Message[], items: readonly FeedbackItem[]): Candidate {
  const seen = new Set<string>();
  const kept: {
    item: FeedbackItem;
    trajectory: NonNullable<ReturnType<typeof trajectoryOf>>;
    messages: LineMessage[];
    outcome: TrajectoryOutcome;
  }[] = [];
  for (const item of items) {
    const trajectory = trajectoryOf(item);
    if (!trajectory) continue;
    const messages = trajectoryMessages(trajectory, item.response ?? "");
    const outcome = trajectoryOutcome(trajectory, item.rating);
    const key = JSON.stringify([messages, outcome.reward]);
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push({ item, trajectory, messages, outcome });
  }
  if (kept.length === 0) return { drop: "malformed" };
  const rewards = kept.map((k) => k.outcome.reward);
  const contrast = Math.max(...rewards) !== Math.min(...rewards);
  const all = kept.map((k) => k.trajectory);
  const line: UserGroupLine = {
    prompt,
    completions: kept.map((k) => k.messages),
    rewards,
    ...(contrast ? {} : { baseline: USER_BASELINE }),
    tools: trajectoryTools({ tools: all.flatMap((t) => t.tools), steps: all.flatMap((t) => t.steps) }),
    outcome: kept.map((k) => k.outcome),
    source: USER_GROUP_SOURCE,
  };
  const failed = rewards.filter((r) => r === 0).length;
  return {
    example: {
      line,
      // Every answer's text leaves in the line: each item needs the text consent.
      items: kept.map((k) => k.item),
      prompt,
      // What the group learns towards: its successful answers (a thumbs-down or a correcting
      // follow-up naming one drops the line, as it drops the SFT line).
      targets: kept
        .filter((k) => k.outcome.reward === 1)
        .map((k) => ({ context: prompt, answer: k.item.response ?? "" })),
      // Failures with no success beside them are trained through the baseline alone.
      negatives: { carried: failed, unpaired: contrast ? 0 : failed },
    },
  };
}

/** Whether a line is a group line (prompt, completions, rewards). */
export function isGroupLine(line: object): line is UserGroupLine {
  return "completions" in line;
}

export { USER_GROUP_SOURCE, type UserGroupLine } from "./example";
