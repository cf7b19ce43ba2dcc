/**
 * The SQLite store (the default): one file, one process. better-sqlite3 is synchronous, so a
 * transaction never interleaves with another request of this process; WAL lets export
 * snapshots read on their own connection while ingest writes.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { FeedbackItem } from "../../common/feedback-protocol";
import { loadMigrations } from "./migrations";
import { OverQuota } from "./store";
import {
  DEFAULT_PAGE_SIZE,
  type CloudStore,
  type DomainKindCount,
  type IngestRequest,
  type IngestResult,
  type ItemFilter,
  type Readiness,
  type RegisterResult,
  type Snapshot,
  type StoredItem,
} from "./store";

export const CLOUD_DB_FILE = "cloud.db";

const COLUMNS =
  "install_id AS installId, received_at AS receivedAt, json, created_at AS c, idempotency_key AS k";
type Row = StoredItem & { c: number; k: string };

/** The WHERE clause of a filter plus the keyset condition after `after`. */
function itemQuery(
  filter: ItemFilter,
  after: Row | null,
  pageSize: number,
): { sql: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  if (filter.domain !== undefined) {
    if (filter.domain === null) where.push("domain IS NULL");
    else {
      where.push(filter.orNullDomain ? "(domain = ? OR domain IS NULL)" : "domain = ?");
      args.push(filter.domain);
    }
  }
  if (filter.kind !== undefined) {
    where.push("kind = ?");
    args.push(filter.kind);
  }
  if (after) {
    where.push("(created_at, received_at, install_id, idempotency_key) > (?, ?, ?, ?)");
    args.push(after.c, after.receivedAt, after.installId, after.k);
  }
  const sql = `SELECT ${COLUMNS} FROM items ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY created_at, received_at, install_id, idempotency_key LIMIT ${pageSize}`;
  return { sql, args };
}

