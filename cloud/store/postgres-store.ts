/**
 * The PostgreSQL store: several stateless service replicas share one database. Migrations run
 * under a transaction-scoped advisory lock (replicas starting at once apply each one once); an
 * ingest locks its install's row, so two replicas given the same batch at once store it once
 * and the second answers with the first's stored response.
 */
import pg from "pg";
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

/** Any fixed 64-bit number, the same in every replica: pg_advisory_xact_lock's key. */
const MIGRATION_LOCK = 0x6d6163617231; // "macar1"

/** BIGINT columns hold ms timestamps and counts, all far below 2^53: numbers, not strings. */
const types = new pg.TypeOverrides();
types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export interface PostgresStoreOptions {
  /** Pool size of this replica. */
  maxConnections?: number;
}

type Row = StoredItem & { c: number; k: string };

function itemQuery(
  filter: ItemFilter,
  after: Row | null,
  pageSize: number,
): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const p = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  if (filter.domain !== undefined) {
    if (filter.domain === null) where.push("domain IS NULL");
    else
      where.push(
        filter.orNullDomain
          ? `(domain = ${p(filter.domain)} OR domain IS NULL)`
          : `domain = ${p(filter.domain)}`,
      );
  }
  if (filter.kind !== undefined) where.push(`kind = ${p(filter.kind)}`);
  if (after)
    where.push(
      `(created_at, received_at, install_id, idempotency_key) > (${p(after.c)}, ${p(after.receivedAt)}, ${p(after.installId)}, ${p(after.k)})`,
    );
  const text = `SELECT install_id AS "installId", received_at AS "receivedAt", json, created_at AS c, idempotency_key AS k
    FROM items ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY created_at, received_at, install_id, idempotency_key LIMIT ${pageSize}`;
  return { text, values };
}

export class PostgresStore implements CloudStore {
  readonly engine = "postgres" as const;
  private closed = false;

  private constructor(
    readonly pool: pg.Pool,
    private readonly migrations: number,
  ) {}

