import type { FeedbackItem } from "../../../common/feedback-protocol";

export interface OutboxEntry {
  key: string;
  item: FeedbackItem;
  attempts: number;
  createdAt: number;
}

/**
 * The queue of redacted items waiting for upload, in SQLite (written in the same transaction as
 * the feedback event). The sync client reads batches from it and reports what the server did.
 */
export interface Outbox {
  /** Oldest items first, up to the caps (the JSON of the items must stay under maxBytes). */
  peekBatch(maxItems: number, maxBytes: number): OutboxEntry[];
  /** Accepted or duplicate at the server: remove from the queue. */
  markDelivered(keys: string[], at: number): void;
  /** Permanently refused: leave the queue, keep it visible with the reason (never retried). */
  markRejected(rejections: { key: string; reason: string }[], at: number): void;
  /** A transient failure: count the attempt and remember the last error. */
  recordAttempt(keys: string[], error: string, at: number): void;
  count(): number;
  /** Remove everything queued (consent revoked); returns how many were removed. */
  purge(): number;
}
