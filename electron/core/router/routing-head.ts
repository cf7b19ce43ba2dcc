/**
 * The learned routing head (issue 29): softmax regression over routing-features.ts (the base's
 * embedding of the turn plus hashed word and character n-grams), trained by the improvement
 * cycle from routing outcomes and shipped as a router artifact inside an adapter version's
 * lineage (`lineage.details.router`), so it is signed, gated, released and rolled back with that
 * version. The app uses a head only for the base it was trained on (`baseSha256`); without one
 * it routes with the kernel classifier (classifier.ts), and the user's overrides act on top of
 * either (adapter-router.ts).
 *
 * Training is deterministic TypeScript, not the PyTorch trainer: the problem is a convex
 * multinomial logistic regression on ~1k sparse rows (a second on 2 cores), the features must
 * be computed by this same code at serving time anyway, and a features file handed to Python
 * and weights handed back would add a second format and a Python step to a cycle stage that
 * needs no autograd (ARCHITECTURE.md, "The learned router").
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { z } from "zod";
import {
  DEFAULT_FEATURE_SPEC,
  FEATURES_VERSION,
  featureCount,
  meanVector,
  routingFeatures,
  RoutingFeatureSpec,
  type SparseFeatures,
} from "./routing-features";

export const ROUTER_ARTIFACT_FORMAT = "macaron-router-head";
/** Where an adapter version's lineage carries its router artifact. */
export const ROUTER_LINEAGE_KEY = "router";
/**
 * Largest encoded artifact the app decodes (gzipped, base64), and its JSON once unzipped. The
 * demo's head is 70 KB encoded, 91 KB unzipped (4 labels × (128 + 4,096) float32 in base64);
 * float32 weights barely compress, so an artifact within the encoded cap unzips to about 1.3×
 * its size: 8 MB leaves room for a head 80 times the demo's and for nothing much else.
 */
const MAX_ENCODED_CHARS = 4 * 1024 * 1024;
const MAX_JSON_BYTES = 8 * 1024 * 1024;
/** Deepest nesting of arrays and objects in an artifact's JSON (a real one: 4). */
export const MAX_JSON_DEPTH = 64;
/**
 * The highest head version: a counter bumped once per cycle, so a million is centuries of
 * cycles; a larger one (1e15) would outrank every later head forever.
 */
export const MAX_HEAD_VERSION = 1_000_000;
/**
 * The largest magnitude of a weight, bias or mean value a usable head has. Training (Adam,
 * learning rate 0.05, 300 steps, L2) moves a weight at most ~0.05 a step: |w| <= 15 by
 * construction (the demo head's largest is under 5), and an embedding mean is a mean of the
 * engine's embedding values. Values near float32's limit (3e38) make logits overflow to
 * ±Infinity and every score NaN or uniform: such a head is refused at decode, not served.
 */
export const MAX_PARAMETER_MAGNITUDE = 1e4;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const Label = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);

/** The artifact as stored: float arrays as base64 little-endian float32. */
export const RouterArtifact = z
  .object({
    format: z.literal(ROUTER_ARTIFACT_FORMAT),
    /** The head's own version: a counter the cycle bumps from the live head's. */
    version: z.number().int().min(1).max(MAX_HEAD_VERSION),
    /** The base it was trained on: its embeddings are the head's input. */
    baseSha256: Sha256,
    labels: z.array(Label).min(2).max(64),
    features: RoutingFeatureSpec,
    embeddingMean: z.string().max(1_000_000),
    /** labels × featureCount(features), row-major. */
    weights: z.string().max(20_000_000),
    bias: z.array(z.number()).max(64),
    createdAt: z.number().int().nonnegative(),
    /** Where it came from: the parent head's version, data counts, training settings, gate. */
    lineage: z
      .object({
        parent: z.number().int().nullable(),
        examples: z.record(z.string(), z.number().int().nonnegative()),
      })
      .loose(),
  })
  .strict();
export type RouterArtifact = z.infer<typeof RouterArtifact>;

/** An artifact that cannot be used: the message says why (never a stack of zod issues). */
export class RouterArtifactError extends Error {
  override readonly name: string = "RouterArtifactError";
}

/**
 * A well-formed artifact made for a feature extraction this build does not have (another
 * `features.version`, e.g. from a later build): not corrupt, just not for us. The app routes
 * with the kernel classifier instead and still lets the version go live (gate-target.ts); the
 * cycle does not carry it on (router-cycle.ts, parentRouterToCarry).
 */
