/**
 * The routing head's features: ONE function from (text, the base's embedding of it) to a sparse
 * feature vector, used by the cycle when it trains a head (scripts/cycle/router-cycle.ts) and
 * by the app when it routes a turn (adapter-router.ts), so training and serving cannot drift.
 *
 * Layout (`featureCount(spec)` columns in all):
 *   [0, embeddingDim)                 the embedding, centred on the head's training mean and
 *                                     scaled to length `embeddingScale` (a zero vector stays 0);
 *   [embeddingDim, + 2^hashBits)      hashed lexical features: lower-cased word unigrams and
 *                                     bigrams ("w:", "b:") and character n-grams of each word
 *                                     with boundary marks ("c:" + "^cod", "ode$"…), counted, then
 *                                     each of the two groups scaled to length `lexicalScale`.
 * Hashing is 32-bit FNV-1a over the UTF-16 code units of prefix + gram, modulo 2^hashBits:
 * deterministic, no vocabulary to ship. Collisions only share a weight.
 */
import { z } from "zod";

/** Bumped when the extraction below changes: a head made for another version is refused. */
export const FEATURES_VERSION = 1;

export const RoutingFeatureSpec = z
  .object({
    version: z.literal(FEATURES_VERSION),
    /** The base's embedding length (the demo base: 128). */
    embeddingDim: z.number().int().min(1).max(65_536),
    /** log2 of the hashed lexical columns. */
    hashBits: z.number().int().min(4).max(20),
    /** Character n-gram lengths taken inside each word (with ^ and $ marks). */
    charNgrams: z.array(z.number().int().min(2).max(6)).min(0).max(4),
    embeddingScale: z.number().min(0).max(100),
    lexicalScale: z.number().min(0).max(100),
  })
  .strict();
export type RoutingFeatureSpec = z.infer<typeof RoutingFeatureSpec>;

/**
 * Chosen on a validation set that is neither the router suite nor the new wordings
 * (testing/router/held-out-prompts.ts, 20 prompts, demo base): over l2 {1e-4, 1e-3, 1e-2} ×
 * embeddingScale {0.5, 1, 2} × charNgrams {34, 234, 345}, this one routed 20/20 (the first
 * guess, l2 1e-3 / 1 / 34: 16/20); bench/README.md, "The learned router".
 */
export const DEFAULT_FEATURE_SPEC: Omit<RoutingFeatureSpec, "embeddingDim"> = {
  version: FEATURES_VERSION,
  hashBits: 12,
  charNgrams: [2, 3, 4],
  embeddingScale: 0.5,
  lexicalScale: 1,
};

/** A sparse row: column indices (ascending, distinct) and their values. */
export interface SparseFeatures {
  indices: Int32Array;
  values: Float64Array;
}

export function featureCount(spec: RoutingFeatureSpec): number {
  return spec.embeddingDim + 2 ** spec.hashBits;
}

/** Lower-cased words: letters and digits (any script), inner apostrophes kept. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu) ?? [];
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The features of `text` with `embedding` (the base's vector of the same trimmed text) under
 * `spec`, centred on `embeddingMean`. Throws for a vector of another length or a non-finite one.
 */
export function routingFeatures(
  spec: RoutingFeatureSpec,
  embeddingMean: ArrayLike<number>,
  text: string,
  embedding: ArrayLike<number>,
): SparseFeatures {
  const dim = spec.embeddingDim;
  if (embedding.length !== dim)
    throw new Error(`the embedding has ${embedding.length} dimensions, the routing head ${dim}`);
  if (embeddingMean.length !== dim)
    throw new Error(`the embedding mean has ${embeddingMean.length} dimensions, the routing head ${dim}`);
  const dense = new Float64Array(dim);
  let sum = 0;
  for (let i = 0; i < dim; i++) {
    const value = (embedding[i] ?? 0) - (embeddingMean[i] ?? 0);
    if (!Number.isFinite(value)) throw new Error("the embedding contains a non-finite value");
    dense[i] = value;
    sum += value * value;
  }
  const length = Math.sqrt(sum);
  const scale = length > 1e-12 ? spec.embeddingScale / length : 0;

  const mask = 2 ** spec.hashBits - 1;
  const groups = [new Map<number, number>(), new Map<number, number>()];
  const add = (group: Map<number, number>, gram: string): void => {
    const column = dim + (fnv1a(gram) & mask);
    group.set(column, (group.get(column) ?? 0) + 1);
  };
  const ws = words(text);
  ws.forEach((w, i) => {
    add(groups[0]!, `w:${w}`);
    if (i + 1 < ws.length) add(groups[0]!, `b:${w} ${ws[i + 1]}`);
    const marked = `^${w}$`;
    for (const n of spec.charNgrams)
      for (let s = 0; s + n <= marked.length; s++) add(groups[1]!, `c:${marked.slice(s, s + n)}`);
  });

  const lexical = new Map<number, number>();
  for (const group of groups) {
    let squares = 0;
    for (const v of group.values()) squares += v * v;
    if (squares === 0) continue;
    const k = spec.lexicalScale / Math.sqrt(squares);
    for (const [column, v] of group) lexical.set(column, (lexical.get(column) ?? 0) + v * k);
  }
  const columns = [...lexical.keys()].sort((a, b) => a - b);
  const indices = new Int32Array(dim + columns.length);
  const values = new Float64Array(dim + columns.length);
  for (let i = 0; i < dim; i++) {
    indices[i] = i;
    values[i] = (dense[i] ?? 0) * scale;
  }
  columns.forEach((column, j) => {
    indices[dim + j] = column;
    values[dim + j] = lexical.get(column) ?? 0;
  });
  return { indices, values };
}

/** The mean of `vectors` (all of length `dim`); zeros for none. */
export function meanVector(vectors: readonly ArrayLike<number>[], dim: number): Float64Array {
  const out = new Float64Array(dim);
  for (const v of vectors) for (let i = 0; i < dim; i++) out[i] = (out[i] ?? 0) + (v[i] ?? 0);
  if (vectors.length > 0) for (let i = 0; i < dim; i++) out[i] = (out[i] ?? 0) / vectors.length;
  return out;
}
