/**
 * What an export reads from the service's SQLite store: the items of the domain, every rating
 * (a thumbs-down in any domain keeps that answer out of every dataset) and the item counts of
 * every domain. Answers of the base model alone (no adapter applied) arrive with domain null:
 * they are the "base" domain here, counted with the others and exportable as base.jsonl.
 */
import type { FeedbackStore, StoredItem } from "../store";

/** The name under which items without an adapter domain (base-model answers) are exported. */
export const BASE_DOMAIN = "base";

/** Item counts of one domain, by kind. */
export interface DomainCount {
  items: number;
  byKind: Record<string, number>;
}

export interface ExportSource {
  /** Items of the domain, oldest first. */
  items: StoredItem[];
  /** Rating items of every domain (thumbs-down lookup). */
  ratings: StoredItem[];
  /** Every stored domain's counts; null stored as BASE_DOMAIN. */
  domains: Record<string, DomainCount>;
}

const COLUMNS = "install_id AS installId, received_at AS receivedAt, json";

/** Reads one export's inputs in one read transaction (a consistent snapshot). */
export function readExportSource(store: FeedbackStore, domain: string): ExportSource {
  const db = store.db;
  return db.transaction((): ExportSource => {
    const where = domain === BASE_DOMAIN ? "(domain = ? OR domain IS NULL)" : "domain = ?";
    const items = db
      .prepare(`SELECT ${COLUMNS} FROM items WHERE ${where} ORDER BY created_at, received_at`)
      .all(domain) as StoredItem[];
    const ratings = db
      .prepare(`SELECT ${COLUMNS} FROM items WHERE kind = 'rating' ORDER BY created_at, received_at`)
      .all() as StoredItem[];
    const rows = db
      .prepare("SELECT domain, kind, COUNT(*) AS n FROM items GROUP BY domain, kind ORDER BY domain, kind")
      .all() as { domain: string | null; kind: string; n: number }[];
    const domains: Record<string, DomainCount> = {};
    for (const r of rows) {
      const name = r.domain ?? BASE_DOMAIN;
      const d = (domains[name] ??= { items: 0, byKind: {} });
      d.items += r.n;
      d.byKind[r.kind] = (d.byKind[r.kind] ?? 0) + r.n;
    }
    return { items, ratings, domains };
  })();
}
