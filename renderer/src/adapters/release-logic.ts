/**
 * Pure helpers for adapter versions, the evaluation gate, registry updates and releases:
 * how each reads to a person (badges, progress, notices, the release history).
 */
import type {
  AdapterVersionInfo,
  AdapterVersionStatus,
  ContractSummary,
  GateProgress,
  Release,
  ReleaseReason,
  UpdateCheck,
  UpdateProgress,
} from "../../../electron/api";
import { formatBytes } from "../../../common/format-bytes";

/** Adapter id -> display name (falls back to the id for an adapter the UI does not know). */
export type NameOf = (adapterId: string) => string;

const STATUS_LABELS: Record<AdapterVersionStatus, string> = {
  live: "Live",
  staged: "Staged",
  evaluating: "Evaluating…",
  rejected: "Rejected",
  retired: "Retired",
};

export function versionStatusLabel(status: AdapterVersionStatus): string {
  return STATUS_LABELS[status];
}

/** The key of a version in maps: `coding@2.0.0`. */
export function versionKey(adapterId: string, version: string): string {
  return `${adapterId}@${version}`;
}

export function formatCases(done: number, total: number): string {
  return `${done}/${total} case${total === 1 ? "" : "s"}`;
}

export type BadgeTone = "ok" | "busy" | "warn" | "error" | "neutral";

export interface VersionBadge {
  label: string;
  tone: BadgeTone;
  /** "3/6 cases" while the gate runs; null otherwise. */
  progress: string | null;
  /** For a progressbar: cases done and total (total 0 = not started yet). */
  done: number;
  total: number;
}

/**
 * The badge of a version: its stored status, unless a gate event says more recently that the
 * contract is queued or running on it (the stored status lags behind the events).
 */
export function versionBadge(
  info: Pick<AdapterVersionInfo, "status">,
  gate?: GateProgress | null,
): VersionBadge {
  const decided = info.status === "live" || info.status === "retired";
  if (!decided && gate && (gate.state === "queued" || gate.state === "running")) {
    return gate.state === "queued"
      ? { label: "Waiting for the contract", tone: "busy", progress: null, done: 0, total: 0 }
      : {
          label: "Evaluating…",
          tone: "busy",
          progress: formatCases(gate.done, gate.total),
          done: gate.done,
          total: gate.total,
        };
  }
  const tone: Record<AdapterVersionStatus, BadgeTone> = {
    live: "ok",
    staged: "warn",
    evaluating: "busy",
    rejected: "error",
    retired: "neutral",
  };
  return {
    label: versionStatusLabel(info.status),
    tone: tone[info.status],
    progress: null,
    done: 0,
    total: 0,
  };
}

/** Gate progress in words, e.g. "Running the contract: 3/6 cases (coding-auto)". */
export function describeGate(g: GateProgress): string {
  switch (g.state) {
    case "queued":
      return "Waiting for the contract to run";
    case "running":
      return `Running the contract: ${formatCases(g.done, g.total)}${g.caseId ? ` (${g.caseId})` : ""}`;
    case "passed":
      return `Passed the contract (${formatCases(g.done, g.total)})`;
    case "failed":
      return g.failing.length > 0
        ? `Failed the contract: ${g.failing.join(", ")}`
        : (g.message ?? "Failed the contract");
    case "error":
      return `The contract could not run${g.message ? `: ${g.message}` : ""}`;
  }
}

/** The non-blocking notice for a decided gate; null while it is still queued or running. */
export function gateNotice(g: GateProgress, nameOf: NameOf): { text: string; tone: "ok" | "error" } | null {
  const who = `${nameOf(g.adapterId)} ${g.version}`;
  if (g.state === "passed") return { text: `${who} is live`, tone: "ok" };
  if (g.state === "failed") {
    const cases = g.failing.length > 0 ? g.failing.join(", ") : (g.message ?? "see its report");
    return { text: `${who} failed the contract: ${cases}`, tone: "error" };
  }
  if (g.state === "error")
    return { text: `${who} could not be evaluated: ${g.message ?? "unknown error"}`, tone: "error" };
  return null;
}

const SOURCE_LABELS: Record<AdapterVersionInfo["source"], string> = {
  install: "First install",
  file: "Installed from a file",
  registry: "From the update server",
};

export function sourceLabel(source: AdapterVersionInfo["source"]): string {
  return SOURCE_LABELS[source];
}

/** One line about a contract run: "Passed macaron-default 1.0.0: 6/6 cases in 1.2 s". */
export function describeContract(c: ContractSummary): string {
  const passedCases = c.cases.filter((x) => x.passed).length;
  const seconds = (c.durationMs / 1000).toFixed(1);
  const head = c.passed ? "Passed" : "Failed";
  return `${head} ${c.contract} ${c.version}: ${passedCases}/${c.cases.length} cases passed in ${seconds} s`;
}

/** The failing cases of a contract run with their failed assertions (cases without detail too). */
export function failingCases(
  c: ContractSummary,
): Array<{ id: string; description: string; details: string[] }> {
  const byId = new Map(c.cases.map((x) => [x.id, x]));
  return c.failing.map((id) => {
    const found = byId.get(id);
    return {
      id,
      description: found?.description ?? "",
      details: found
        ? [
            ...found.failures.map((f) => `${f.type}: ${f.detail}`),
            // The live version on the same case: what the candidate is compared with.
            ...(found.live
              ? [`live version: ${found.live.passed ? "passed" : "failed"} (${found.live.reason})`]
              : []),
          ]
        : [],
    };
  });
}

