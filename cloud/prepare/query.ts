/**
 * The query string of the export routes, checked: a bad value is a 400 with its reason, never
 * a silently different dataset.
 */
import type { ExportType } from "./candidates";
import { MAX_BYTES_PER_TOKEN, MIN_BYTES_PER_TOKEN } from "./length";
import type { Split } from "./split";

export interface ExportQuery {
  type: ExportType;
  split: Split;
  maxTokens?: number;
  heldoutShare?: number;
  bytesPerToken?: number;
}

export type RawQuery = Partial<Record<keyof ExportQuery, string | string[]>>;

/** Parses `type`, `split`, `maxTokens`, `heldoutShare`, `bytesPerToken`; absent = default. */
export function parseExportQuery(
  q: RawQuery,
): { ok: true; query: ExportQuery } | { ok: false; reason: string } {
  const one = (name: keyof ExportQuery): string | undefined => {
    const v = q[name];
    return Array.isArray(v) ? v[v.length - 1] : v;
  };
  const type = one("type") ?? "sft";
  if (type !== "sft" && type !== "preference" && type !== "groups")
    return { ok: false, reason: 'type must be "sft", "preference" or "groups"' };
  const split = one("split") ?? "train";
  if (split !== "train" && split !== "heldout")
    return { ok: false, reason: 'split must be "train" or "heldout"' };
  const query: ExportQuery = { type, split };
  const maxTokens = number(one("maxTokens"));
  if (maxTokens !== undefined) {
    if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 10_000_000)
      return { ok: false, reason: "maxTokens must be an integer from 1 to 10000000" };
    query.maxTokens = maxTokens;
  }
  const share = number(one("heldoutShare"));
  if (share !== undefined) {
    if (!(share >= 0 && share <= 1))
      return { ok: false, reason: "heldoutShare must be a number from 0 to 1" };
    query.heldoutShare = share;
  }
  const bpt = number(one("bytesPerToken"));
  if (bpt !== undefined) {
    if (!(bpt >= MIN_BYTES_PER_TOKEN && bpt <= MAX_BYTES_PER_TOKEN))
      return {
        ok: false,
        reason: `bytesPerToken must be a number from ${MIN_BYTES_PER_TOKEN} to ${MAX_BYTES_PER_TOKEN}`,
      };
    query.bytesPerToken = bpt;
  }
  return { ok: true, query };
}

/** A number, NaN for text that is not one, undefined when absent. */
function number(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  return v.trim() === "" ? NaN : Number(v);
}
