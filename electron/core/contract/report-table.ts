import type { ContractReport } from "./contract-runner";

const pad = (s: string, n: number): string => (s.length >= n ? s.slice(0, n) : s + " ".repeat(n - s.length));

/** A contract report as a plain-text table for a terminal or a log. */
export function formatReport(report: ContractReport): string {
  const lines: string[] = [];
  const title = `${report.contract}@${report.version}`;
  const candidate = report.candidate
    ? ` (candidate ${report.candidate.adapterId}@${report.candidate.version})`
    : "";
  lines.push(`contract ${title}${candidate}: ${report.cases.length} cases in ${report.durationMs} ms`);
  lines.push("");
  lines.push(`${pad("case", 22)} ${pad("result", 6)} ${pad("ms", 7)} ${pad("adapters", 18)} output`);
  for (const c of report.cases) {
    const output = JSON.stringify(c.output.length > 24 ? `${c.output.slice(0, 24)}…` : c.output);
    lines.push(
      `${pad(c.id, 22)} ${pad(c.passed ? "pass" : "FAIL", 6)} ${pad(String(Math.round(c.latencyMs)), 7)} ${pad(c.adapters.join("+") || "base", 18)} ${output}`,
    );
    for (const a of c.assertions) if (!a.passed) lines.push(`    ✗ ${a.type}: ${a.detail}`);
    if (c.error) lines.push(`    ✗ error: ${c.error}`);
  }
  lines.push("");
  for (const [tag, t] of Object.entries(report.byTag)) {
    lines.push(
      `tag ${pad(tag, 10)} ${t.passed}/${t.total} pass (needs ${Math.round(t.threshold * 100)}%)${t.ok ? "" : "  ✗"}`,
    );
  }
  lines.push("");
  lines.push(
    report.passed
      ? `PASSED: ${Math.round(report.passRate * 100)}% of cases pass`
      : `FAILED: ${report.failing.length} failing case(s): ${report.failing.join(", ")}`,
  );
  return lines.join("\n");
}