/** What "Delete old versions" would delete: the kept files of retired and rejected versions. */
export function prunable(versions: readonly AdapterVersionInfo[]): { count: number; bytes: number } {
  const old = versions.filter((v) => (v.status === "retired" || v.status === "rejected") && v.fileKept);
  return { count: old.length, bytes: old.reduce((sum, v) => sum + v.sizeBytes, 0) };
}

export function describePrune(r: { deletedFiles: number; freedBytes: number }): string {
  if (r.deletedFiles === 0) return "No old version files to delete.";
  return `Deleted ${r.deletedFiles} old version file${r.deletedFiles === 1 ? "" : "s"}, freed ${formatBytes(r.freedBytes)}.`;
}

/** Download progress as a fraction (0..1), or null when the size is unknown. */
export function downloadFraction(p: Pick<UpdateProgress, "receivedBytes" | "totalBytes">): number | null {
  if (p.receivedBytes === null || !p.totalBytes) return null;
  return Math.min(1, Math.max(0, p.receivedBytes / p.totalBytes));
}

/** Registry progress in words; null for "idle" (the last check's summary says it then). */
export function describeUpdate(p: UpdateProgress, nameOf: NameOf): string | null {
  const who = p.adapterId ? `${nameOf(p.adapterId)} ${p.version ?? ""}`.trim() : "the update";
  switch (p.state) {
    case "checking":
      return "Checking for updates…";
    case "available":
      return `Found ${who}${p.totalBytes ? ` (${formatBytes(p.totalBytes)})` : ""}`;
    case "downloading": {
      const have = p.receivedBytes ?? 0;
      const of = p.totalBytes ? ` of ${formatBytes(p.totalBytes)}` : "";
      const fraction = downloadFraction(p);
      return `Downloading ${who}: ${formatBytes(have)}${of}${fraction === null ? "" : ` (${Math.round(fraction * 100)}%)`}`;
    }
    case "verifying":
      return `Verifying ${who}…`;
    case "staged":
      return `${who} downloaded and verified; the contract runs next`;
    case "failed":
      return p.adapterId
        ? `${who} was refused: ${p.message ?? "unknown error"}`
        : `Update check failed: ${p.message ?? "unknown error"}`;
    case "idle":
      return null;
  }
}

/** What a check found: "No new versions." or "Found 2 new versions: Coding 2.0.0, Coding 3.0.0." */
export function describeCheck(check: UpdateCheck, nameOf: NameOf): string {
  if (check.available.length === 0) return "No new versions.";
  const list = check.available.map((a) => `${nameOf(a.adapterId)} ${a.version}`).join(", ");
  return `Found ${check.available.length} new version${check.available.length === 1 ? "" : "s"}: ${list}.`;
}

const REASON_LABELS: Record<ReleaseReason, string> = {
  startup: "Start-up",
  install: "Adapter installed",
  remove: "Adapter removed",
  promote: "Promoted",
  rollback: "Rolled back",
  model: "Base model changed",
};

export function releaseReasonLabel(reason: ReleaseReason): string {
  return REASON_LABELS[reason];
}

/** The first 12 hex digits of a sha256 ("unknown" when not hashed yet). */
export function shortSha(sha256: string | null): string {
  return sha256 ? sha256.slice(0, 12) : "unknown";
}

/** A release as the history table shows it. */
export interface ReleaseRow {
  id: number;
  reason: string;
  detail: string | null;
  baseModel: string;
  harness: string;
  contract: string;
  /** "Chat 1.0.0, Coding 2.0.0" (or "Base model only"). */
  adapters: string;
}

export function releaseRow(r: Release, nameOf: NameOf): ReleaseRow {
  const adapters = [...r.adapters]
    .map((a) => `${nameOf(a.id)} ${a.version}`)
    .sort((a, b) => a.localeCompare(b));
  return {
    id: r.id,
    reason: releaseReasonLabel(r.reason),
    detail: r.detail,
    baseModel: shortSha(r.baseModelSha256),
    harness: r.harnessVersion,
    contract: r.contractVersion,
    adapters: adapters.length > 0 ? adapters.join(", ") : "Base model only",
  };
}

/** Insert a release at the top (newest first), replacing one with the same id. */
export function prependRelease(list: readonly Release[] | null, release: Release): Release[] | null {
  if (list === null) return null;
  return [release, ...list.filter((r) => r.id !== release.id)].sort((a, b) => b.id - a.id);
}

/**
 * Where one version found by a check stands, from its latest registry event and gate event:
 * "Downloading (40%)", "Refused: sha256 mismatch…", "Running the contract: 3/6 cases", "Live".
 */
export function describeUpdateItem(
  update: UpdateProgress | undefined,
  gate: GateProgress | undefined,
): string {
  if (gate) return gate.state === "passed" ? "Passed the contract: live now" : describeGate(gate);
  if (!update) return "Waiting to download";
  switch (update.state) {
    case "downloading": {
      const fraction = downloadFraction(update);
      return fraction === null ? "Downloading…" : `Downloading (${Math.round(fraction * 100)}%)`;
    }
    case "verifying":
      return "Verifying…";
    case "staged":
      return "Verified; the contract runs next";
    case "failed":
      return `Refused: ${update.message ?? "unknown error"}`;
    default:
      return "Waiting to download";
  }
}
