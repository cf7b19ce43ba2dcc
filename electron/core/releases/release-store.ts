import type { Database } from "better-sqlite3";
import type { AdapterVersionStatus, Release, ReleaseReason } from "../../api";
import type { StoredManifest } from "../adapters/manifest-reader";
import type { ContractReport } from "../contract/contract-runner";

/** Everything a version needs to become the `adapters` row: the stored manifest plus the texts. */
export interface VersionManifest extends StoredManifest {
  name: string;
  domain: string;
  description: string;
  releaseNotes: string;
}

export interface AdapterVersion {
  adapterId: string;
  version: string;
  sha256: string;
  sizeBytes: number;
  filePath: string;
  manifest: VersionManifest;
  source: "install" | "file" | "registry";
  status: AdapterVersionStatus;
  statusReason: string | null;
  report: ContractReport | null;
  installedAt: number;
  promotedAt: number | null;
  prunedAt: number | null;
}

export type LiveEntry = Release["adapters"][number];

interface VersionRow {
  adapter_id: string;
  version: string;
  sha256: string;
  size_bytes: number;
  file_path: string;
  manifest_json: string;
  source: AdapterVersion["source"];
  status: AdapterVersionStatus;
  status_reason: string | null;
  contract_report_json: string | null;
  installed_at: number;
  promoted_at: number | null;
  pruned_at: number | null;
}

interface ReleaseRow {
  id: number;
  base_model_sha256: string | null;
  harness_version: string;
  contract_version: string;
  adapters_json: string;
  reason: ReleaseReason;
  detail: string | null;
  created_at: number;
}

function json<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

const EMPTY: VersionManifest = {
  name: "",
  domain: "general",
  description: "",
  releaseNotes: "",
  defaultScale: 1,
  routingExamples: [],
  base: { architecture: "unknown", embeddingLength: 0, baseName: null, baseSha256: null },
  lineage: { parent: null, trainedFrom: "unknown" },
};

function toVersion(r: VersionRow): AdapterVersion {
  const m = json<Partial<VersionManifest>>(r.manifest_json, {});
  return {
    adapterId: r.adapter_id,
    version: r.version,
    sha256: r.sha256,
    sizeBytes: r.size_bytes,
    filePath: r.file_path,
    manifest: {
      ...EMPTY,
      ...m,
      base: { ...EMPTY.base, ...m.base },
      lineage: { ...EMPTY.lineage, ...m.lineage },
    },
    source: r.source,
    status: r.status,
    statusReason: r.status_reason,
    report: json<ContractReport | null>(r.contract_report_json, null),
    installedAt: r.installed_at,
    promotedAt: r.promoted_at,
    prunedAt: r.pruned_at,
  };
}

function toRelease(r: ReleaseRow): Release {
  return {
    id: r.id,
    baseModelSha256: r.base_model_sha256,
    harnessVersion: r.harness_version,
    contractVersion: r.contract_version,
    adapters: json<LiveEntry[]>(r.adapters_json, []),
    reason: r.reason,
    detail: r.detail,
    createdAt: r.created_at,
  };
}

/** The `adapter_versions` and `releases` tables (migration 0006), and the `adapters` pointer. */
export class ReleaseStore {
  constructor(readonly db: Database) {}

  /** Run `fn` in one transaction: all of it commits, or none. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  versions(adapterId: string): AdapterVersion[] {
    const rows = this.db
      .prepare("SELECT * FROM adapter_versions WHERE adapter_id = ? ORDER BY installed_at DESC, rowid DESC")
      .all(adapterId) as VersionRow[];
    return rows.map(toVersion);
  }

  version(adapterId: string, version: string): AdapterVersion | null {
    const row = this.db
      .prepare("SELECT * FROM adapter_versions WHERE adapter_id = ? AND version = ?")
      .get(adapterId, version) as VersionRow | undefined;
    return row ? toVersion(row) : null;
  }

  bySha256(sha256: string): AdapterVersion | null {
    const row = this.db
      .prepare("SELECT * FROM adapter_versions WHERE sha256 = ? AND pruned_at IS NULL")
      .get(sha256) as VersionRow | undefined;
    return row ? toVersion(row) : null;
  }

  live(adapterId: string): AdapterVersion | null {
    const row = this.db
      .prepare("SELECT * FROM adapter_versions WHERE adapter_id = ? AND status = 'live'")
      .get(adapterId) as VersionRow | undefined;
    return row ? toVersion(row) : null;
  }

  allLive(): AdapterVersion[] {
    return (
      this.db.prepare("SELECT * FROM adapter_versions WHERE status = 'live'").all() as VersionRow[]
    ).map(toVersion);
  }

  insertVersion(v: AdapterVersion): void {
    this.db
      .prepare(
        `INSERT INTO adapter_versions (adapter_id, version, sha256, size_bytes, file_path, manifest_json, lineage_json,
           source, status, status_reason, contract_report_json, installed_at, promoted_at, pruned_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        v.adapterId,
        v.version,
        v.sha256,
        v.sizeBytes,
        v.filePath,
        JSON.stringify(v.manifest),
        JSON.stringify(v.manifest.lineage),
        v.source,
        v.status,
        v.statusReason,
        v.report ? JSON.stringify(v.report) : null,
        v.installedAt,
        v.promotedAt,
        v.prunedAt,
      );
  }

  /** Change a version's status (and reason, report, promotion time when given). */
  setStatus(
    adapterId: string,
    version: string,
    status: AdapterVersionStatus,
    extra: { reason?: string | null; report?: ContractReport | null; promotedAt?: number } = {},
  ): void {
    this.db
      .prepare(
        `UPDATE adapter_versions SET status = ?,
           status_reason = CASE WHEN ? THEN ? ELSE status_reason END,
           contract_report_json = CASE WHEN ? THEN ? ELSE contract_report_json END,
           promoted_at = COALESCE(?, promoted_at)
         WHERE adapter_id = ? AND version = ?`,
      )
      .run(
        status,
        extra.reason !== undefined ? 1 : 0,
        extra.reason ?? null,
        extra.report !== undefined ? 1 : 0,
        extra.report ? JSON.stringify(extra.report) : null,
        extra.promotedAt ?? null,
        adapterId,
        version,
      );
  }

