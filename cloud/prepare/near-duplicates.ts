/**
 * Near-duplicate folding: character shingles of the normalized text, Jaccard similarity, and
 * a greedy pass in input order — an example is folded (dropped, counted) when it is at least
 * `threshold` similar to one already kept. Exact, not sampled (no MinHash): candidate pairs
 * come from prefix filtering (AllPairs, Bayardo et al. 2007), which never misses a pair over
 * the threshold, and every candidate pair is verified by counting its common shingles.
 */

/** Shingle length in characters: long enough that a shared short word is no evidence. */
export const SHINGLE_SIZE = 5;
/** Jaccard similarity at which two examples count as one. */
export const NEAR_DUPLICATE_THRESHOLD = 0.8;

/** The distinct character shingles of a (normalized) text; a shorter text is its own shingle. */
export function shingles(text: string, size = SHINGLE_SIZE): Set<string> {
  // Offsets of code points, so a shingle never splits a surrogate pair.
  const starts: number[] = [];
  for (let i = 0; i < text.length; i++) {
    starts.push(i);
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) i++;
  }
  const out = new Set<string>();
  if (starts.length <= size) {
    if (text.length > 0) out.add(text);
    return out;
  }
  starts.push(text.length);
  for (let i = 0; i + size < starts.length; i++) out.add(text.slice(starts[i], starts[i + size]));
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
 * with every kept one (the property test checks it); the filters only skip pairs that cannot
 * reach the threshold:
 * - prefix: under one global order (rarest shingle first), two sets with Jaccard >= t share a
 *   shingle among their first |x| - ceil(t·|x|) + 1;
 * - size: |y| must lie in [t·|x|, |x|/t];
 * - position (PPJoin, Xiao et al. 2008): the overlap found so far plus what is left after the
 *   matching positions must still reach the overlap the threshold needs.
 */
export function foldNearDuplicates(
  texts: readonly string[],
  threshold = NEAR_DUPLICATE_THRESHOLD,
  size = SHINGLE_SIZE,
): FoldResult {
  const sets = rankedSets(texts, size);
  const { prefixLength, needed, sizeFits } = foldBounds(threshold);
  const postings = new Map<number, { doc: number; pos: number }[]>();
  const kept: number[] = [];
  const folded: FoldResult["folded"] = [];
  let firstEmpty: number | undefined;
  for (const [index, x] of sets.entries()) {
    const into: number[] = [];
    if (x.length === 0) {
      // Empty texts are all one text: every one after the first is folded into it.
      if (firstEmpty === undefined) firstEmpty = index;
      else into.push(firstEmpty);
    }
    const prefix = x.length === 0 ? 0 : prefixLength(x.length);
    const overlap = new Map<number, number>();
    for (let i = 0; i < prefix; i++)
      for (const { doc, pos } of postings.get(x[i]!) ?? []) {
        const y = sets[doc]!;
        if (!sizeFits(x.length, y.length)) continue;
        const found = overlap.get(doc) ?? 0;
        if (found < 0) continue;
        const bound = found + 1 + Math.min(x.length - i - 1, y.length - pos - 1);
        overlap.set(doc, bound >= needed(x.length, y.length) ? found + 1 : -1);
      }
    for (const [doc, found] of overlap)
      if (found > 0 && overlapAtLeast(x, sets[doc]!, needed(x.length, sets[doc]!.length))) into.push(doc);
    if (into.length > 0) {
      folded.push({ index, into: into.sort((a, b) => a - b) });
      continue;
    }
    kept.push(index);
    for (let i = 0; i < prefix; i++) {
      const list = postings.get(x[i]!);
      if (list) list.push({ doc: index, pos: i });
      else postings.set(x[i]!, [{ doc: index, pos: i }]);
    }
  }
  return { kept, folded };
}

/**
 * The bounds of the fold at `threshold`, shared with the streaming fold (prepare/stream.ts) so
 * both call the same pairs similar. A small tolerance on every bound errs towards verifying a
 * pair, never towards missing one.
 */
export function foldBounds(threshold: number) {
  const eps = 1e-9;
  return {
    /** How many of a set's first shingles (in the global order) a similar set must share one of. */
    prefixLength: (n: number) => n - Math.ceil(threshold * n - eps) + 1,
    /** Common shingles two sets of these sizes need to be similar. */
    needed: (a: number, b: number) => Math.ceil((threshold / (1 + threshold)) * (a + b) - eps),
    /** Whether a set of size y can be similar to one of size x. */
    sizeFits: (x: number, y: number) => !(y < threshold * x - eps || y * threshold > x + eps),
  };
}

/** Each text's shingles as ranks sorted ascending; rank 0 is the rarest shingle of all texts. */
function rankedSets(texts: readonly string[], size: number): Int32Array[] {
  const ids = new Map<string, number>();
  const frequency: number[] = [];
  const sets = texts.map((t) => {
    const set = shingles(t, size);
    const out = new Int32Array(set.size);
    let k = 0;
    for (const s of set) {
      let id = ids.get(s);
      if (id === undefined) {
        id = frequency.length;
        ids.set(s, id);
        frequency.push(0);
      }
      frequency[id]!++;
      out[k++] = id;
    }
    return out;
  });
  // Stable sort: equally frequent shingles keep first-seen order, so the ranks are deterministic.
  const byRarity = frequency.map((_, id) => id).sort((a, b) => frequency[a]! - frequency[b]!);
  const rank = new Int32Array(frequency.length);
  byRarity.forEach((id, r) => (rank[id] = r));
  return sets.map((set) => set.map((id) => rank[id]!).sort());
}

/** Whether two sorted rank lists share at least `needed` elements (merge, stops early). */
function overlapAtLeast(x: Int32Array, y: Int32Array, needed: number): boolean {
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < x.length && j < y.length) {
    if (common + Math.min(x.length - i, y.length - j) < needed) return false;
    if (x[i] === y[j]) {
      common++;
      i++;
      j++;
    } else if (x[i]! < y[j]!) i++;
    else j++;
  }
  return common >= needed;
}
