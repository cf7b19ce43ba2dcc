import { existsSync } from "node:fs";
import type { AdapterVersionInfo, ContractSummary } from "../../api";
import type { ContractReport } from "../contract/contract-runner";
import type { AdapterVersion } from "./release-store";

/** The UI's view of a contract report: every case, with only the failed assertions' details. */
export function summarizeReport(r: ContractReport): ContractSummary {
  return {
    contract: r.contract,
    version: r.version,
    passed: r.passed,
    passRate: r.passRate,
    failing: r.failing,
    reasons: r.reasons,
    durationMs: r.durationMs,
    startedAt: r.startedAt,
    cases: r.cases.map((c) => ({
      id: c.id,
      description: c.description,
      passed: c.passed,
      output: c.output.slice(0, 2000),
      latencyMs: c.latencyMs,
      failures: [
        ...c.assertions.filter((a) => !a.passed).map((a) => ({ type: a.type, detail: a.detail })),
        ...(c.error ? [{ type: "error", detail: c.error }] : []),
      ],
      reason: c.reason,
      live: c.live
        ? {
            passed: c.live.passed,
            reason: c.live.error
              ? `error: ${c.live.error}`
              : (c.live.reason ?? (c.live.passed ? "passed" : "failed")),
          }
        : null,
    })),
  };
}

export function toVersionInfo(v: AdapterVersion): AdapterVersionInfo {
  return {
    adapterId: v.adapterId,
    version: v.version,
    status: v.status,
    live: v.status === "live",
    sha256: v.sha256,
    sizeBytes: v.sizeBytes,
    source: v.source,
    lineage: v.manifest.lineage,
    releaseNotes: v.manifest.releaseNotes,
    installedAt: v.installedAt,
    promotedAt: v.promotedAt,
    fileKept: v.prunedAt === null && existsSync(v.filePath),
    statusReason: v.statusReason,
    contract: v.report ? summarizeReport(v.report) : null,
  };
}

/** Compare dotted versions numerically (`1.10.0` > `1.9.2`); non-numeric parts compare as text. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/);
  const pb = b.split(/[.+-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? "0";
    const y = pb[i] ?? "0";
    const nx = Number(x);
    const ny = Number(y);
    const d = Number.isFinite(nx) && Number.isFinite(ny) ? nx - ny : x.localeCompare(y);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}
