/**
 * Users' trajectories kept with their outcome (issue 29 item 2): the export's report counts every
 * answer that called tools by outcome (reward 1: every call allowed and answered, not rated bad;
 * reward 0: a denied, invalid, failed or stopped call, or a bad rating), and of the failed ones
 * how many had an allowed answer to the same prompt (the preference export's rejected sides,
 * before the filters) and how many had none: negatives with nothing to pair with, which DPO
 * cannot learn from (the SFT export never pairs: there every failed one is unpaired). The groups
 * export (groups.ts) puts every failed one in its prompt's GRPO group, the unpaired ones against
 * a baseline, so they are trained too. `negativesTrained` counts what the train split's lines
 * carry after every filter: what was actually learned from, not what could have been. Shared by
 * the in-memory and the streaming export, so both count alike.
 */
import type { FeedbackItem } from "../../common/feedback-protocol";
import { trajectoryEntry, type ExportType } from "./candidates";
import type { ExportReport } from "./report";
import type { TrajectoryNegative } from "./trajectory";

export type TrajectoryCounts = NonNullable<ExportReport["trajectories"]>;

export function emptyTrajectoryCounts(): TrajectoryCounts {
  return {
    items: 0,
    succeeded: 0,
    failed: 0,
    byProblem: {},
    negativesInPairs: 0,
    negativesInGroups: 0,
    negativesUnpaired: 0,
    negativesTrained: { inPairs: 0, inGroups: 0, unpaired: 0 },
  };
}

/** Counts `item` when it is an answer that called tools; returns its prompt key and whether it failed. */
export function countTrajectory(
  counts: TrajectoryCounts,
  item: FeedbackItem,
): { key: string; failed: boolean } | null {
  const entry = trajectoryEntry(item);
  if (!entry) return null;
  counts.items++;
  const problem: TrajectoryNegative | null = entry.outcome.problem;
  if (problem === null) counts.succeeded++;
  else {
    counts.failed++;
    counts.byProblem[problem] = (counts.byProblem[problem] ?? 0) + 1;
  }
  return { key: entry.key, failed: problem !== null };
}

/**
 * The in-memory export's pairing counts: failed ones whose prompt has a succeeded one are in
 * pairs (preference export); the rest are unpaired (every one in the SFT export). The groups
 * export has every failed one in a group.
 */
export function countPairing(
  counts: TrajectoryCounts,
  seen: ReadonlyArray<{ key: string; failed: boolean }>,
  type: ExportType,
): void {
  const good = new Set(seen.filter((s) => !s.failed).map((s) => s.key));
  for (const s of seen) {
    if (!s.failed) continue;
    if (type === "groups") counts.negativesInGroups = (counts.negativesInGroups ?? 0) + 1;
    if (type !== "sft" && good.has(s.key)) {
      if (type === "preference") counts.negativesInPairs++;
    } else counts.negativesUnpaired++;
  }
}

/** Adds what one line written to the train split trains on (Example.negatives) to the counts. */
export function countTrained(
  counts: TrajectoryCounts,
  type: ExportType,
  negatives: { carried: number; unpaired: number } | undefined,
): void {
  if (!negatives || type === "sft") return;
  const trained = (counts.negativesTrained ??= { inPairs: 0, inGroups: 0, unpaired: 0 });
  if (type === "preference") trained.inPairs += negatives.carried;
  else trained.inGroups += negatives.carried;
  trained.unpaired += negatives.unpaired;
}
