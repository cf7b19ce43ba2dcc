/**
 * The shape of what an export reads (cloud/export.ts reads it from a store snapshot of either
 * engine): the items of the domain, every rating (a thumbs-down in any domain keeps that answer
 * out of every dataset) and the item counts of every domain. Answers of the base model alone (no
 * adapter applied) arrive with domain null: they are the "base" domain here, counted with the
 * others and exportable as base.jsonl.
 */
import type { StoredItem } from "../store";

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