  /** Connects and applies the migrations not yet applied. */
  static async open(url: string, opts: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.maxConnections ?? 10,
      connectionTimeoutMillis: 10_000,
      types,
    });
    // An idle client's error (the server restarted) must not crash the replica: the pool drops it.
    pool.on("error", () => {});
    try {
      const version = await migrate(pool);
      return new PostgresStore(pool, version);
    } catch (err) {
      await pool.end();
      throw err;
    }
  }

  async ready(): Promise<Readiness> {
    try {
      const { rows } = await this.pool.query<{ v: number | null }>(
        "SELECT MAX(version) AS v FROM schema_migrations",
      );
      const v = rows[0]?.v ?? 0;
      if (v < this.migrations) return { ok: false, reason: `schema at ${v}, code needs ${this.migrations}` };
      return { ok: true, migrations: v };
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    }
  }

  async installForTokenHash(tokenHash: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ install_id: string }>(
      "SELECT install_id FROM installs WHERE token_hash = $1",
      [tokenHash],
    );
    return rows[0]?.install_id ?? null;
  }

  async registerInstall(
    installId: string,
    tokenHash: string,
    at: number,
    currentTokenHash: string | null = null,
  ): Promise<RegisterResult> {
    // Two statements, each atomic: a concurrent registration of the same fresh id inserts once
    // (the other finds it taken), and a rotation needs the token current at that moment.
    const created = await this.pool.query(
      `INSERT INTO installs (install_id, token_hash, created_at, rotated_at) VALUES ($1, $2, $3, $3)
       ON CONFLICT DO NOTHING`,
      [installId, tokenHash, at],
    );
    if (created.rowCount === 1) return "created";
    if (currentTokenHash === null) return "taken";
    const rotated = await this.pool.query(
      "UPDATE installs SET token_hash = $2, rotated_at = $3 WHERE install_id = $1 AND token_hash = $4",
      [installId, tokenHash, at, currentTokenHash],
    );
    return rotated.rowCount === 1 ? "rotated" : "taken";
  }

  async hitRegisterWindow(source: string, windowStart: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH old AS (DELETE FROM register_windows WHERE window_start < $2)
       INSERT INTO register_windows (window_start, source, n) VALUES ($2, $1, 1)
       ON CONFLICT (window_start, source) DO UPDATE SET n = register_windows.n + 1 RETURNING n`,
      [source, windowStart],
    );
    return rows[0]!.n;
  }

  async ingest(req: IngestRequest): Promise<IngestResult> {
    try {
      return await this.ingestTransaction(req);
    } catch (err) {
      // Thrown inside the transaction so that its inserts roll back.
      if (err instanceof OverQuota) return { kind: "over-quota", stored: err.stored, max: err.max };
      throw err;
    }
  }

  private ingestTransaction(req: IngestRequest): Promise<IngestResult> {
    return this.transaction(async (c): Promise<IngestResult> => {
      // The row lock orders every batch of one install across replicas: the replay check,
      // the quota and the inserts below see each other's committed work.
      const install = await c.query<{ n: number }>(
        "SELECT item_count AS n FROM installs WHERE install_id = $1 FOR UPDATE",
        [req.installId],
      );
      if (!install.rows[0]) return { kind: "unknown-install" };
      const stored = install.rows[0].n;
      const replay = await c.query<{ response: string }>(
        "SELECT response FROM batches WHERE install_id = $1 AND batch_id = $2 AND digest = $3",
        [req.installId, req.batchId, req.digest],
      );
      if (replay.rows[0])
        return { kind: "replayed", response: JSON.parse(replay.rows[0].response) as Stored };
      const inserted = new Set<string>();
      if (req.items.length > 0) {
        const cols = columns(req.items);
        const { rows } = await c.query<{ k: string }>(
          `INSERT INTO items (install_id, idempotency_key, kind, domain, consent, created_at, received_at, batch_id, json)
           SELECT $1, k, kind, d, c, ca, $2, $3, j
           FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[]) AS t(k, kind, d, c, ca, j)
           ON CONFLICT DO NOTHING RETURNING idempotency_key AS k`,
          [
            req.installId,
            req.at,
            req.batchId,
            cols.keys,
            cols.kinds,
            cols.domains,
            cols.consents,
            cols.createdAt,
            cols.json,
          ],
        );
        for (const r of rows) inserted.add(r.k);
      }
      const accepted = req.items.map((i) => i.idempotencyKey).filter((k) => inserted.has(k));
      const duplicates = req.items.map((i) => i.idempotencyKey).filter((k) => !inserted.has(k));
      const max = req.limits.maxStoredItems;
      if (max !== null && accepted.length > 0 && stored + accepted.length > max)
        throw new OverQuota(stored, max);
      await c.query("UPDATE installs SET item_count = item_count + $2 WHERE install_id = $1", [
        req.installId,
        accepted.length,
      ]);
      const response = req.answer({ accepted, duplicates });
      await c.query(
        `INSERT INTO batches (install_id, batch_id, digest, response, received_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING`,
        [req.installId, req.batchId, req.digest, JSON.stringify(response), req.at],
      );
      return { kind: "stored", response };
    });
  }

  async hitRateWindow(installId: string, windowStart: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH old AS (DELETE FROM rate_windows WHERE install_id = $1 AND window_start < $2)
       INSERT INTO rate_windows (install_id, window_start, n) VALUES ($1, $2, 1)
       ON CONFLICT (install_id, window_start) DO UPDATE SET n = rate_windows.n + 1 RETURNING n`,
      [installId, windowStart],
    );
    return rows[0]!.n;
  }

  async deleteItems(installId: string): Promise<number> {
    const n = await this.transaction(async (c) => {
      await c.query("SELECT 1 FROM installs WHERE install_id = $1 FOR UPDATE", [installId]);
      const r = await c.query("DELETE FROM items WHERE install_id = $1", [installId]);
      await c.query("UPDATE installs SET item_count = 0 WHERE install_id = $1", [installId]);
      await c.query("DELETE FROM batches WHERE install_id = $1", [installId]);
      return r.rowCount ?? 0;
    });
    if (n > 0) this.vacuumSoon();
    return n;
  }

  /**
   * After a delete, VACUUM items (in the background, one at a time; deletes meanwhile make one
   * more run): the dead row versions are pruned from their pages and their space reused, and
   * the index entries go. Plain VACUUM takes no lock that blocks reads or writes. It does not
   * scrub the bytes of a pruned page or of the WAL: see ARCHITECTURE.md, "Deleting feedback".
   */
  private vacuumSoon(): void {
    if (this.closed) return;
    if (this.vacuuming) {
      this.vacuumAgain = true;
      return;
    }
    this.vacuuming = (async () => {
      do {
        this.vacuumAgain = false;
        try {
          await this.pool.query("VACUUM (ANALYZE) items");
          this.vacuums++;
        } catch {
          // The pool is ending or the server went away: autovacuum does it later.
          return;
        }
      } while (this.vacuumAgain && !this.closed);
    })().finally(() => {
      this.vacuuming = null;
    });
  }

  private vacuuming: Promise<void> | null = null;
  private vacuumAgain = false;
  /** VACUUMs this handle ran after deletes (tests read it). */
  vacuums = 0;

  /** Resolves once the VACUUM that deletes started has finished. */
  async vacuumed(): Promise<void> {
    while (this.vacuuming) await this.vacuuming;
  }

  async count(installId?: string): Promise<number> {
    const { rows } =
      installId === undefined
        ? await this.pool.query<{ n: number }>("SELECT COUNT(*)::bigint AS n FROM items")
        : await this.pool.query<{ n: number }>(
            "SELECT COUNT(*)::bigint AS n FROM items WHERE install_id = $1",
            [installId],
          );
    return rows[0]!.n;
  }

  async withSnapshot<T>(fn: (snapshot: Snapshot) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    let failed = false;
    try {
      await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const snapshot: Snapshot = {
        items: (filter, pageSize = DEFAULT_PAGE_SIZE) => pages(c, filter, pageSize),
        domainCounts: async () =>
          (
            await c.query<DomainKindCount>(
              "SELECT domain, kind, COUNT(*)::bigint AS n FROM items GROUP BY domain, kind ORDER BY domain, kind",
            )
          ).rows,
      };
      const result = await fn(snapshot);
      await c.query("COMMIT");
      return result;
    } catch (err) {
      failed = true;
      await c.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      c.release(failed);
    }
  }

  /** Ends the pool once the queries in flight have finished. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.vacuumed();
    await this.pool.end();
  }

  /**
   * Runs fn in one transaction on a pooled client: COMMIT on success, ROLLBACK on error (a client
   * whose ROLLBACK fails is discarded, not returned to the pool). Public for cloud/store/seed.ts.
   */
  async transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    let broken = false;
    try {
      await c.query("BEGIN");
      const result = await fn(c);
      await c.query("COMMIT");
      return result;
    } catch (err) {
      await c.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      c.release(broken);
    }
  }
}

