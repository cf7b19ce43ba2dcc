import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { ApiError, type AdapterVersionInfo, type Release, type ReleaseReason } from "../../api";
import { readGguf, type GgufFile } from "../../../native/gguf/reader";
import { copyIntoFolder, removeUnfinishedCopies } from "../adapters/adapter-files";
import type { ManifestFile } from "../../../common/adapter-manifest";
import type { ContractReport } from "../contract/contract-runner";
import type { Log } from "../dispatch";
import type { EventBus } from "../events/event-bus";
import type { AdapterVersion, LiveEntry, ReleaseStore } from "./release-store";
import { checkVersionFile, versionManifest } from "./version-file";
import { toVersionInfo } from "./version-info";

export interface AdapterReleasesDeps {
  store: ReleaseStore;
  /** Installed adapter files live here (AdapterRegistry.dir). */
  adaptersDir: string;
  events: EventBus;
  /** The loaded base model's path, or null. */
  basePath: () => string | null;
  /** The loaded base model's sha256 once known. */
  baseSha256: () => string | null;
  harnessVersion: string;
  /** `name@version` of the contract the gate runs. */
  contractVersion: string;
  /** Run the contract with `candidate` in place of its adapter's live version. */
  evaluate: (
    candidate: AdapterVersion,
    onProgress: (done: number, total: number, caseId: string) => void,
    signal: AbortSignal,
  ) => Promise<ContractReport>;
  log: Log;
  now?: () => number;
  /** Fault injection for tests: runs inside the promotion/rollback transaction, before it commits. */
  beforeCommit?: (step: "promote" | "rollback") => void;
}

const invalid = (message: string): ApiError => new ApiError("invalid_input", message);

function sameSet(a: readonly LiveEntry[], b: readonly LiveEntry[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => x.id === b[i]?.id && x.version === b[i]?.version && x.sha256 === b[i]?.sha256)
  );
}

/**
 * Adapter versions and releases: stages new versions (validated against the base), runs the
 * evaluation gate on them one at a time in the background, promotes a passing version
 * atomically (status changes + the adapters pointer + a release row in one transaction, the
 * previous file kept), rolls back instantly, prunes kept files on request, and records a
 * release whenever the live set, the base model or the harness changes.
 *
 * Crash safety: every state change commits in one transaction at its end; a version that was
 * being evaluated when the process died is staged again at start-up (`start`).
 */
export class AdapterReleases {
  private gates: Promise<unknown> = Promise.resolve();
  private readonly abort = new AbortController();
  private base: { path: string; file: Promise<GgufFile> } | null = null;
  private readonly now: () => number;

