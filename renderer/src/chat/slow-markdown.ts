/**
 * The time bound behind the limits: an answer that still took longer than SLOW_PARSE_MS to
 * format (a shape the limits do not foresee, a slow machine) is remembered in this browser and
 * shown as plain text from then on, so a reload that reopens its conversation is not slow again.
 * Keyed by a fingerprint of the text (length and FNV-1a hash), never the text itself.
 */

/** Formatting slower than this (twice the frame budget) marks an answer as slow. */
export const SLOW_PARSE_MS = 1_000;
const KEY = "macaron.slow-markdown.v1";
const MAX_REMEMBERED = 200;

type Store = Pick<Storage, "getItem" | "setItem">;

function storage(): Store | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null; // storage disabled: nothing is remembered
  }
}

/** Length and 32-bit FNV-1a of the text: linear, no allocation per character. */
export function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `${text.length}:${(hash >>> 0).toString(36)}`;
}

function read(store: Store): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(store.getItem(KEY) ?? "{}");
    return parsed && typeof parsed === "object" ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** How long `text` took to format when it was found slow, or null. */
export function slowBefore(text: string, store: Store | null = storage()): number | null {
  if (!store || text.length === 0) return null;
  const ms = read(store)[fingerprint(text)];
  return typeof ms === "number" ? ms : null;
}

/** Records that `text` took `ms` to format, if that is past SLOW_PARSE_MS. */
export function noteParseTime(text: string, ms: number, store: Store | null = storage()): void {
  if (!store || ms <= SLOW_PARSE_MS || text.length === 0) return;
  const entries = Object.entries(read(store)).slice(-(MAX_REMEMBERED - 1));
  entries.push([fingerprint(text), Math.round(ms)]);
  try {
    store.setItem(KEY, JSON.stringify(Object.fromEntries(entries)));
  } catch {
    // Storage full or disabled: the limits still hold, only the memory of this answer is lost.
  }
}
