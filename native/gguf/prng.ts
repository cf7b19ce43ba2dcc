/**
 * Deterministic pseudo-random numbers for generated weights. Each tensor gets its own stream,
 * seeded from the model seed and the tensor's name, so tensors can be generated lazily in any
 * order and still give the same bytes.
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

/** mulberry32: tiny, fast and good enough for weights that only need to look random. */
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

/** `n` values, uniform with mean 0 and standard deviation `std`. */
export function randomValues(seed: string, n: number, std: number): Float32Array {
  const next = mulberry32(hashSeed(seed));
  const out = new Float32Array(n);
  // Uniform on [-√3, √3) has unit variance.
  const scale = std * Math.sqrt(3) * 2;
  for (let i = 0; i < n; i++) out[i] = (next() - 0.5) * scale;
  return out;
}
