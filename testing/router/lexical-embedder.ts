import type { EmbedFn } from "../../electron/core/router/types";

/**
 * A deterministic stand-in for base-model embeddings in unit tests: hashed bag of lowercase
 * words and character trigrams. Similar wording gives similar vectors, like the tiny model's
 * mostly lexical embeddings, without an engine process. Records every call.
 */
export function lexicalEmbedder(dimension = 64): EmbedFn & { calls: string[][] } {
  const calls: string[][] = [];
  const embed = (texts: string[]): Promise<number[][]> => {
    calls.push([...texts]);
    return Promise.resolve(texts.map((text) => embedText(text, dimension)));
  };
  return Object.assign(embed, { calls });
}

function embedText(text: string, dimension: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  const lower = text.toLowerCase();
  const add = (feature: string, weight: number): void => {
    const h = fnv1a(feature);
    // The sign bit spreads features over ± so unrelated texts are near orthogonal.
    vector[h % dimension] = (vector[h % dimension] ?? 0) + (h & 0x80000000 ? -weight : weight);
  };
  for (const word of lower.match(/[a-z0-9#+.]+/g) ?? []) add(`w:${word}`, 2);
  for (let i = 0; i + 3 <= lower.length; i++) add(`t:${lower.slice(i, i + 3)}`, 1);
  // A shared offset on every vector, like real embeddings' common direction (see classifier.ts).
  vector[0] = (vector[0] ?? 0) + 10;
  return vector;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