export class UnsupportedRouterArtifactError extends RouterArtifactError {
  override readonly name = "UnsupportedRouterArtifactError";
}

/** A labelled text with the base's embedding of it. */
export interface HeadExample {
  label: string;
  text: string;
  embedding: ArrayLike<number>;
  /** Relative weight within its label (seeds 1; outcomes more). Default 1. */
  weight?: number;
}

export interface TrainHeadOptions {
  baseSha256: string;
  version: number;
  parent?: number | null;
  /** Counts per source (routingExamples, seeds, overrides, …) for the lineage. */
  sources?: Record<string, number>;
  features?: Partial<Omit<RoutingFeatureSpec, "embeddingDim" | "version">>;
  /** Full-batch Adam steps. Default 300. */
  steps?: number;
  learningRate?: number;
  /** L2 penalty on the weights (not the bias). Default 1e-4 (see DEFAULT_FEATURE_SPEC). */
  l2?: number;
  createdAt?: number;
}

/** A usable head: decoded, checked, ready to score texts. */
export class RoutingHead {
  readonly labels: readonly string[];
  readonly spec: RoutingFeatureSpec;
  readonly baseSha256: string;
  readonly version: number;
  private readonly columns: number;

  constructor(
    readonly artifact: RouterArtifact,
    private readonly mean: Float64Array,
    private readonly weights: Float64Array,
    private readonly bias: Float64Array,
  ) {
    this.labels = artifact.labels;
    this.spec = artifact.features;
    this.baseSha256 = artifact.baseSha256;
    this.version = artifact.version;
    this.columns = featureCount(artifact.features);
  }

  /** The features of a text (the one extraction: routing-features.ts). */
  features(text: string, embedding: ArrayLike<number>): SparseFeatures {
    return routingFeatures(this.spec, this.mean, text, embedding);
  }

  /**
   * p(label | text) over `among` (default every label the head knows; labels it does not know
   * are left out), summing to 1.
   */
  classify(text: string, embedding: ArrayLike<number>, among?: readonly string[]): Map<string, number> {
    const logits = this.logits(this.features(text, embedding));
    const wanted = among ? new Set(among) : null;
    const kept = this.labels
      .map((l, k) => [l, logits[k] ?? 0] as const)
      .filter(([l]) => !wanted || wanted.has(l));
    if (kept.length === 0) return new Map();
    const max = Math.max(...kept.map(([, z]) => z));
    const exps = kept.map(([l, z]) => [l, Math.exp(z - max)] as const);
    const total = exps.reduce((s, [, e]) => s + e, 0);
    return new Map(exps.map(([l, e]) => [l, e / total]));
  }

  logits(x: SparseFeatures): Float64Array {
    return logitsOf(this.weights, this.bias, this.columns, x);
  }
}

function logitsOf(
  weights: Float64Array,
  bias: Float64Array,
  columns: number,
  x: SparseFeatures,
): Float64Array {
  const out = new Float64Array(bias.length);
  for (let k = 0; k < bias.length; k++) {
    let z = bias[k] ?? 0;
    const row = k * columns;
    for (let j = 0; j < x.indices.length; j++)
      z += (weights[row + (x.indices[j] ?? 0)] ?? 0) * (x.values[j] ?? 0);
    out[k] = z;
  }
  return out;
}

/**
 * Trains a head on `examples` (deterministic: same examples in the same order, same head).
 * Every label gets the same total weight (the classifier's equal prior), so a domain with more
 * seed lines does not win by number.
 */
