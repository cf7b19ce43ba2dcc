/**
 * Time bounds for the tests that guard against a blow-up (a quadratic parse, a hang of seconds)
 * rather than measure speed: each bound is stated for a quiet machine of the reference kind
 * (2 cores, Node 20, nothing else running) and scales with a calibration workload timed in the
 * same process, in the same run. A machine that runs the workload 2.5× slower (a slower CPU,
 * the other core busy) gets a bound 2.5× larger; a freeze of seconds still fails. Speed itself
 * is measured in bench/, never asserted here.
 */

/** The calibration workload's median time on the reference machine, in ms. */
export const CALIBRATION_REFERENCE_MS = 12;

/**
 * Main-thread work of the kinds these tests guard (string building, regular expressions, object
 * allocation, JSON): the median of five runs, in ms.
 */
export function calibrationMs(): number {
  const runs: number[] = [];
  // One more run than kept: the first also warms the JIT up.
  for (let r = 0; r < 6; r++) {
    const start = performance.now();
    const items = Array.from({ length: 5_000 }, (_, i) => ({ i, text: `item *${i}* [l](u${i})` }));
    const text = items.map((x) => x.text).join("\n");
    const replaced = text.replace(/\*(\w+)\*/g, "<em>$1</em>").replace(/\[(\w)\]\((\w+)\)/g, "$2");
    const back = JSON.parse(JSON.stringify(items)) as unknown[];
    if (replaced.length === 0 || back.length !== items.length) throw new Error("calibration broke");
    if (r > 0) runs.push(performance.now() - start);
  }
  runs.sort((a, b) => a - b);
  return runs[2]!;
}

/** How much slower than the reference this machine is right now (never below 1). */
export function slowdown(): number {
  return Math.max(1, calibrationMs() / CALIBRATION_REFERENCE_MS);
}

/**
 * A bound that scales with the machine: `budgetMs` on the reference machine, times the slowdown
 * measured now. Call it after the timed work too (`Math.max` of both) when the work is long,
 * so a machine that got busy during it is seen.
 */
export function scaledBudget(budgetMs: number): number {
  return Math.round(budgetMs * slowdown());
}

/**
 * The timeout of the whole-loop tests (scripts/cycle/*.loop.test.ts: export, PyTorch training,
 * contract runs on the real engine, promotion): a guard against a hang, not a speed check. A
 * cycle takes 3–6 minutes on a quiet reference machine; with both cores taken by other work
 * (an e2e run beside it) one took over 15. Speed is in bench/.
 */
export const LOOP_HANG_GUARD_MS = 40 * 60_000;
