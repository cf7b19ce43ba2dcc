/**
 * The cloud service's SQLite file: registered installs (only a hash of each token) and the
 * feedback items they uploaded, one row per (install, idempotency key).
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { FeedbackItem } from "../common/feedback-protocol";

export const CLOUD_DB_FILE = "cloud.db";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS installs (
  install_id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  rotated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
  install_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  domain TEXT,
  consent TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  batch_id TEXT NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY (install_id, idempotency_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_domain ON items (domain, kind);
`;

export interface StoredItem {
  installId: string;
  receivedAt: number;
  /** The stored JSON, not yet re-validated: export checks it again. */
  json: string;
}

/** The ingestion database. One instance per service; close() when the service stops. */
export class FeedbackStore {
  readonly db: Database;
  private readonly insertItem;
  private readonly insertBatch;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.db = new BetterSqlite3(join(dataDir, CLOUD_DB_FILE));
    this.db.pragma("journal_mode = WAL");
    // A 200 answer promises the batch is stored: it must survive a crash right after.
    this.db.pragma("synchronous = FULL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    this.insertItem = this.db.prepare(
      `INSERT OR IGNORE INTO items (install_id, idempotency_key, kind, domain, consent, created_at, received_at, batch_id, json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertBatch = this.db.transaction(
      (installId: string, batchId: string, items: FeedbackItem[], at: number) => {
        const accepted: string[] = [];
        const duplicates: string[] = [];
        for (const item of items) {
          const r = this.insertItem.run(
            installId,
            item.idempotencyKey,
            item.kind,
            item.domain,
            item.consent,
            item.createdAt,
            at,
            batchId,
            JSON.stringify(item),
          );
          (r.changes === 1 ? accepted : duplicates).push(item.idempotencyKey);
        }
        return { accepted, duplicates };
      },
    );
  }

  /** Token hash of an install, or null when it never registered. */
  tokenHash(installId: string): string | null {
    const row = this.db.prepare("SELECT token_hash FROM installs WHERE install_id = ?").get(installId) as
      { token_hash: string } | undefined;
    return row?.token_hash ?? null;
  }

  /** The install a token hash belongs to. */
  installForTokenHash(tokenHash: string): string | null {
    const row = this.db.prepare("SELECT install_id FROM installs WHERE token_hash = ?").get(tokenHash) as
      { install_id: string } | undefined;
    return row?.install_id ?? null;
  }

  /** Registers an install or rotates its token (the old one stops working at once). */
  saveInstall(installId: string, tokenHash: string, at: number): void {
    this.db
      .prepare(
        `INSERT INTO installs (install_id, token_hash, created_at, rotated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (install_id) DO UPDATE SET token_hash = excluded.token_hash, rotated_at = excluded.rotated_at`,
      )
      .run(installId, tokenHash, at, at);
  }

  /**
   * Stores a batch's valid items in ONE transaction: either all of them are stored or none
   * (then the client retries the whole batch). Keys stored before come back as duplicates.
   */
  storeBatch(installId: string, batchId: string, items: FeedbackItem[], at: number) {
    return this.insertBatch(installId, batchId, items, at);
  }

  /** Deletes every item an install uploaded; returns how many. */
  deleteInstallItems(installId: string): number {
    return this.db.prepare("DELETE FROM items WHERE install_id = ?").run(installId).changes;
  }

  /** Items of a domain (all kinds), oldest first, as stored. */
  itemsForDomain(domain: string): StoredItem[] {
    return this.db
      .prepare(
        "SELECT install_id AS installId, received_at AS receivedAt, json FROM items WHERE domain = ? ORDER BY created_at, received_at",
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

  close(): void {
    this.db.close();
  }
}