  constructor(private readonly deps: AdapterReleasesDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Start-up: interrupted evaluations go back to staged; record the release in force. Copies
   * a killed process left unfinished in the adapters folder are deleted (before any new copy).
   */
  async start(): Promise<void> {
    const unfinished = await removeUnfinishedCopies(this.deps.adaptersDir);
    if (unfinished > 0)
      this.deps.log(`deleted ${unfinished} unfinished adapter copy(ies) left by a crash`, null);
    const reset = this.deps.store.resetEvaluating();
    if (reset > 0)
      this.deps.log(`${reset} adapter version(s) were being evaluated at shutdown; staged again`, null);
    this.reconcile("startup");
  }

  /**
   * Bring versions and releases in line with the `adapters` table after an install or a
   * removal (or a new base model): first installs become live versions, removed adapters'
   * versions retire, and a release row is added when anything that defines one changed.
   */
  reconcile(reason: ReleaseReason): Release | null {
    const { store } = this.deps;
    const release = store.transaction(() => {
      const at = this.now();
      for (const orphan of store.orphanedLive()) {
        const installed = store.isInstalled(orphan.adapterId);
        store.setStatus(orphan.adapterId, orphan.version, "retired", {
          reason: installed ? "replaced outside the gate" : "the adapter was removed",
        });
        if (!existsSync(orphan.filePath)) store.markPruned(orphan.adapterId, orphan.version, at);
      }
      for (const { id } of store.adaptersWithoutVersion()) store.versionFromAdapterRow(id, at);
      return this.recordRelease(reason, null, false);
    });
    if (release) this.deps.events.emit("releases.changed", { release });
    return release;
  }

  /**
   * Validate `path` as a new version of an installed adapter (manifest beside it or given,
   * e.g. from the registry index) and keep a copy, staged. Throws invalid_input with the
   * reason (not installed, known version, not a LoRA, another base, sha256 mismatch) and
   * no_model without a base to check against; nothing is written then.
   */
  async stage(
    path: string,
    manifest: ManifestFile,
    source: "file" | "registry",
    releaseNotes = "",
  ): Promise<AdapterVersion> {
    const { store } = this.deps;
    if (!store.isInstalled(manifest.id)) {
      throw invalid(
        `No adapter "${manifest.id}" is installed: install its first version before staging new ones.`,
      );
    }
    const known = store.version(manifest.id, manifest.version);
    if (known)
      throw invalid(`Version ${manifest.version} of "${manifest.id}" is already known (${known.status}).`);
    const checked = await checkVersionFile(path, manifest, await this.baseFile());
    const twin = store.bySha256(checked.sha256);
    if (twin) throw invalid(`This file is already version ${twin.version} of "${twin.adapterId}".`);
    const filePath = await copyIntoFolder(
      path,
      this.deps.adaptersDir,
      `${manifest.id}-${checked.sha256.slice(0, 12)}.gguf`,
      checked.sizeBytes,
      "version",
    );
    const version: AdapterVersion = {
      adapterId: manifest.id,
      version: manifest.version,
      sha256: checked.sha256,
      sizeBytes: checked.sizeBytes,
      filePath,
      manifest: versionManifest(manifest, releaseNotes, "llama"),
      source,
      status: "staged",
      statusReason: "waiting for the evaluation gate",
      report: null,
      installedAt: this.now(),
      promotedAt: null,
      prunedAt: null,
    };
    try {
      store.insertVersion(version);
    } catch (err) {
      await rm(filePath, { force: true });
      throw err;
    }
    this.deps.events.emit("adapters.changed", {});
    return version;
  }

  /**
   * Put a staged (or rejected) version through the evaluation gate; gates run one at a time.
   * Passing makes it live atomically; failing marks it rejected with the report. Resolves with
   * the version as decided; rejects when the evaluation itself could not run (it stays staged).
   */
  gate(adapterId: string, version: string): Promise<AdapterVersionInfo> {
    this.progress(adapterId, version, "queued", { message: null });
    const run = this.gates.then(() => this.gateNow(adapterId, version));
    this.gates = run.catch(() => undefined);
    return run;
  }

  /** Make a retired version live again at once (its file was kept): one transaction, a release row. */
  rollback(adapterId: string, version: string): AdapterVersionInfo {
    const { store } = this.deps;
    const target = this.require(adapterId, version);
    if (target.status === "live") return toVersionInfo(target);
    if (target.status !== "retired") {
      throw invalid(
        `Version ${version} of "${adapterId}" was never live (${target.status}); promote it through the gate instead.`,
      );
    }
    if (target.prunedAt !== null || !existsSync(target.filePath)) {
      throw invalid(
        `Version ${version} of "${adapterId}" was pruned: its file is gone, so it cannot be rolled back to.`,
      );
    }
    if (!store.isInstalled(adapterId))
      throw new ApiError("not_found", `No adapter "${adapterId}" is installed.`);
    const release = store.transaction(() => {
      const previous = store.live(adapterId);
      if (previous)
        store.setStatus(adapterId, previous.version, "retired", { reason: `rolled back to ${version}` });
      store.setStatus(adapterId, version, "live", { reason: "rolled back to", promotedAt: this.now() });
      store.pointAdapterAt(target);
      const r = this.recordRelease(
        "rollback",
        `${adapterId} ${previous?.version ?? "none"} → ${version}`,
        true,
      );
      this.deps.beforeCommit?.("rollback");
      return r;
    });
    this.changed(release);
    return toVersionInfo(this.require(adapterId, version));
  }

  /** Delete the kept files of retired and rejected versions of `adapterId`. */
  async prune(adapterId: string): Promise<{ deletedFiles: number; freedBytes: number }> {
    const versions = this.deps.store.versions(adapterId);
    if (versions.length === 0) throw new ApiError("not_found", `No versions of "${adapterId}" are known.`);
    const live = versions.find((v) => v.status === "live");
    let deletedFiles = 0;
    let freedBytes = 0;
    for (const v of versions) {
      if ((v.status !== "retired" && v.status !== "rejected") || v.prunedAt !== null) continue;
      // Never the live file, even if two rows ever shared one.
      if (v.filePath !== live?.filePath && existsSync(v.filePath)) {
        await rm(v.filePath, { force: true });
        deletedFiles++;
        freedBytes += v.sizeBytes;
      }
      this.deps.store.markPruned(adapterId, v.version, this.now());
    }
    if (deletedFiles > 0) this.deps.events.emit("adapters.changed", {});
    return { deletedFiles, freedBytes };
  }

  /** Every known version of `adapterId`, newest first. */
  versions(adapterId: string): AdapterVersionInfo[] {
    const versions = this.deps.store.versions(adapterId);
    if (versions.length === 0 && !this.deps.store.isInstalled(adapterId)) {
      throw new ApiError("not_found", `No adapter "${adapterId}" is installed.`);
    }
    return versions.map(toVersionInfo);
  }

  version(adapterId: string, version: string): AdapterVersion | null {
    return this.deps.store.version(adapterId, version);
  }

  releases(limit = 100): Release[] {
    return this.deps.store.releases(limit);
  }

  releaseForMessage(messageId: string): Release | null {
    return this.deps.store.releaseForMessage(messageId);
  }

  /** Cancel a running evaluation (its version goes back to staged) and wait for the gates. */
  async close(): Promise<void> {
    this.abort.abort();
    await this.gates.catch(() => undefined);
  }

  private async gateNow(adapterId: string, version: string): Promise<AdapterVersionInfo> {
    const { store } = this.deps;
    if (this.abort.signal.aborted) throw new ApiError("aborted", "Core is shutting down.");
    const v = this.require(adapterId, version);
    if (v.status === "live") return toVersionInfo(v);
    if (v.status !== "staged" && v.status !== "rejected") {
      throw invalid(
        `Version ${version} of "${adapterId}" is ${v.status}; only staged or rejected versions go through the gate.`,
      );
    }
    if (!existsSync(v.filePath))
      throw invalid(`The file of version ${version} of "${adapterId}" is gone (pruned?).`);
    if (!this.deps.basePath()) {
      throw new ApiError(
        "no_model",
        "Open a model first: versions are evaluated against the loaded base model.",
      );
    }
    store.setStatus(adapterId, version, "evaluating", { reason: `running ${this.deps.contractVersion}` });
    let report: ContractReport;
    try {
      report = await this.deps.evaluate(
        v,
        (done, total, caseId) =>
          this.progress(adapterId, version, "running", { done, total, caseId, message: null }),
        this.abort.signal,
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      store.setStatus(adapterId, version, "staged", { reason: `the evaluation could not run: ${message}` });
      this.progress(adapterId, version, "error", { message });
      throw err instanceof ApiError
        ? err
        : new ApiError("internal", `The evaluation of ${adapterId} ${version} failed: ${message}`);
    }
    if (report.passed) {
      let release: Release | null;
      try {
        release = this.promote(v, report);
      } catch (err) {
        // Nothing of the promotion committed: the previous version is still live.
        store.setStatus(adapterId, version, "staged", {
          reason: `the promotion failed: ${(err as Error).message}`,
        });
        this.progress(adapterId, version, "error", { message: (err as Error).message });
        throw err;
      }
      this.changed(release);
      this.progress(adapterId, version, "passed", {
        done: report.cases.length,
        total: report.cases.length,
        message: null,
      });
    } else {
      const cases = `${report.failing.length} failing case(s): ${report.failing.join(", ")}`;
      const reason = report.reasons.length > 0 ? `${report.reasons.join("; ")}. ${cases}` : cases;
      store.setStatus(adapterId, version, "rejected", { reason, report });
      this.deps.events.emit("adapters.changed", {});
      this.progress(adapterId, version, "failed", {
        done: report.cases.length,
        total: report.cases.length,
        failing: report.failing,
        message: reason,
      });
    }
    return toVersionInfo(this.require(adapterId, version));
  }

  /** One transaction: previous live → retired, candidate → live, the adapters pointer, a release. */
  private promote(v: AdapterVersion, report: ContractReport): Release | null {
    const { store } = this.deps;
    return store.transaction(() => {
      const previous = store.live(v.adapterId);
      if (previous)
        store.setStatus(v.adapterId, previous.version, "retired", { reason: `replaced by ${v.version}` });
      store.setStatus(v.adapterId, v.version, "live", {
        reason: "passed the contract",
        report,
        promotedAt: this.now(),
      });
      store.pointAdapterAt(v);
      const r = this.recordRelease(
        "promote",
        `${v.adapterId} ${previous?.version ?? "none"} → ${v.version}`,
        true,
      );
      this.deps.beforeCommit?.("promote");
      return r;
    });
  }

  /** Insert a release when forced or when what defines one changed (call inside a transaction). */
  private recordRelease(reason: ReleaseReason, detail: string | null, force: boolean): Release | null {
    const { store } = this.deps;
    const adapters = store.liveSet();
    const latest = store.latestRelease();
    // A model whose hash is not known yet is taken to be the previous release's.
    const base = this.deps.baseSha256() ?? latest?.baseModelSha256 ?? null;
    const same =
      latest !== null &&
      sameSet(latest.adapters, adapters) &&
      latest.baseModelSha256 === base &&
      latest.harnessVersion === this.deps.harnessVersion &&
      latest.contractVersion === this.deps.contractVersion;
    if (same && !force) return null;
    let why = reason;
    if (!force && latest) {
      const before = new Set(latest.adapters.map((a) => a.id));
      if (latest.baseModelSha256 !== base) why = "model";
      else if (latest.adapters.some((a) => !adapters.some((b) => b.id === a.id))) why = "remove";
      else if (adapters.some((a) => !before.has(a.id))) why = "install";
    }
    return store.insertRelease({
      baseModelSha256: base,
      harnessVersion: this.deps.harnessVersion,
      contractVersion: this.deps.contractVersion,
      adapters,
      reason: why,
      detail,
      createdAt: this.now(),
    });
  }

  private changed(release: Release | null): void {
    this.deps.events.emit("adapters.changed", {});
    if (release) this.deps.events.emit("releases.changed", { release });
  }

  private require(adapterId: string, version: string): AdapterVersion {
    const v = this.deps.store.version(adapterId, version);
    if (!v) throw new ApiError("not_found", `No version ${version} of "${adapterId}" is known.`);
    return v;
  }

  private progress(
    adapterId: string,
    version: string,
    state: "queued" | "running" | "passed" | "failed" | "error",
    p: { done?: number; total?: number; caseId?: string | null; failing?: string[]; message: string | null },
  ): void {
    this.deps.events.emit("adapters.gate", {
      adapterId,
      version,
      state,
      done: p.done ?? 0,
      total: p.total ?? 0,
      caseId: p.caseId ?? null,
      failing: p.failing ?? [],
      message: p.message,
    });
  }

  private async baseFile(): Promise<GgufFile> {
    const path = this.deps.basePath();
    if (!path)
      throw new ApiError(
        "no_model",
        "Open a model first: a new version is checked against the loaded base model.",
      );
    if (this.base?.path !== path) this.base = { path, file: readGguf(path) };
    return this.base.file;
  }
}
