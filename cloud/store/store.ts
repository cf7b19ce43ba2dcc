/**
 * The one interface the cloud service keeps its state behind, so that the same routes run on
 * SQLite (one process, the default) and on PostgreSQL (several stateless replicas sharing one
 * database). Everything another replica needs (installs, items, answered batches, rate windows)
 * lives here, never in process memory.
 */
import type { BatchResponse, FeedbackItem } from "../../common/feedback-protocol";

export interface StoredItem {
  installId: string;
  receivedAt: number;
  /** The stored JSON, not yet re-validated: export checks it again. */
  json: string;
}

/** Per-install caps enforced inside the ingest transaction (so replicas agree on them). */
export interface InstallLimits {
  /** Most items one install may have stored; null: no cap. */
  maxStoredItems: number | null;
}

export interface IngestRequest {
  installId: string;
  batchId: string;
  /** sha256 of the batch's items as sent: a replay must be the same batch, not just the same id. */
  digest: string;
  /** Valid items, deduplicated within the batch. */
  items: FeedbackItem[];
  at: number;
  limits: InstallLimits;
  /** Builds the full answer from what the store accepted; it is stored and replayed as is. */
  answer(stored: { accepted: string[]; duplicates: string[] }): BatchResponse;
}

export type IngestResult =
  | { kind: "stored"; response: BatchResponse }
  /** The same batch was answered before (by this or another replica): its first answer. */
  | { kind: "replayed"; response: BatchResponse }
  /** Nothing stored: the install would go over maxStoredItems. */
  | { kind: "over-quota"; stored: number; max: number }
  | { kind: "unknown-install" };

/** Items of a read snapshot; `domain: null` is the base-model domain (stored as NULL). */
export interface ItemFilter {
  domain?: string | null;
  /** With `domain`: also items of this domain name stored as NULL (the export's "base"). */
  orNullDomain?: boolean;
  kind?: string;
}

export interface DomainKindCount {
  domain: string | null;
  kind: string;
  n: number;
}

/**
 * A consistent read view (SQLite: one read transaction on its own connection; PostgreSQL:
 * REPEATABLE READ READ ONLY): ingest goes on meanwhile and none of it shows up here.
 */
export interface Snapshot {
  /** Items oldest first, fetched page by page with keyset pagination (constant memory). */
  items(filter: ItemFilter, pageSize?: number): AsyncIterable<StoredItem>;
  domainCounts(): Promise<DomainKindCount[]>;
}

export type RegisterResult = "created" | "rotated" | "taken";

export type Readiness = { ok: true; migrations: number } | { ok: false; reason: string };

export interface CloudStore {
  readonly engine: "sqlite" | "postgres";
  /** Store reachable and every migration applied. */
  ready(): Promise<Readiness>;
  installForTokenHash(tokenHash: string): Promise<string | null>;
  /**
   * Registers a new install id ("created"), or rotates the token of a registered one when
   * `currentTokenHash` is the hash of its current token ("rotated"; the old token stops working
   * at once). A registered id without its current token is "taken" and nothing changes: an id
   * alone proves nothing, so knowing another install's id must not be enough to take it over.
   * A token hash another install already has is "taken" too (tokens are unique).
   */
  registerInstall(
    installId: string,
    tokenHash: string,
    at: number,
    currentTokenHash?: string | null,
  ): Promise<RegisterResult>;
  /**
   * Counts a registration from `source` (the client's address) in the fixed window starting at
   * windowStart; returns how many the window holds now, this one included. Older windows go.
   */
  hitRegisterWindow(source: string, windowStart: number): Promise<number>;
  /** Stores a batch exactly once per (install, batchId, digest), all items or none. */
  ingest(req: IngestRequest): Promise<IngestResult>;
  /**
   * Counts a request in the install's fixed window [windowStart, windowStart + windowMs) and
   * returns how many it holds now, this one included.
   */
  hitRateWindow(installId: string, windowStart: number): Promise<number>;
  /**
   * Deletes every item an install uploaded; returns how many. The deleted text does not stay
   * readable in the store's files: SQLite overwrites it (secure_delete) and checkpoints the WAL
   * away; PostgreSQL vacuums after deletes (see ARCHITECTURE.md, "Deleting feedback").
   */
  deleteItems(installId: string): Promise<number>;
  count(installId?: string): Promise<number>;
  /** Runs `fn` against one consistent snapshot; the snapshot ends when `fn` settles. */
  withSnapshot<T>(fn: (snapshot: Snapshot) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Keyset order of items: unique, so a page boundary never skips or repeats a row. */
export const ITEM_ORDER = ["created_at", "received_at", "install_id", "idempotency_key"] as const;

export const DEFAULT_PAGE_SIZE = 500;

/** Thrown inside an ingest transaction (so that it rolls back) when the cap would be passed. */
export class OverQuota extends Error {
  constructor(
    readonly stored: number,
    readonly max: number,
  ) {
    super(`install over its cap of ${max} stored items`);
  }
}
