/**
 * Near-duplicate folding: character shingles of the normalized text, Jaccard similarity, and
 * a greedy pass in input order — an example is folded (dropped, counted) when it is at least
 * `threshold` similar to one already kept. Exact, not sampled: candidate pairs come from
 * prefix filtering (AllPairs, Bayardo et al. 2007), which never misses a pair over the
 * threshold, and every candidate pair is verified with the real Jaccard.
 */

/** Shingle length in characters: long enough that a shared short word is no evidence. */
export const SHINGLE_SIZE = 5;
/** Jaccard similarity at which two examples count as one. */
export const NEAR_DUPLICATE_THRESHOLD = 0.8;

/** The distinct character shingles of a (normalized) text; a shorter text is its own shingle. */
export function shingles(text: string, size = SHINGLE_SIZE): Set<string> {
  const chars = Array.from(text);
  const out = new Set<string>();
  if (chars.length <= size) {
    if (chars.length > 0) out.add(chars.join(""));
    return out;
  }
  for (let i = 0; i + size <= chars.length; i++) out.add(chars.slice(i, i + size).join(""));
  return out;
}

/** |a ∩ b| / |a ∪ b|; two empty sets are identical (1). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let common = 0;
  for (const s of small) if (large.has(s)) common++;
  return common / (a.size + b.size - common);
}

export interface FoldResult {
  /** Indexes of the kept texts, in input order. */
  kept: number[];
  /** For each folded text: its index and the indexes of every kept text it is similar to. */
  folded: { index: number; into: number[] }[];
}

/**
 * Greedy folding of `texts` (already normalized) in order. Same answer as comparing each text
 * with every kept one; prefix filtering only skips pairs that cannot reach the threshold.
 */
export function foldNearDuplicates(
  texts: readonly string[],
  threshold = NEAR_DUPLICATE_THRESHOLD,
  size = SHINGLE_SIZE,
): FoldResult {
  const sets = texts.map((t) => shingles(t, size));
  // Rare shingles first: prefixes made of rare shingles share few postings.
  const frequency = new Map<string, number>();
  for (const set of sets) for (const s of set) frequency.set(s, (frequency.get(s) ?? 0) + 1);
  const order = (a: string, b: string) =>
    frequency.get(a)! - frequency.get(b)! || (a < b ? -1 : a > b ? 1 : 0);
  // Two sets with Jaccard >= t share at least ceil(t·|x|) shingles, so under one global order
  // their first |x| - ceil(t·|x|) + 1 shingles must meet.
  const prefixLength = (n: number) => n - Math.ceil(threshold * n - 1e-9) + 1;
  const postings = new Map<string, number[]>();
  const kept: number[] = [];
  const folded: FoldResult["folded"] = [];
  for (const [index, set] of sets.entries()) {
    const sorted = [...set].sort(order);
    const prefix = sorted.slice(0, prefixLength(sorted.length));
    const seen = new Set<number>();
    const into: number[] = [];
    for (const s of prefix)
      for (const k of postings.get(s) ?? []) {
        if (seen.has(k)) continue;
        seen.add(k);
        const other = sets[k]!;
        // Size filter: |y| must lie in [t·|x|, |x|/t] for the Jaccard to reach t.
        if (other.size < threshold * set.size - 1e-9 || other.size * threshold > set.size + 1e-9) continue;
        if (jaccard(set, other) >= threshold) into.push(k);
      }
    if (sorted.length === 0) {
      // Empty texts are all the same text: fold every one after the first.
      const first = kept.find((k) => sets[k]!.size === 0);
      if (first !== undefined) into.push(first);
    }
    if (into.length > 0) {
      folded.push({ index, into: into.sort((a, b) => a - b) });
      continue;
    }
    kept.push(index);
    for (const s of prefix) {
      const list = postings.get(s);
      if (list) list.push(index);
      else postings.set(s, [index]);
    }
  }
  return { kept, folded };
}
