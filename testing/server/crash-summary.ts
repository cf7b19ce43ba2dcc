/**
 * The line electron/server/crash-safety.test.ts prints after its kills, and its reading by
 * bench/crash-soak.ts (which runs that file at soak size): one format for both.
 */
export interface CrashSummary {
  kills: number;
  seconds: number;
  msPerKill: number;
  startMs: number;
  acknowledged: number;
  unacknowledged: number;
  partialKept: number;
}

export function formatCrashSummary(s: CrashSummary): string {
  return (
    `crash-safety: ${s.kills} kills in ${s.seconds.toFixed(1)} s ` +
    `(${s.msPerKill.toFixed(0)} ms each, of which start-up ${s.startMs.toFixed(0)} ms); ` +
    `${s.acknowledged} acknowledged, ` +
    `${s.unacknowledged} killed before the answer, ${s.partialKept} partial answers kept`
  );
}

const SUMMARY =
  /crash-safety: (\d+) kills in ([\d.]+) s \((\d+) ms each, of which start-up (\d+) ms\); (\d+) acknowledged, (\d+) killed before the answer, (\d+) partial answers kept/;

/** The summary in a run's output; null when the line is missing (the test failed before it). */
export function parseCrashSummary(output: string): CrashSummary | null {
  const m = SUMMARY.exec(output);
  if (!m) return null;
  const [kills, seconds, msPerKill, startMs, acknowledged, unacknowledged, partialKept] = m
    .slice(1)
    .map(Number) as [number, number, number, number, number, number, number];
  return { kills, seconds, msPerKill, startMs, acknowledged, unacknowledged, partialKept };
}