export class SqliteStore implements CloudStore {
  readonly engine = "sqlite" as const;
  readonly db: Database;
  readonly path: string;
  private readonly migrations: number;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, CLOUD_DB_FILE);
    this.db = new BetterSqlite3(this.path);
    this.db.pragma("journal_mode = WAL");
    // A 200 answer promises the batch is stored: it must survive a crash right after.
    this.db.pragma("synchronous = FULL");
    this.db.pragma("busy_timeout = 5000");
    // Deleted feedback must not stay readable in the file: freed cells and pages are zeroed.
    // The WAL still holds the pages as they were before the delete until a checkpoint resets
    // it, which deleteItems does (see checkpointAfterDelete).
    this.db.pragma("secure_delete = ON");
    this.migrations = this.migrate();
  }

  /** Applies the migrations not yet applied, each in its own transaction; returns the version. */
  private migrate(): number {
    this.db.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    );
    const done = new Set(
      (this.db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map(
        (r) => r.version,
      ),
    );
    let last = 0;
    for (const m of loadMigrations("sqlite")) {
      last = m.version;
      if (done.has(m.version)) continue;
      // IMMEDIATE: a second process opening the same file waits instead of applying it twice.
      this.db
        .transaction(() => {
          const again = this.db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(m.version);
          if (again) return;
          this.db.exec(m.sql);
          this.db
            .prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
            .run(m.version, m.name, Date.now());
        })
        .immediate();
    }
    return last;
  }

  ready(): Promise<Readiness> {
    try {
      const row = this.db.prepare("SELECT MAX(version) AS v FROM schema_migrations").get() as {
        v: number | null;
      };
      if ((row.v ?? 0) < this.migrations)
        return Promise.resolve({ ok: false, reason: `schema at ${row.v}, code needs ${this.migrations}` });
      return Promise.resolve({ ok: true, migrations: row.v ?? 0 });
    } catch (err) {
      return Promise.resolve({ ok: false, reason: (err as Error).message });
    }
  }

  // --- synchronous helpers the tests and the in-process harnesses read ---

  /** Token hash of an install, or null when it never registered. */
  tokenHash(installId: string): string | null {
    const row = this.db.prepare("SELECT token_hash FROM installs WHERE install_id = ?").get(installId) as
      { token_hash: string } | undefined;
    return row?.token_hash ?? null;
  }

  /** Items of a domain (all kinds), oldest first, as stored. */
  itemsForDomain(domain: string): StoredItem[] {
    return this.db
      .prepare(
        "SELECT install_id AS installId, received_at AS receivedAt, json FROM items WHERE domain = ? ORDER BY created_at, received_at, install_id, idempotency_key",
      )
      .all(domain) as StoredItem[];
  }

  countItems(installId?: string): number {
    const row = (
      installId === undefined
        ? this.db.prepare("SELECT COUNT(*) AS n FROM items").get()
        : this.db.prepare("SELECT COUNT(*) AS n FROM items WHERE install_id = ?").get(installId)
    ) as { n: number };
    return row.n;
  }

  // --- CloudStore ---

  installForTokenHash(tokenHash: string): Promise<string | null> {
    const row = this.db.prepare("SELECT install_id FROM installs WHERE token_hash = ?").get(tokenHash) as
      { install_id: string } | undefined;
    return Promise.resolve(row?.install_id ?? null);
  }

  registerInstall(
    installId: string,
    tokenHash: string,
    at: number,
    currentTokenHash: string | null = null,
  ): Promise<RegisterResult> {
    const result = this.db
      .transaction((): RegisterResult => {
        const created = this.db
          .prepare(
            `INSERT INTO installs (install_id, token_hash, created_at, rotated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT DO NOTHING`,
          )
          .run(installId, tokenHash, at, at).changes;
        if (created === 1) return "created";
        if (currentTokenHash === null) return "taken";
        const rotated = this.db
          .prepare(
            "UPDATE installs SET token_hash = ?, rotated_at = ? WHERE install_id = ? AND token_hash = ?",
          )
          .run(tokenHash, at, installId, currentTokenHash).changes;
        return rotated === 1 ? "rotated" : "taken";
      })
      .immediate();
    return Promise.resolve(result);
  }

  hitRegisterWindow(source: string, windowStart: number): Promise<number> {
    const row = this.db.transaction(() => {
      this.db.prepare("DELETE FROM register_windows WHERE window_start < ?").run(windowStart);
      return this.db
        .prepare(
          `INSERT INTO register_windows (window_start, source, n) VALUES (?, ?, 1)
           ON CONFLICT (window_start, source) DO UPDATE SET n = n + 1 RETURNING n`,
        )
        .get(windowStart, source) as { n: number };
    })();
    return Promise.resolve(row.n);
  }

  ingest(req: IngestRequest): Promise<IngestResult> {
    return Promise.resolve(this.ingestSync(req));
  }

  private ingestSync(req: IngestRequest): IngestResult {
    try {
      return this.ingestTransaction(req);
    } catch (err) {
      // Thrown inside the transaction so that its inserts roll back.
      if (err instanceof OverQuota) return { kind: "over-quota", stored: err.stored, max: err.max };
      throw err;
    }
  }

  private ingestTransaction = (req: IngestRequest): IngestResult =>
    // One IMMEDIATE transaction: the write lock is taken first, so the replay check, the
    // quota check and the inserts see the same state (also with another process on the file).
    this.db
      .transaction((): IngestResult => {
        const install = this.db
          .prepare("SELECT item_count AS n FROM installs WHERE install_id = ?")
          .get(req.installId) as { n: number } | undefined;
        if (!install) return { kind: "unknown-install" };
        const replay = this.db
          .prepare("SELECT response FROM batches WHERE install_id = ? AND batch_id = ? AND digest = ?")
          .get(req.installId, req.batchId, req.digest) as { response: string } | undefined;
        if (replay)
          return { kind: "replayed", response: JSON.parse(replay.response) as IngestResultResponse };
        const insert = this.db.prepare(
          `INSERT INTO items (install_id, idempotency_key, kind, domain, consent, created_at, received_at, batch_id, json)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        );
        const accepted: string[] = [];
        const duplicates: string[] = [];
        for (const item of req.items) {
          const r = insert.run(...itemRow(req.installId, req.batchId, req.at, item));
          (r.changes === 1 ? accepted : duplicates).push(item.idempotencyKey);
        }
        const max = req.limits.maxStoredItems;
        if (max !== null && accepted.length > 0 && install.n + accepted.length > max)
          throw new OverQuota(install.n, max);
        this.db
          .prepare("UPDATE installs SET item_count = item_count + ? WHERE install_id = ?")
          .run(accepted.length, req.installId);
        const response = req.answer({ accepted, duplicates });
        this.db
          .prepare(
            "INSERT INTO batches (install_id, batch_id, digest, response, received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
          )
          .run(req.installId, req.batchId, req.digest, JSON.stringify(response), req.at);
        return { kind: "stored", response };
      })
      .immediate();

  hitRateWindow(installId: string, windowStart: number): Promise<number> {
    const row = this.db.transaction(() => {
      this.db
        .prepare("DELETE FROM rate_windows WHERE install_id = ? AND window_start < ?")
        .run(installId, windowStart);
      return this.db
        .prepare(
          `INSERT INTO rate_windows (install_id, window_start, n) VALUES (?, ?, 1)
           ON CONFLICT (install_id, window_start) DO UPDATE SET n = n + 1 RETURNING n`,
        )
        .get(installId, windowStart) as { n: number };
    })();
    return Promise.resolve(row.n);
  }

  deleteItems(installId: string): Promise<number> {
    const n = this.db.transaction(() => {
      const changes = this.db.prepare("DELETE FROM items WHERE install_id = ?").run(installId).changes;
      this.db.prepare("UPDATE installs SET item_count = 0 WHERE install_id = ?").run(installId);
      // A batch sent again after a delete must be stored again, not answered from memory.
      this.db.prepare("DELETE FROM batches WHERE install_id = ?").run(installId);
      return changes;
    })();
    this.checkpointAfterDelete();
    return Promise.resolve(n);
  }

  /**
   * Copies the WAL into the file and truncates it to zero bytes, so the page images from
   * before a delete (the deleted text) are gone from the WAL too. An export snapshot still
   * reading keeps the WAL from being reset: then it is retried when that snapshot ends (this
   * process) or at the next delete or close (a snapshot of another process).
   */
  private checkpointAfterDelete(): void {
    // No busy wait: TRUNCATE would otherwise block the event loop for busy_timeout while a
    // reader holds the WAL; it copies what it can and says busy, and is retried later.
    this.db.pragma("busy_timeout = 0");
    try {
      const [r] = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      this.checkpointPending = (r?.busy ?? 0) !== 0;
    } finally {
      this.db.pragma("busy_timeout = 5000");
    }
  }

  /** True while a delete's WAL checkpoint could not finish yet (a reader held the WAL). */
  checkpointPending = false;

  count(installId?: string): Promise<number> {
    return Promise.resolve(this.countItems(installId));
  }

  async withSnapshot<T>(fn: (snapshot: Snapshot) => Promise<T>): Promise<T> {
    // Its own read-only connection: an open read transaction on the shared one would take in
    // this process's ingest writes made while the export streams.
    const db = new BetterSqlite3(this.path, { readonly: true, fileMustExist: true });
    db.pragma("busy_timeout = 5000");
    db.exec("BEGIN");
    try {
      // The first read fixes the WAL snapshot; later pages read the same one.
      db.prepare("SELECT COUNT(*) FROM schema_migrations").get();
      const snapshot: Snapshot = {
        items: (filter, pageSize = DEFAULT_PAGE_SIZE) => pages(db, filter, pageSize),
        domainCounts: () =>
          Promise.resolve(
            db
              .prepare(
                "SELECT domain, kind, COUNT(*) AS n FROM items GROUP BY domain, kind ORDER BY domain, kind",
              )
              .all() as DomainKindCount[],
          ),
      };
      return await fn(snapshot);
    } finally {
      db.exec("COMMIT");
      db.close();
      if (this.checkpointPending && this.db.open) this.checkpointAfterDelete();
    }
  }

  close(): Promise<void> {
    if (this.checkpointPending && this.db.open) this.checkpointAfterDelete();
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }
}

type IngestResultResponse = Extract<IngestResult, { kind: "stored" }>["response"];

export function itemRow(installId: string, batchId: string, at: number, item: FeedbackItem) {
  return [
    installId,
    item.idempotencyKey,
    item.kind,
    item.domain,
    item.consent,
    item.createdAt,
    at,
    batchId,
    JSON.stringify(item),
  ] as const;
}

async function* pages(db: Database, filter: ItemFilter, pageSize: number): AsyncGenerator<StoredItem> {
  let after: Row | null = null;
  for (;;) {
    const { sql, args } = itemQuery(filter, after, pageSize);
    const rows = db.prepare(sql).all(...args) as Row[];
    for (const r of rows) yield { installId: r.installId, receivedAt: r.receivedAt, json: r.json };
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!;
    // Let other requests run between pages: the export must not hold the event loop.
    await new Promise((r) => setImmediate(r));
  }
}
