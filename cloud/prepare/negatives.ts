/**
 * Users' trajectories kept with their outcome (issue 29 item 2): the export's report counts every
 * answer that called tools by outcome (reward 1: every call allowed and answered, not rated bad;
 * reward 0: a denied, invalid, failed or stopped call, or a bad rating), and of the failed ones
 * how many had an allowed answer to the same prompt (the preference export's rejected sides,
 * before the filters) and how many had none: negatives with nothing to pair with, which no
 * trainer here can learn from alone (the SFT export never pairs: there every failed one is
 * unpaired). Shared by the in-memory and the streaming export, so both count alike.
 */
import type { FeedbackItem } from "../../common/feedback-protocol";
import { trajectoryEntry } from "./candidates";
import type { ExportReport } from "./report";
import type { TrajectoryNegative } from "./trajectory";

export type TrajectoryCounts = NonNullable<ExportReport["trajectories"]>;

export function emptyTrajectoryCounts(): TrajectoryCounts {
  return { items: 0, succeeded: 0, failed: 0, byProblem: {}, negativesInPairs: 0, negativesUnpaired: 0 };
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
 * pairs (preference export); the rest are unpaired.
 */
export function countPairing(
  counts: TrajectoryCounts,
  seen: ReadonlyArray<{ key: string; failed: boolean }>,
  pairs: boolean,
): void {
  const good = new Set(seen.filter((s) => !s.failed).map((s) => s.key));
  for (const s of seen) {
    if (!s.failed) continue;
    if (pairs && good.has(s.key)) counts.negativesInPairs++;
    else counts.negativesUnpaired++;
  }
}
