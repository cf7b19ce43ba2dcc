/**
 * Deterministic pseudo-random numbers for generated weights. Each tensor gets its own stream,
 * seeded from the model seed and the tensor's name, so tensors can be generated lazily in any
 * order and still give the same bytes.
 */
import { hashSeed, mulberry32 } from "../../common/prng";

/** `n` values, uniform with mean 0 and standard deviation `std`. */
export function randomValues(seed: string, n: number, std: number): Float32Array {
  const next = mulberry32(hashSeed(seed));
  const out = new Float32Array(n);
  // Uniform on [-√3, √3) has unit variance.
  const scale = std * Math.sqrt(3) * 2;
  for (let i = 0; i < n; i++) out[i] = (next() - 0.5) * scale;
  return out;
}
