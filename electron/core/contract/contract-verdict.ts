/**
 * A contract run's report and verdict: pass rates per tag against the thresholds, the paired
 * comparison with the live version (same cases run on both), and the reasons of a rejection.
 * Pure: the runner (contract-runner.ts) hands it the judged cases.
 */
import type { GenerateResult } from "../engine/types";
import type { AssertionResult } from "./assertions";
import type { Contract } from "./contract-schema";

/** The live version's result on a case (the same case the candidate answered). */
export interface LiveCase {
  /** Every assertion (regression excluded) passed on the live version. */
  passed: boolean;
  score: number;
  output: string;
  adapters: string[];
  error: string | null;
  /** Both resolved the case to the same adapter files: the candidate's answer was reused. */
  shared: boolean;
  /** Why it passed or failed: "passed", or the first failed check ("unitTests: failed: …"). */
  reason?: string;
}

/** Live → candidate on one case: "fixed" failed live and passes now, "broken" the reverse. */
export type CaseChange = "same" | "fixed" | "broken";

export interface CaseReport {
  id: string;
  description: string;
  tags: string[];
  mode: string;
  passed: boolean;
  /** Why it passed or failed: "passed", or the first failed check ("mentions: …"). Absent in old reports. */
  reason?: string;
  /** Share of the case's assertions that passed (regression excluded). */
  score: number;
  assertions: AssertionResult[];
  output: string;
  /** Adapters that answered ("id@version"), first = first choice. */
  adapters: string[];
  latencyMs: number;
  /** How the generation ended; null when the case did not run. */
  stopReason: GenerateResult["stopReason"] | null;
  /** Set when the case could not run at all (e.g. the pinned adapter is not installed). */
  error: string | null;
  /** The live version on the same case, when it ran there (paired comparison, regression). */
  live: LiveCase | null;
  change: CaseChange | null;
}

export interface TagReport {
  passed: number;
  total: number;
  passRate: number;
  threshold: number;
  ok: boolean;
}

/** Live and candidate pass rates over the same cases. */
export interface PairedRate {
  cases: number;
  livePassed: number;
  candidatePassed: number;
  liveRate: number;
  candidateRate: number;
  /** candidateRate − liveRate. */
  delta: number;
  /** The candidate is not worse than live by more than the margin. */
  ok: boolean;
  /** Cases that pass live and fail on the candidate, and the reverse. */
  broken: string[];
  fixed: string[];
}

export interface ComparisonReport {
  /** thresholds.maxRegression: how far below live a pass rate may fall. */
  maxRegression: number;
  overall: PairedRate;
  byTag: Record<string, PairedRate>;
  ok: boolean;
}

export interface ContractReport {
  contract: string;
  version: string;
  startedAt: number;
  durationMs: number;
  /** The verdict: thresholds met, no regression beyond the margin, no per-case regression. */
  passed: boolean;
  passRate: number;
  threshold: number;
  /** Ids of the cases that failed on the target, in contract order. */
  failing: string[];
  byTag: Record<string, TagReport>;
  cases: CaseReport[];
  /** The version under evaluation, when a candidate replaced a live adapter. */
  candidate: { adapterId: string; version: string } | null;
  /** The paired comparison with the live version; null when none was made. */
  comparison: ComparisonReport | null;
  /** Why the verdict is a rejection, one sentence each; empty when it passed. */
  reasons: string[];
}

const EPSILON = 1e-9;
const pct = (x: number): string => `${Math.round(x * 100)}%`;
const points = (x: number): string => `${x >= 0 ? "+" : "−"}${Math.round(Math.abs(x) * 100)} points`;

/** The candidate passed every assertion but `regression` (what the live result is compared to). */
function taskPassed(c: CaseReport): boolean {
  return c.change === "fixed" || (c.change === "same" && c.live?.passed === true);
}

function pairedRate(list: CaseReport[], margin: number): PairedRate {
  const livePassed = list.filter((c) => c.live?.passed).length;
  const candidatePassed = list.filter(taskPassed).length;
  const rate = (n: number): number => (list.length === 0 ? 1 : n / list.length);
  const liveRate = rate(livePassed);
  const candidateRate = rate(candidatePassed);
  return {
    cases: list.length,
    livePassed,
    candidatePassed,
    liveRate,
    candidateRate,
    delta: candidateRate - liveRate,
    ok: candidateRate >= liveRate - margin - EPSILON,
    broken: list.filter((c) => c.change === "broken").map((c) => c.id),
    fixed: list.filter((c) => c.change === "fixed").map((c) => c.id),
  };
}

