import type { CaseReport, ContractReport } from "./contract-runner";

const pad = (s: string, n: number): string => (s.length >= n ? s.slice(0, n) : s + " ".repeat(n - s.length));
const pct = (x: number): string => `${Math.round(x * 100)}%`;
const verdict = (passed: boolean): string => (passed ? "pass" : "FAIL");

/** live result and what changed ("▼ broken", "▲ fixed"), for a report with live results. */
function liveColumns(c: CaseReport): string {
  if (!c.live) return `${pad("-", 6)} ${pad("", 8)}`;
  const change = c.change === "broken" ? "▼ broken" : c.change === "fixed" ? "▲ fixed" : "";
  return `${pad(verdict(c.live.passed), 6)} ${pad(change, 8)}`;
}

/**
 * A contract report as a plain-text table for a terminal or a log: per case the result (and
 * the live version's, with what changed, when compared), the failed checks, per-tag pass rates
 * (live vs candidate when compared) and the verdict with its reasons.
 */
export function formatReport(report: ContractReport): string {
  const lines: string[] = [];
  const title = `${report.contract}@${report.version}`;
  const candidate = report.candidate
    ? ` (candidate ${report.candidate.adapterId}@${report.candidate.version})`
    : "";
  const withLive = report.cases.some((c) => c.live !== null);
  lines.push(`contract ${title}${candidate}: ${report.cases.length} cases in ${report.durationMs} ms`);
  lines.push("");
  const liveHeader = withLive ? `${pad("live", 6)} ${pad("change", 8)} ` : "";
  lines.push(
    `${pad("case", 22)} ${pad("result", 6)} ${liveHeader}${pad("ms", 7)} ${pad("adapters", 18)} output`,
  );
  for (const c of report.cases) {
    const output = JSON.stringify(c.output.length > 24 ? `${c.output.slice(0, 24)}…` : c.output);
    const live = withLive ? `${liveColumns(c)} ` : "";
    lines.push(
      `${pad(c.id, 22)} ${pad(verdict(c.passed), 6)} ${live}${pad(String(Math.round(c.latencyMs)), 7)} ${pad(c.adapters.join("+") || "base", 18)} ${output}`,
    );
    // The reason of each verdict: every failed check, or what made a pass right; then live's.
    const failed = c.assertions.filter((a) => !a.passed);
    for (const a of failed) lines.push(`    ✗ ${a.type}: ${a.detail}`);
    if (c.error) lines.push(`    ✗ error: ${c.error}`);
    else if (failed.length === 0 && c.reason && c.reason !== "passed")
      lines.push(`    ✓ ${c.reason.replace(/^passed: /, "")}`);
    if (c.live) {
      const why = c.live.error
        ? `error: ${c.live.error}`
        : (c.live.reason ?? (c.live.passed ? "passed" : "failed"));
      lines.push(
        `    live ${c.live.passed ? "✓" : "✗"} ${why.replace(/^passed: /, "")}${c.live.shared ? " (same answer)" : ""}`,
      );
    }
  }
  lines.push("");
  const comparison = report.comparison;
  for (const [tag, t] of Object.entries(report.byTag)) {
    const paired = comparison?.byTag[tag];
    const vsLive = paired
      ? `; live ${paired.livePassed}/${paired.cases} ${pct(paired.liveRate)} → candidate ${pct(paired.candidateRate)}${paired.ok ? "" : "  ✗ regressed"}`
      : "";
    lines.push(
      `tag ${pad(tag, 10)} ${t.passed}/${t.total} pass (needs ${pct(t.threshold)})${t.ok ? "" : "  ✗"}${vsLive}`,
    );
  }
  if (comparison) {
    const o = comparison.overall;
    lines.push(
      `overall    live ${o.livePassed}/${o.cases} ${pct(o.liveRate)} → candidate ${o.candidatePassed}/${o.cases} ${pct(o.candidateRate)} ` +
        `(may fall ${Math.round(comparison.maxRegression * 100)} points at most; ${o.broken.length} broken, ${o.fixed.length} fixed)`,
    );
  }
  lines.push("");
  if (report.passed) lines.push(`PASSED: ${pct(report.passRate)} of cases pass`);
  else {
    // Reports stored before reasons existed fall back to the failing cases.
    const reasons = report.reasons ?? [];
    lines.push(`FAILED: ${report.failing.length} failing case(s): ${report.failing.join(", ")}`);
    for (const r of reasons) lines.push(`  - ${r}`);
  }
  return lines.join("\n");
}
