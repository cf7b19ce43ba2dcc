/**
 * Deterministic pseudo-random numbers, the one PRNG of the tree: the generated GGUF weights
 * (native/gguf/prng.ts), the redaction corpus, the training seed data and the benchmarks all
 * draw from it, so the same seed gives the same values everywhere and on every run.
 */

/** FNV-1a over the UTF-16 code units of `text`; a 32-bit seed. */
export function hashSeed(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: tiny, fast and good enough for values that only need to look random; in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