function compare(cases: CaseReport[], tags: string[], margin: number): ComparisonReport {
  const pairedCases = cases.filter((c) => c.live !== null);
  const byTag: Record<string, PairedRate> = {};
  for (const tag of tags)
    byTag[tag] = pairedRate(
      pairedCases.filter((c) => c.tags.includes(tag)),
      margin,
    );
  const overall = pairedRate(pairedCases, margin);
  return {
    maxRegression: margin,
    overall,
    byTag,
    ok: overall.ok && Object.values(byTag).every((t) => t.ok),
  };
}

function regressionReason(what: string, r: PairedRate, margin: number): string {
  const failingNow = r.broken.length > 0 ? `; failing now: ${r.broken.join(", ")}` : "";
  return (
    `${what} regressed: ${pct(r.candidateRate)} of ${r.cases} paired cases pass, live ${pct(r.liveRate)} ` +
    `(${points(r.delta)}, at most ${Math.round(margin * 100)} points below live allowed)${failingNow}`
  );
}

/** The report of a run: per-tag and overall pass rates, the comparison, the verdict's reasons. */
export function summarize(
  contract: Contract,
  cases: CaseReport[],
  run: {
    startedAt: number;
    durationMs: number;
    candidate: ContractReport["candidate"];
    /** Every case ran on the live version too (contracts with thresholds.maxRegression). */
    paired: boolean;
  },
): ContractReport {
  const rate = (list: CaseReport[]): number =>
    list.length === 0 ? 1 : list.filter((c) => c.passed).length / list.length;
  const tags = [...new Set(cases.flatMap((c) => c.tags))].sort();
  const reasons: string[] = [];
  const passRate = rate(cases);
  const threshold = contract.thresholds.minPassRate;
  if (passRate < threshold - EPSILON)
    reasons.push(`overall: ${pct(passRate)} of ${cases.length} cases pass, needs ${pct(threshold)}`);
  const byTag: Record<string, TagReport> = {};
  for (const tag of tags) {
    const tagged = cases.filter((c) => c.tags.includes(tag));
    const tagThreshold = contract.thresholds.byTag[tag] ?? threshold;
    const tagRate = rate(tagged);
    const ok = tagRate >= tagThreshold - EPSILON;
    byTag[tag] = {
      passed: tagged.filter((c) => c.passed).length,
      total: tagged.length,
      passRate: tagRate,
      threshold: tagThreshold,
      ok,
    };
    if (!ok)
      reasons.push(`tag ${tag}: ${pct(tagRate)} of ${tagged.length} cases pass, needs ${pct(tagThreshold)}`);
  }
  const maxDegenerate = contract.thresholds.maxDegenerate;
  if (contract.distinctAnswers && maxDegenerate !== undefined) {
    for (const tag of tags) {
      const judged = cases.filter(
        (c) => c.tags.includes(tag) && c.assertions.some((a) => a.type === "distinct"),
      );
      const degenerate = judged.filter((c) => c.assertions.some((a) => a.type === "distinct" && !a.passed));
      if (judged.length > 0 && degenerate.length / judged.length > maxDegenerate + EPSILON)
        reasons.push(
          `tag ${tag}: ${degenerate.length} of ${judged.length} answers are the same, or nearly, as the answer to ` +
            `a different question (degenerate), at most ${pct(maxDegenerate)} allowed`,
        );
    }
  }
  const regressed = cases
    .filter((c) => c.assertions.some((a) => a.type === "regression" && !a.passed))
    .map((c) => c.id);
  if (regressed.length > 0) reasons.push(`scores below the live version on case(s) ${regressed.join(", ")}`);

  const margin = contract.thresholds.maxRegression ?? 0;
  const comparison = run.paired ? compare(cases, tags, margin) : null;
  if (comparison) {
    for (const [tag, r] of Object.entries(comparison.byTag))
      if (!r.ok) reasons.push(regressionReason(`tag ${tag}`, r, margin));
    if (!comparison.overall.ok) reasons.push(regressionReason("overall", comparison.overall, margin));
  }
  return {
    contract: contract.contract,
    version: contract.version,
    startedAt: run.startedAt,
    durationMs: Math.round(run.durationMs),
    passed: reasons.length === 0,
    passRate,
    threshold,
    failing: cases.filter((c) => !c.passed).map((c) => c.id),
    byTag,
    cases,
    candidate: run.candidate,
    comparison,
    reasons,
  };
}