export function trainRoutingHead(examples: readonly HeadExample[], o: TrainHeadOptions): RoutingHead {
  const labels = [...new Set(examples.map((e) => e.label))].sort();
  if (labels.length < 2)
    throw new Error(`a routing head needs examples of two labels at least, got ${labels.length}`);
  const first = examples[0]!;
  const spec: RoutingFeatureSpec = RoutingFeatureSpec.parse({
    ...DEFAULT_FEATURE_SPEC,
    ...o.features,
    embeddingDim: first.embedding.length,
  });
  const columns = featureCount(spec);
  const mean = meanVector(
    examples.map((e) => e.embedding),
    spec.embeddingDim,
  );
  const rows = examples.map((e) => routingFeatures(spec, mean, e.text, e.embedding));
  const labelIndex = new Map(labels.map((l, k) => [l, k]));
  const targets = examples.map((e) => labelIndex.get(e.label)!);
  const totals = new Float64Array(labels.length);
  examples.forEach((e, i) => (totals[targets[i]!] = (totals[targets[i]!] ?? 0) + weightOf(e)));
  const sampleWeight = examples.map((e, i) => weightOf(e) / (totals[targets[i]!]! * labels.length));

  const K = labels.length;
  const W = new Float64Array(K * columns);
  const b = new Float64Array(K);
  const adam = {
    mW: new Float64Array(W.length),
    vW: new Float64Array(W.length),
    mb: new Float64Array(K),
    vb: new Float64Array(K),
  };
  const steps = o.steps ?? 300;
  const lr = o.learningRate ?? 0.05;
  const l2 = o.l2 ?? 1e-4;
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  const gW = new Float64Array(W.length);
  const gb = new Float64Array(K);
  for (let step = 1; step <= steps; step++) {
    gW.fill(0);
    gb.fill(0);
    rows.forEach((x, i) => {
      const z = logitsOf(W, b, columns, x);
      const max = Math.max(...z);
      let total = 0;
      for (let k = 0; k < K; k++) total += z[k] = Math.exp((z[k] ?? 0) - max);
      const w = sampleWeight[i] ?? 0;
      for (let k = 0; k < K; k++) {
        const d = w * ((z[k] ?? 0) / total - (k === targets[i] ? 1 : 0));
        gb[k] = (gb[k] ?? 0) + d;
        const row = k * columns;
        for (let j = 0; j < x.indices.length; j++) {
          const c = row + (x.indices[j] ?? 0);
          gW[c] = (gW[c] ?? 0) + d * (x.values[j] ?? 0);
        }
      }
    });
    const c1 = 1 - beta1 ** step;
    const c2 = 1 - beta2 ** step;
    for (let c = 0; c < W.length; c++) {
      const g = (gW[c] ?? 0) + l2 * (W[c] ?? 0);
      if (g === 0 && adam.mW[c] === 0) continue;
      adam.mW[c] = beta1 * (adam.mW[c] ?? 0) + (1 - beta1) * g;
      adam.vW[c] = beta2 * (adam.vW[c] ?? 0) + (1 - beta2) * g * g;
      W[c] = (W[c] ?? 0) - (lr * ((adam.mW[c] ?? 0) / c1)) / (Math.sqrt((adam.vW[c] ?? 0) / c2) + eps);
    }
    for (let k = 0; k < K; k++) {
      const g = gb[k] ?? 0;
      adam.mb[k] = beta1 * (adam.mb[k] ?? 0) + (1 - beta1) * g;
      adam.vb[k] = beta2 * (adam.vb[k] ?? 0) + (1 - beta2) * g * g;
      b[k] = (b[k] ?? 0) - (lr * ((adam.mb[k] ?? 0) / c1)) / (Math.sqrt((adam.vb[k] ?? 0) / c2) + eps);
    }
  }
  const artifact: RouterArtifact = {
    format: ROUTER_ARTIFACT_FORMAT,
    version: o.version,
    baseSha256: o.baseSha256,
    labels,
    features: spec,
    embeddingMean: toBase64(mean),
    weights: toBase64(W),
    bias: [...Float32Array.from(b)],
    createdAt: o.createdAt ?? Date.now(),
    lineage: {
      parent: o.parent ?? null,
      examples: Object.fromEntries(labels.map((l) => [l, examples.filter((e) => e.label === l).length])),
      ...(o.sources ? { sources: o.sources } : {}),
      training: { method: "softmax-regression", steps, learningRate: lr, l2, optimizer: "adam" },
    },
  };
  // Through the stored form, so the head used is exactly the one that would be shipped.
  return headOf(artifact);
}

function weightOf(e: HeadExample): number {
  const w = e.weight ?? 1;
  if (!(w > 0) || !Number.isFinite(w)) throw new Error(`example weight must be > 0, got ${w}`);
  return w;
}