  markPruned(adapterId: string, version: string, at: number): void {
    this.db
      .prepare("UPDATE adapter_versions SET pruned_at = ? WHERE adapter_id = ? AND version = ?")
      .run(at, adapterId, version);
  }

  /** Versions interrupted mid-evaluation (crash, power loss) wait again as staged. */
  resetEvaluating(): number {
    return this.db
      .prepare(
        "UPDATE adapter_versions SET status = 'staged', status_reason = 'evaluation interrupted; run it again' WHERE status = 'evaluating'",
      )
      .run().changes;
  }

  /** Point the `adapters` row at `v` (the user's enabled switch, scale and usage stay). */
  pointAdapterAt(v: AdapterVersion): void {
    const { name, domain, description, releaseNotes: _notes, ...stored } = v.manifest;
    const changed = this.db
      .prepare(
        `UPDATE adapters SET name = ?, domain = ?, version = ?, description = ?, sha256 = ?, size_bytes = ?,
           file_path = ?, manifest_json = ? WHERE id = ?`,
      )
      .run(
        name || v.adapterId,
        domain,
        v.version,
        description,
        v.sha256,
        v.sizeBytes,
        v.filePath,
        JSON.stringify(stored),
        v.adapterId,
      ).changes;
    if (changed !== 1) throw new Error(`adapter "${v.adapterId}" is not installed`);
  }

  /** The live set as the `adapters` table has it, sorted by id. */
  liveSet(): LiveEntry[] {
    return this.db.prepare("SELECT id, version, sha256 FROM adapters ORDER BY id").all() as LiveEntry[];
  }

  /** Installed adapters (id, version, sha256 + their row) without a version row of that version. */
  adaptersWithoutVersion(): { id: string; version: string }[] {
    return this.db
      .prepare(
        `SELECT a.id, a.version FROM adapters a
         LEFT JOIN adapter_versions v ON v.adapter_id = a.id AND v.version = a.version
         WHERE v.adapter_id IS NULL`,
      )
      .all() as { id: string; version: string }[];
  }

  /** Insert the version row of an installed adapter from its `adapters` row (first install). */
  versionFromAdapterRow(id: string, at: number): void {
    this.db
      .prepare(
        `INSERT INTO adapter_versions (adapter_id, version, sha256, size_bytes, file_path, manifest_json,
           lineage_json, source, status, installed_at, promoted_at)
         SELECT id, version, sha256, size_bytes, file_path,
           json_patch(manifest_json, json_object('name', name, 'domain', domain, 'description', description, 'releaseNotes', '')),
           COALESCE(json_extract(manifest_json, '$.lineage'), '{"parent":null,"trainedFrom":"unknown"}'),
           'install', 'live', installed_at, ?
         FROM adapters WHERE id = ?`,
      )
      .run(at, id);
  }

  /** Live version rows whose adapter is live under another version, or not installed any more. */
  orphanedLive(): AdapterVersion[] {
    const rows = this.db
      .prepare(
        `SELECT v.* FROM adapter_versions v LEFT JOIN adapters a ON a.id = v.adapter_id
         WHERE v.status = 'live' AND (a.id IS NULL OR a.version != v.version)`,
      )
      .all() as VersionRow[];
    return rows.map(toVersion);
  }

  isInstalled(adapterId: string): boolean {
    return this.db.prepare("SELECT 1 FROM adapters WHERE id = ?").get(adapterId) !== undefined;
  }

  latestRelease(): Release | null {
    const row = this.db.prepare("SELECT * FROM releases ORDER BY id DESC LIMIT 1").get() as
      ReleaseRow | undefined;
    return row ? toRelease(row) : null;
  }

  insertRelease(r: Omit<Release, "id">): Release {
    const info = this.db
      .prepare(
        `INSERT INTO releases (base_model_sha256, harness_version, contract_version, adapters_json, reason, detail, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        r.baseModelSha256,
        r.harnessVersion,
        r.contractVersion,
        JSON.stringify(r.adapters),
        r.reason,
        r.detail,
        r.createdAt,
      );
    return { ...r, id: Number(info.lastInsertRowid) };
  }

  releases(limit: number): Release[] {
    return (
      this.db.prepare("SELECT * FROM releases ORDER BY id DESC LIMIT ?").all(limit) as ReleaseRow[]
    ).map(toRelease);
  }

  releaseForMessage(messageId: string): Release | null {
    const row = this.db
      .prepare("SELECT r.* FROM turns t JOIN releases r ON r.id = t.release_id WHERE t.message_id = ?")
      .get(messageId) as ReleaseRow | undefined;
    return row ? toRelease(row) : null;
  }
}
