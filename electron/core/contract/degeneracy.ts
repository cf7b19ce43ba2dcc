/**
 * Degeneracy: answers to different questions that are identical or near-identical fail,
 * whatever else they pass. A specialist that answers every prompt with one fixed sentence (or
 * one fixed function, plan, tool call or UI) is caught here even where each answer alone has
 * the right format.
 *
 * Two cases are compared when they share a tag and ask different questions: different
 * references when both have one (two wordings of one question share the reference, and may
 * rightly get the same answer), else different prompts. Their answers (lower case, spaces
 * collapsed) are degenerate when identical, or when the edit distance is at most a tenth of the
 * longer one (at least 2) and under half the distance between the two references — so two
 * right answers that differ only where their references differ (a Button labelled "Send" and
 * one labelled "Save") are not near-identical.
 */

export interface AnsweredCase {
  id: string;
  tags: readonly string[];
  /** The question (the last user turn). */
  prompt: string;
  reference?: string;
  output: string;
  /** False: the case takes no part (e.g. router cases, whose answers are cut short by design). */
  distinct?: boolean;
  /** The case did not run: nothing to compare. */
  error?: boolean;
}

const normalized = (text: string): string => text.toLowerCase().replace(/\s+/g, " ").trim();

/** Levenshtein distance when it is at most `max`, else `max + 1` (banded: O(n·max)). */
export function boundedDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a === b) return 0;
  const n = b.length;
  let prev = new Array<number>(n + 1);
  let cur = new Array<number>(n + 1);
  for (let j = 0; j <= n; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const lo = Math.max(1, i - max);
    const hi = Math.min(n, i + max);
    cur.fill(max + 1);
    cur[0] = i;
    let best = i <= max ? i : max + 1;
    for (let j = lo; j <= hi; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const v = Math.min(prev[j - 1]! + cost, (prev[j] ?? max + 1) + 1, cur[j - 1]! + 1);
      cur[j] = v;
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    [prev, cur] = [cur, prev];
  }
  return Math.min(prev[n]!, max + 1);
}

/** How close two answers may be before they count as the same answer. */
function nearLimit(a: string, b: string): number {
  return Math.max(2, Math.floor(0.1 * Math.max(a.length, b.length)));
}

/**
 * The degenerate cases of a set of answers: id → a sentence naming the cases whose answers are
 * the same or nearly (empty map when none).
 */
export function findDegenerate(cases: readonly AnsweredCase[]): Map<string, string> {
  const items = cases
    .filter((c) => c.distinct !== false && !c.error && normalized(c.output) !== "")
    .map((c) => ({
      c,
      out: normalized(c.output),
      ref: c.reference === undefined ? null : normalized(c.reference),
      prompt: normalized(c.prompt),
    }));
  const same = new Map<string, { identical: Set<string>; near: Set<string> }>();
  const note = (id: string, other: string, identical: boolean): void => {
    let s = same.get(id);
    if (!s) same.set(id, (s = { identical: new Set(), near: new Set() }));
    (identical ? s.identical : s.near).add(other);
  };
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i]!;
      const b = items[j]!;
      if (!a.c.tags.some((t) => b.c.tags.includes(t))) continue;
      const bothRefs = a.ref !== null && b.ref !== null;
      if (bothRefs ? a.ref === b.ref : a.prompt === b.prompt) continue;
      if (a.out === b.out) {
        note(a.c.id, b.c.id, true);
        note(b.c.id, a.c.id, true);
        continue;
      }
      const limit = nearLimit(a.out, b.out);
      const d = boundedDistance(a.out, b.out, limit);
      if (d > limit) continue;
      if (bothRefs && d * 2 >= boundedDistance(a.ref!, b.ref!, 2 * limit + 1)) continue;
      note(a.c.id, b.c.id, false);
      note(b.c.id, a.c.id, false);
    }
  }
  const out = new Map<string, string>();
  const list = (ids: Set<string>): string => {
    const all = [...ids];
    return all.length > 5 ? `${all.slice(0, 5).join(", ")} and ${all.length - 5} more` : all.join(", ");
  };
  for (const [id, s] of same) {
    const parts: string[] = [];
    if (s.identical.size > 0) parts.push(`the same answer as ${list(s.identical)}`);
    if (s.near.size > 0) parts.push(`a near-identical answer to ${list(s.near)}`);
    out.set(id, `degenerate: ${parts.join("; ")} (different questions)`);
  }
  return out;
}