/** Checks an artifact's arrays and builds its head; RouterArtifactError says what is wrong. */
export function headOf(value: unknown): RoutingHead {
  const featuresVersion = (value as { features?: { version?: unknown } } | null | undefined)?.features
    ?.version;
  if (
    (value as { format?: unknown } | null | undefined)?.format === ROUTER_ARTIFACT_FORMAT &&
    typeof featuresVersion === "number" &&
    featuresVersion !== FEATURES_VERSION
  )
    throw new UnsupportedRouterArtifactError(
      `the router artifact's features are version ${featuresVersion}, this build reads version ${FEATURES_VERSION}`,
    );
  const parsed = RouterArtifact.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RouterArtifactError(
      `the router artifact is invalid: ${issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "unknown"}`,
    );
  }
  const a = parsed.data;
  if (new Set(a.labels).size !== a.labels.length)
    throw new RouterArtifactError("the router artifact repeats a label");
  const columns = featureCount(a.features);
  const mean = fromBase64(a.embeddingMean, "embeddingMean");
  const weights = fromBase64(a.weights, "weights");
  if (mean.length !== a.features.embeddingDim)
    throw new RouterArtifactError(
      `the router artifact's embedding mean has ${mean.length} values, its features ${a.features.embeddingDim}`,
    );
  if (weights.length !== a.labels.length * columns)
    throw new RouterArtifactError(
      `the router artifact has ${weights.length} weights, ${a.labels.length} labels × ${columns} features need ${a.labels.length * columns}`,
    );
  if (a.bias.length !== a.labels.length)
    throw new RouterArtifactError(
      `the router artifact has ${a.bias.length} biases for ${a.labels.length} labels`,
    );
  if (!a.bias.every(Number.isFinite))
    throw new RouterArtifactError("the router artifact's bias is not finite");
  for (const [what, values] of [
    ["embeddingMean", mean],
    ["weights", weights],
    ["bias", a.bias],
  ] as const)
    if (beyond(values, MAX_PARAMETER_MAGNITUDE))
      throw new RouterArtifactError(
        `the router artifact's ${what} has values beyond ±${MAX_PARAMETER_MAGNITUDE} (no trained head has)`,
      );
  return new RoutingHead(a, mean, weights, Float64Array.from(a.bias));
}

/** The artifact as an adapter lineage carries it: gzipped JSON, base64. */
export function encodeRouterArtifact(artifact: RouterArtifact): { gz: string } {
  return { gz: gzipSync(Buffer.from(JSON.stringify(artifact), "utf8")).toString("base64") };
}

/** Decodes `lineage.details.router`; RouterArtifactError for anything but a usable head. */
export function decodeRouterArtifact(encoded: unknown): RoutingHead {
  const gz = (encoded as { gz?: unknown } | null | undefined)?.gz;
  if (typeof gz !== "string" || gz.length === 0)
    throw new RouterArtifactError("the router artifact is missing its data");
  if (gz.length > MAX_ENCODED_CHARS) throw new RouterArtifactError("the router artifact is too large");
  let json: unknown;
  try {
    const text = gunzipSync(Buffer.from(gz, "base64"), { maxOutputLength: MAX_JSON_BYTES }).toString("utf8");
    // JSON.parse of millions of nested brackets takes seconds of the main process: refused first.
    if (nestingBeyond(text, MAX_JSON_DEPTH)) throw new Error(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    json = JSON.parse(text);
  } catch (err) {
    throw new RouterArtifactError(`the router artifact cannot be read: ${(err as Error).message}`);
  }
  return headOf(json);
}

/** The router artifact an adapter manifest's lineage carries, undefined when it carries none. */
export function routerInLineage(lineage: unknown): unknown {
  const details = (lineage as { details?: unknown } | null | undefined)?.details;
  if (typeof details !== "object" || details === null) return undefined;
  return (details as Record<string, unknown>)[ROUTER_LINEAGE_KEY];
}

/** Whether `json` nests arrays/objects deeper than `limit` (brackets inside strings ignored). */
export function nestingBeyond(json: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

function beyond(values: ArrayLike<number>, limit: number): boolean {
  for (let i = 0; i < values.length; i++) if (Math.abs(values[i] ?? 0) > limit) return true;
  return false;
}

function toBase64(values: ArrayLike<number>): string {
  const f = Float32Array.from(values);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString("base64");
}

function fromBase64(text: string, what: string): Float64Array {
  const bytes = Buffer.from(text, "base64");
  if (bytes.length % 4 !== 0)
    throw new RouterArtifactError(`the router artifact's ${what} is not float32 data`);
  const f = new Float32Array(bytes.length / 4);
  for (let i = 0; i < f.length; i++) f[i] = bytes.readFloatLE(i * 4);
  if (!f.every(Number.isFinite)) throw new RouterArtifactError(`the router artifact's ${what} is not finite`);
  return Float64Array.from(f);
}