type Stored = Extract<IngestResult, { kind: "stored" }>["response"];

function columns(items: FeedbackItem[]) {
  return {
    keys: items.map((i) => i.idempotencyKey),
    kinds: items.map((i) => i.kind),
    domains: items.map((i) => i.domain),
    consents: items.map((i) => i.consent),
    createdAt: items.map((i) => i.createdAt),
    json: items.map((i) => JSON.stringify(i)),
  };
}

async function migrate(pool: pg.Pool): Promise<number> {
  const migrations = loadMigrations("postgres");
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    // Held until COMMIT: a replica starting at the same moment waits here, then finds the
    // migrations recorded and applies none.
    await c.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await c.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
    );
    const done = new Set(
      (await c.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map(
        (r) => r.version,
      ),
    );
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await c.query(m.sql);
      await c.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        m.version,
        m.name,
        Date.now(),
      ]);
    }
    await c.query("COMMIT");
  } catch (err) {
    await c.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    c.release();
  }
  return migrations.at(-1)?.version ?? 0;
}

async function* pages(c: pg.PoolClient, filter: ItemFilter, pageSize: number): AsyncGenerator<StoredItem> {
  let after: Row | null = null;
  for (;;) {
    const { rows }: pg.QueryResult<Row> = await c.query<Row>(itemQuery(filter, after, pageSize));
    for (const r of rows) yield { installId: r.installId, receivedAt: r.receivedAt, json: r.json };
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!;
  }
}
