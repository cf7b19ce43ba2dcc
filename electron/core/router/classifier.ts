/**
 * The auto-routing classifier: a weighted kernel density per adapter over base-model
 * embeddings (a soft nearest-neighbour rule). For adapter c with examples e_i of weight w_i,
 *
 *   density_c(x) = Σ_i w_i · exp(cos(x, e_i) / T) / Σ_i w_i,   p(c | x) = density_c / Σ_c' density_c'
 *
 * Why this and not prototypes or logistic regression: with a handful of examples per adapter
 * it is as accurate as both (it beat prototypes on the tiny model's held-out prompts, tied
 * with regularized logistic regression), it needs no iterative training — learning an
 * override is adding one row, which matters for 4096-dim embeddings — and a weighted override
 * acts locally: it pulls texts like it to its adapter without shifting the rest of the space.
 * Dividing by Σ w_i gives every adapter the same prior whatever its number of examples.
 *
 * Vectors are centred on the mean of the seed examples before the cosine: base-model
 * embeddings share a large common direction (the tiny model's constant dimension; the
 * anisotropy of real LLMs), which would otherwise make every cosine close to 1.
 */

/** Kernel temperature on cosine similarity: lower is sharper (closer to nearest neighbour). */
export const KERNEL_TEMPERATURE = 0.1;

export interface LabelledVector {
  label: string;
  vector: Float32Array;
  /** Relative weight (seeds 1, learned overrides more). */
  weight: number;
  /** Seeds define the centre of the space; learned examples do not move it. */
  seed: boolean;
}

export interface ClassifierOptions {
  temperature?: number;
}

interface Row {
  vector: Float64Array;
  logWeight: number;
  seed: boolean;
}

export class RoutingClassifier {
  private readonly center: Float64Array;
  private readonly rows = new Map<string, { rows: Row[]; logTotal: number }>();
  private readonly temperature: number;
  readonly dimension: number;

  constructor(examples: readonly LabelledVector[], options: ClassifierOptions = {}) {
    this.temperature = options.temperature ?? KERNEL_TEMPERATURE;
    if (!(this.temperature > 0))
      throw new Error(`classifier temperature must be > 0, got ${this.temperature}`);
    const first = examples[0];
    this.dimension = first ? first.vector.length : 0;
    for (const e of examples) {
      if (e.vector.length !== this.dimension) {
        throw new Error(`example vectors differ in length (${e.vector.length} vs ${this.dimension})`);
      }
      if (!(e.weight > 0)) throw new Error(`example weight must be > 0, got ${e.weight}`);
    }
    const seeds = examples.filter((e) => e.seed);
    this.center = mean(seeds.length > 0 ? seeds : examples, this.dimension);

    const totals = new Map<string, number>();
    for (const e of examples) {
      const group = this.rows.get(e.label) ?? { rows: [], logTotal: 0 };
      group.rows.push({ vector: this.project(e.vector), logWeight: Math.log(e.weight), seed: e.seed });
      this.rows.set(e.label, group);
      totals.set(e.label, (totals.get(e.label) ?? 0) + e.weight);
    }
    for (const [label, group] of this.rows) group.logTotal = Math.log(totals.get(label) ?? 1);
  }

  /** The labels that have at least one example, in first-seen order. */
  get labels(): string[] {
    return [...this.rows.keys()];
  }

  /** p(label | vector) for every label with examples; sums to 1 (empty without examples). */
  classify(vector: ArrayLike<number>): Map<string, number> {
    if (this.rows.size === 0) return new Map();
    if (vector.length !== this.dimension) {
      throw new Error(`embedding has ${vector.length} dimensions, the examples ${this.dimension}`);
    }
    const x = this.project(vector);
    const logDensity = new Map<string, number>();
    for (const [label, group] of this.rows) {
      const terms = group.rows.map((row) => row.logWeight + dot(x, row.vector) / this.temperature);
      logDensity.set(label, logSumExp(terms) - group.logTotal);
    }
    const norm = logSumExp([...logDensity.values()]);
    return new Map([...logDensity].map(([label, value]) => [label, Math.exp(value - norm)]));
  }

  /**
   * What the learned (non-seed) examples say about `vector`, for a router whose main opinion
   * comes from elsewhere (a routing head): `similarity` = exp((cos − 1) / T) to the nearest
   * learned example (1 for the same text, falling off like the kernel), `probabilities` = the
   * kernel vote of the learned examples alone. Null without learned examples.
   */
  learnedEvidence(
    vector: ArrayLike<number>,
  ): { similarity: number; probabilities: Map<string, number> } | null {
    if (vector.length !== this.dimension) {
      throw new Error(`embedding has ${vector.length} dimensions, the examples ${this.dimension}`);
    }
    const x = this.project(vector);
    let best = -Infinity;
    const logDensity = new Map<string, number>();
    for (const [label, group] of this.rows) {
      const terms: number[] = [];
      for (const row of group.rows) {
        if (row.seed) continue;
        const cos = dot(x, row.vector);
        best = Math.max(best, cos);
        terms.push(row.logWeight + cos / this.temperature);
      }
      if (terms.length > 0) logDensity.set(label, logSumExp(terms));
    }
    if (logDensity.size === 0) return null;
    const norm = logSumExp([...logDensity.values()]);
    return {
      similarity: Math.min(1, Math.exp((best - 1) / this.temperature)),
      probabilities: new Map([...logDensity].map(([label, value]) => [label, Math.exp(value - norm)])),
    };
  }

  /** Centred and scaled to unit length (a zero vector stays zero: cosine 0 with everything). */
  private project(vector: ArrayLike<number>): Float64Array {
    const out = new Float64Array(this.dimension);
    let sum = 0;
    for (let i = 0; i < this.dimension; i++) {
      const value = (vector[i] ?? 0) - (this.center[i] ?? 0);
      if (!Number.isFinite(value)) throw new Error("embedding contains a non-finite value");
      out[i] = value;
      sum += value * value;
    }
    const length = Math.sqrt(sum);
    if (length > 1e-12) for (let i = 0; i < out.length; i++) out[i] = (out[i] ?? 0) / length;
    return out;
  }
}

function mean(examples: readonly LabelledVector[], dimension: number): Float64Array {
  const out = new Float64Array(dimension);
  for (const e of examples) for (let i = 0; i < dimension; i++) out[i] = (out[i] ?? 0) + (e.vector[i] ?? 0);
  if (examples.length > 0) for (let i = 0; i < dimension; i++) out[i] = (out[i] ?? 0) / examples.length;
  return out;
}

function dot(a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

function logSumExp(values: readonly number[]): number {
  const max = Math.max(...values);
  if (!Number.isFinite(max)) return max;
  let sum = 0;
  for (const v of values) sum += Math.exp(v - max);
  return max + Math.log(sum);
}
