/**
 * Checks of a batch before it is stored. The envelope (protocol, installId, batchId, item
 * count) must be right or the whole batch is refused with 400; a bad ITEM is only rejected by
 * itself (with its reason) so one malformed item never costs the user the other 199.
 */
import { z } from "zod";
import { BUILTIN_DOMAINS, domainNameProblem, type DomainCheck } from "../common/domains";
import { BatchRequest, FeedbackItem, LIMITS, TEXT_FIELDS } from "../common/feedback-protocol";

/**
 * Adapter domains the service trains without being told; an item about another one is rejected
 * unless the service was given it (`--domains`) or an adapter of that domain was published.
 */
export const DEFAULT_DOMAINS = BUILTIN_DOMAINS;

/**
 * Keys and batch ids are stored as plain text columns: PostgreSQL's text cannot hold NUL (it
 * answered 500 where SQLite stored it), so both engines refuse control characters up front.
 */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** The envelope of a batch, items not yet checked one by one. */
const Envelope = BatchRequest.extend({ items: z.array(z.unknown()).min(1).max(LIMITS.maxItemsPerBatch) });

export type ItemCheck = { ok: true; item: FeedbackItem } | { ok: false; key: string; reason: string };

export type EnvelopeCheck =
  { ok: true; installId: string; batchId: string; items: ItemCheck[] } | { ok: false; reason: string };

/** True when the item carries any user text. */
export function hasText(item: FeedbackItem): boolean {
  return TEXT_FIELDS.some((f) => {
    const v = item[f];
    return v !== null && v !== undefined && (typeof v !== "string" || v.length > 0);
  });
}

/** Validates the envelope, then each item; returns a reason for a 400 or the per-item results. */
export function checkBatch(body: unknown, domains: DomainCheck): EnvelopeCheck {
  const env = Envelope.safeParse(body);
  if (!env.success) return { ok: false, reason: zodReason(env.error) };
  if (hasControl(env.data.batchId))
    return { ok: false, reason: "batchId: must not contain NUL or other control characters" };
  const items: ItemCheck[] = [];
  for (const [i, raw] of env.data.items.entries()) {
    const key = (raw as { idempotencyKey?: unknown } | null)?.idempotencyKey;
    // Without a usable key the client could not be told which item was refused.
    if (typeof key !== "string" || key.length < 8 || key.length > 128)
      return { ok: false, reason: `items[${i}].idempotencyKey: must be a string of 8..128 characters` };
    if (hasControl(key))
      return {
        ok: false,
        reason: `items[${i}].idempotencyKey: must not contain NUL or other control characters`,
      };
    items.push(checkItem(raw, key, domains));
  }
  return { ok: true, installId: env.data.installId, batchId: env.data.batchId, items };
}

function checkItem(raw: unknown, key: string, domains: DomainCheck): ItemCheck {
  const parsed = FeedbackItem.safeParse(raw);
  if (!parsed.success) return { ok: false, key, reason: `malformed: ${zodReason(parsed.error)}` };
  const item = parsed.data;
  if (item.domain !== null) {
    // The rule publishing and the export paths apply (common/domains.ts): an item about a domain
    // whose name no export can take is refused here, not stored for nothing.
    const problem = domainNameProblem(item.domain);
    if (problem !== null) return { ok: false, key, reason: problem };
    if (!domains.has(item.domain)) return { ok: false, key, reason: `unknown domain "${item.domain}"` };
  }
  if (item.consent === "ratings" && hasText(item))
    return { ok: false, key, reason: 'text fields present with consent "ratings"' };
  if (item.kind === "rating" && !item.rating) return { ok: false, key, reason: "a rating item needs rating" };
  if (item.kind === "correction" && item.consent === "ratings_and_text" && !item.correction)
    return { ok: false, key, reason: "a correction item needs correction" };
  if (item.kind === "trajectory" && !item.toolOutcome)
    return { ok: false, key, reason: "a trajectory item needs toolOutcome" };
  if (item.kind === "trajectory" && item.consent === "ratings_and_text" && !item.trajectory)
    return { ok: false, key, reason: "a trajectory item with text needs trajectory" };
  if (item.kind === "follow_up" && typeof item.interaction?.corrected !== "boolean")
    return { ok: false, key, reason: "a follow_up item needs interaction.corrected" };
  return { ok: true, item };
}

/** The first few zod issues as `path: message`, short enough for a response body. */
export function zodReason(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? i.path.join(".") : "body"}: ${i.message}`)
    .join("; ");
}
