import type { Memory } from "../../api";
import type { MemoryStore } from "./memory-store";

/** Reciprocal rank fusion constant (Cormack et al. 2009): damps the weight of the top ranks. */
const RRF_K = 60;
/** Candidates taken from each ranking. */
const CANDIDATES = 20;
/** Most memories put into one prompt. */
export const MAX_MEMORIES = 8;
/** Share of the context the memories may take. */
export const MEMORY_BUDGET_SHARE = 0.15;
/** Most memories embedded per turn when their vectors are not cached yet (bounds the first turn). */
const MAX_NEW_VECTORS = 64;
/** Only this many of the most recently changed active memories are compared by embedding. */
const MAX_EMBEDDED = 500;

export const MEMORY_HEADER = "Things you know about the user:";

/** Merge rankings (best first) by reciprocal rank fusion; ties keep first-seen order. */
export function reciprocalRankFusion<T extends { id: string }>(rankings: readonly (readonly T[])[]): T[] {
  const scores = new Map<string, { item: T; score: number; order: number }>();
  let order = 0;
  for (const ranking of rankings) {
    ranking.forEach((item, rank) => {
      const entry = scores.get(item.id) ?? { item, score: 0, order: order++ };
      entry.score += 1 / (RRF_K + rank + 1);
      scores.set(item.id, entry);
    });
  }
  return [...scores.values()].sort((a, b) => b.score - a.score || a.order - b.order).map((e) => e.item);
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

export interface RetrievalDeps {
  store: MemoryStore;
  embed: (texts: string[]) => Promise<number[][]>;
  /**
   * The embedding of the turn's (trimmed) text, shared with the adapter router, which embeds
   * it too (chat/query-embeddings.ts). Without it the text goes in the same batch as the
   * memories missing a vector.
   */
  embedQuery?: (text: string) => Promise<number[]>;
  /** Which model's embeddings the cache holds (vectors differ between models). */
  modelKey: () => string;
  log: (message: string, err: unknown) => void;
}

/** The query's vector and those of `texts`; the query through embedQuery when it is shared. */
async function embedWithQuery(
  deps: RetrievalDeps,
  text: string,
  texts: string[],
): Promise<[number[] | undefined, number[][]]> {
  if (!deps.embedQuery) {
    const [query, ...rest] = await deps.embed([text, ...texts]);
    return [query, rest];
  }
  return Promise.all([deps.embedQuery(text.trim()), texts.length > 0 ? deps.embed(texts) : []]);
}

/**
 * Active memories ranked for `text` by embedding similarity (vectors cached per model and
 * text hash). Falls back to no ranking when embedding fails (no model, engine restarting).
 */
async function byEmbedding(deps: RetrievalDeps, text: string, active: readonly Memory[]): Promise<Memory[]> {
  try {
    const key = deps.modelKey();
    const pool = active.slice(0, MAX_EMBEDDED);
    const vectors = new Map<string, ArrayLike<number>>();
    const missing: Memory[] = [];
    for (const m of pool) {
      const cached = deps.store.cachedVector(m, key);
      if (cached) vectors.set(m.id, cached);
      else if (missing.length < MAX_NEW_VECTORS) missing.push(m);
    }
    const [query, fresh] = await embedWithQuery(
      deps,
      text,
      missing.map((m) => m.text),
    );
    if (!query) return [];
    missing.forEach((m, i) => {
      const v = fresh[i];
      if (!v) return;
      vectors.set(m.id, v);
      deps.store.cacheVector(m, key, v);
    });
    return pool
      .filter((m) => vectors.has(m.id))
      .map((m) => ({ m, score: cosine(query, vectors.get(m.id)!) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, CANDIDATES)
      .map((e) => e.m);
  } catch (err) {
    deps.log("could not embed for memory retrieval; using full-text matches only", err);
    return [];
  }
}

/**
 * The memories to give the model for a user message: full-text (bm25) and embedding
 * candidates merged by reciprocal rank fusion, then taken in that order while they fit
 * `budgetTokens` (at most MAX_MEMORIES).
 */
export async function retrieveMemories(
  deps: RetrievalDeps,
  text: string,
  budgetTokens: number,
  estimate: (text: string) => number,
): Promise<Memory[]> {
  const active = deps.store.listActive();
  if (active.length === 0) return [];
  const lexical = deps.store.searchActive(text, CANDIDATES);
  const semantic = await byEmbedding(deps, text, active);
  const chosen: Memory[] = [];
  let used = estimate(MEMORY_HEADER);
  for (const memory of reciprocalRankFusion([lexical, semantic])) {
    if (chosen.length >= MAX_MEMORIES) break;
    const cost = estimate(memory.text) + 2; // "- " and the newline
    if (used + cost > budgetTokens) continue;
    used += cost;
    chosen.push(memory);
  }
  return chosen;
}

/**
 * The system-prompt block listing the memories, oldest first whatever their rank: the block
 * sits at the start of the prompt, so the same memories ranked in another order for the next
 * message must give the same text, or the conversation's whole cached history is evaluated again.
 */
export function memoryBlock(memories: readonly Memory[]): string {
  const stable = [...memories].sort(
    (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return [MEMORY_HEADER, ...stable.map((m) => `- ${m.text}`)].join("\n");
}
