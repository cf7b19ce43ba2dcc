import type { Database, Statement } from "better-sqlite3";
import type { StoredManifest } from "./manifest-reader";

/** One installed adapter as the database holds it. */
export interface InstalledAdapter {
  id: string;
  name: string;
  domain: string;
  version: string;
  description: string;
  sha256: string;
  sizeBytes: number;
  /** The copy inside <dataDir>/adapters. */
  filePath: string;
  manifest: StoredManifest;
  enabled: boolean;
  scale: number;
  installedAt: number;
  usageCount: number;
}

interface AdapterRow {
  id: string;
  name: string;
  domain: string;
  version: string;
  description: string;
  sha256: string;
  size_bytes: number;
  file_path: string;
  manifest_json: string;
  enabled: number;
  scale: number;
  installed_at: number;
  usage_count: number;
}

const EMPTY_MANIFEST: StoredManifest = {
  defaultScale: 1,
  routingExamples: [],
  base: { architecture: "unknown", embeddingLength: 0, baseName: null, baseSha256: null },
  lineage: { parent: null, trainedFrom: "unknown" },
};

function parseManifest(json: string): StoredManifest {
  try {
    const m = JSON.parse(json) as Partial<StoredManifest>;
    return { ...EMPTY_MANIFEST, ...m, base: { ...EMPTY_MANIFEST.base, ...m.base } };
  } catch {
    return EMPTY_MANIFEST;
  }
}

function toAdapter(row: AdapterRow): InstalledAdapter {
  return {
    id: row.id,
    name: row.name,
    domain: row.domain,
    version: row.version,
    description: row.description,
    sha256: row.sha256,
    sizeBytes: row.size_bytes,
    filePath: row.file_path,
    manifest: parseManifest(row.manifest_json),
    enabled: row.enabled === 1,
    scale: row.scale,
    installedAt: row.installed_at,
    usageCount: row.usage_count,
  };
}

/** The `adapters` table (migration 0003). */
export class AdapterStore {
  private readonly insertStmt: Statement<[Record<string, unknown>]>;
  private readonly getStmt: Statement<[string], AdapterRow>;
  private readonly bySha: Statement<[string], AdapterRow>;
  private readonly listStmt: Statement<[], AdapterRow>;
  private readonly updateStmt: Statement<[number, number, string]>;
  private readonly deleteStmt: Statement<[string]>;
  private readonly usageStmt: Statement<[string]>;
  private readonly manifestStmt: Statement<[string, string]>;

  constructor(private readonly db: Database) {
    this.insertStmt = db.prepare(`
      INSERT INTO adapters (id, name, domain, version, description, sha256, size_bytes, file_path,
        manifest_json, enabled, scale, installed_at, usage_count)
      VALUES (@id, @name, @domain, @version, @description, @sha256, @sizeBytes, @filePath,
        @manifestJson, @enabled, @scale, @installedAt, 0)`);
    this.getStmt = db.prepare("SELECT * FROM adapters WHERE id = ?");
    this.bySha = db.prepare("SELECT * FROM adapters WHERE sha256 = ?");
    this.listStmt = db.prepare("SELECT * FROM adapters ORDER BY installed_at, id");
    this.updateStmt = db.prepare("UPDATE adapters SET enabled = ?, scale = ? WHERE id = ?");
    this.deleteStmt = db.prepare("DELETE FROM adapters WHERE id = ?");
    this.usageStmt = db.prepare("UPDATE adapters SET usage_count = usage_count + 1 WHERE id = ?");
    this.manifestStmt = db.prepare("UPDATE adapters SET manifest_json = ? WHERE id = ?");
  }

  insert(a: Omit<InstalledAdapter, "usageCount">): void {
    this.insertStmt.run({
      id: a.id,
      name: a.name,
      domain: a.domain,
      version: a.version,
      description: a.description,
      sha256: a.sha256,
      sizeBytes: a.sizeBytes,
      filePath: a.filePath,
      manifestJson: JSON.stringify(a.manifest),
      enabled: a.enabled ? 1 : 0,
      scale: a.scale,
      installedAt: a.installedAt,
    });
  }

  get(id: string): InstalledAdapter | null {
    const row = this.getStmt.get(id);
    return row ? toAdapter(row) : null;
  }

  findBySha256(sha256: string): InstalledAdapter | null {
    const row = this.bySha.get(sha256.toLowerCase());
    return row ? toAdapter(row) : null;
  }

  /** Oldest first: the order they were installed in. */
  list(): InstalledAdapter[] {
    return this.listStmt.all().map(toAdapter);
  }

  setSwitches(id: string, enabled: boolean, scale: number): boolean {
    return this.updateStmt.run(enabled ? 1 : 0, scale, id).changes > 0;
  }

  delete(id: string): boolean {
    return this.deleteStmt.run(id).changes > 0;
  }

  /** Replace what is kept of an adapter's manifest (the file itself is unchanged). */
  setManifest(id: string, manifest: StoredManifest): boolean {
    return this.manifestStmt.run(JSON.stringify(manifest), id).changes > 0;
  }

  /** One more turn answered with each of `ids` (call inside the turn's transaction). */
  countUsage(ids: readonly string[]): void {
    for (const id of new Set(ids)) this.usageStmt.run(id);
  }

  get count(): number {
    return (this.db.prepare("SELECT COUNT(*) FROM adapters").pluck().get() as number) ?? 0;
  }
}
