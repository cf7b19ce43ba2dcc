import { ApiError } from "../../api/errors";
import { RoutingClassifier, type LabelledVector } from "./classifier";
import { blendDecision, compare, pinnedDecision } from "./manual-modes";
import { decodeRouterArtifact, routerInLineage, type RoutingHead } from "./routing-head";
import { textHash, type RouterStore } from "./store";
import type {
  DecideInput,
  EmbedFn,
  OverrideInput,
  RouterCandidate,
  RouterClock,
  RouterDecision,
} from "./types";

/**
 * Below this top probability an auto decision blends the two most likely adapters in
 * proportion to their probabilities instead of betting on one. 0.5: under it the classifier
 * itself says the top adapter is more likely wrong than right. Held-out prompts close to the
 * routing examples score 0.6–1.0 on the tiny test model; unfamiliar wording often lands in
 * 0.3–0.5 and gets the blend (see router.engine.test.ts).
 */
export const LOW_CONFIDENCE_THRESHOLD = 0.5;
/** A user's override counts as this many seed examples: it is a real label for a real turn. */
export const LEARNED_EXAMPLE_WEIGHT = 4;
/** Learned examples kept per adapter; the oldest go first (tastes drift, storage stays bounded). */
export const MAX_LEARNED_PER_ADAPTER = 50;
/** The adapter auto falls back to when it cannot classify (no examples, no text, no embedding). */
export const FALLBACK_ADAPTER_ID = "chat";

export interface AdapterRouterDeps {
  /** Base-model embeddings (EngineClient.embed). */
  embed: EmbedFn;
  /**
   * The embedding of one turn's text, shared with whoever else embeds it for the same turn
   * (memory retrieval: see chat/query-embeddings.ts). Without it the turn is embedded by `embed`.
   */
  embedQuery?: (text: string) => Promise<number[]>;
  /**
   * Identity of the loaded base model (its sha256, or failing that its path). Embeddings are
   * cached under it: another model means other vectors.
   */
  modelKey: () => string;
  store: RouterStore;
  clock?: RouterClock;
  /**
   * sha256 of the loaded base (null while unknown). A routing head (routing-head.ts) carried by
   * a candidate's lineage is used only when it was trained for this base; without it, or
   * without this function, auto routes with the kernel classifier.
   */
  baseSha256?: () => string | null | Promise<string | null>;
  /** Told once per unusable router artifact (corrupt, another feature version). */
  log?: (message: string) => void;
}

export interface AdapterRouterOptions {
  /** Kernel temperature of the classifier (see classifier.ts). */
  temperature?: number;
  lowConfidenceThreshold?: number;
  learnedWeight?: number;
  maxLearnedPerAdapter?: number;
}

interface Index {
  key: string;
  classifier: Promise<RoutingClassifier>;
}

const wallClock: RouterClock = { now: () => performance.timeOrigin + performance.now() };

/**
 * Chooses the adapters for each turn: the user's pin or blend as given (validated), or in
 * auto mode a classifier over base-model embeddings seeded from the adapters' routing
 * examples and refined by the user's overrides.
 */
export class AdapterRouter {
  private readonly clock: RouterClock;
  private readonly threshold: number;
  private readonly learnedWeight: number;
  private readonly maxLearned: number;
  private index: Index | null = null;
  /** Bumped by every override: part of the index key, so the classifier is rebuilt. */
  private learnedVersion = 0;
  /** Decoded router artifacts by their encoded text (a few: one per live release that has one). */
  private readonly heads = new Map<string, RoutingHead | Error>();
  /** Heads already logged as made for another embedding length (logged once each). */
  private readonly wrongDim = new WeakSet<RoutingHead>();

  constructor(
    private readonly deps: AdapterRouterDeps,
    private readonly options: AdapterRouterOptions = {},
  ) {
    this.clock = deps.clock ?? wallClock;
    this.threshold = options.lowConfidenceThreshold ?? LOW_CONFIDENCE_THRESHOLD;
    this.learnedWeight = options.learnedWeight ?? LEARNED_EXAMPLE_WEIGHT;
    this.maxLearned = options.maxLearnedPerAdapter ?? MAX_LEARNED_PER_ADAPTER;
  }

  /**
   * Decides which adapters answer `text`. Pinned and blend modes throw ApiError("invalid_input")
   * for adapters that are not among `candidates` or bad scales. Auto never throws for a
   * failing embedding: the turn goes on with the fallback adapter and the reason says why.
   */
  async decide(input: DecideInput): Promise<RouterDecision> {
    const start = this.clock.now();
    const { mode, candidates } = input;
    const decision =
      mode.kind === "pinned"
        ? pinnedDecision(mode.adapterId, candidates)
        : mode.kind === "blend"
          ? blendDecision(mode.weights, candidates)
          : await this.auto(input.text, candidates);
    return { ...decision, latencyMs: Math.max(0, this.clock.now() - start) };
  }

  /**
   * Embeds the candidates' routing examples (or finds them in the store) so that the first
   * auto decision after a model load does not pay for it.
   */
  async prepare(candidates: readonly RouterCandidate[]): Promise<void> {
    await this.classifierFor(candidates);
  }

  /**
   * Learns from the user choosing `chosenAdapterId` for `text`: the turn becomes a labelled
   * example (weighted LEARNED_EXAMPLE_WEIGHT), persisted through the store and used by the
   * next decision. The newest label of a text replaces older ones.
   */
  async recordOverride(input: OverrideInput): Promise<void> {
    const text = input.text.trim();
    if (text === "") throw new ApiError("invalid_input", "an override needs the text of the turn");
    if (input.chosenAdapterId.trim() === "")
      throw new ApiError("invalid_input", "an override needs an adapter id");
    const hash = textHash(text);
    // Stored before embedding: the label is what matters; a vector missing now (engine
    // restarting) is embedded at the next decision.
    this.deps.store.addLearned(
      { textHash: hash, text, adapterId: input.chosenAdapterId, createdAt: this.clock.now() },
      this.maxLearned,
    );
    this.learnedVersion++;
    this.index = null;
    try {
      // The turn's text was embedded for its routing decision: the shared memo has it.
      const embedQuery = this.deps.embedQuery;
      await this.vectorsFor(
        this.deps.modelKey(),
        [text],
        embedQuery
          ? (texts) => Promise.all(texts.map(async (t) => checkedVector(await embedQuery(t))))
          : undefined,
      );
    } catch {
      // See above: retried when the classifier is next built.
    }
  }

  /** Drops the in-memory classifier; the store keeps everything learned. */
  dispose(): void {
    this.index = null;
  }

  private async auto(
    text: string,
    candidates: readonly RouterCandidate[],
  ): Promise<Omit<RouterDecision, "latencyMs">> {
    if (candidates.length === 0) {
      return {
        mode: "auto",
        adapters: [],
        confidence: 0,
        scores: {},
        reason: "auto: no adapters enabled; base model",
      };
    }
    if (text.trim() === "") return this.fallback(candidates, "empty text");
    let probabilities: Map<string, number>;
    let by = "";
    try {
      const classifier = await this.classifierFor(candidates);
      if (classifier.labels.length === 0 && !this.offersHead(candidates))
        return this.fallback(candidates, "no routing examples");
      const query = text.trim();
      const vector =
        (this.deps.embedQuery
          ? checkedVector(await this.deps.embedQuery(query))
          : (await this.embed([query]))[0]) ?? new Float32Array();
      // After the embedding: a head is usable only for embeddings as long as its own.
      const chosen = await this.headFor(candidates, vector.length);
      by = chosen.note;
      if (classifier.labels.length === 0 && !chosen.head)
        return this.fallback(candidates, "no routing examples");
      if (chosen.head) {
        probabilities = chosen.head.classify(
          query,
          vector,
          candidates.map((c) => c.id),
        );
        // The user's overrides act on top: near a re-routed turn their vote takes over, as much
        // as the kernel says the turn is like it (all of it for the same text).
        const learned = classifier.labels.length > 0 ? classifier.learnedEvidence(vector) : null;
        if (learned && learned.similarity > 0) {
          const mixed = new Map<string, number>();
          for (const c of candidates) {
            const p =
              (1 - learned.similarity) * (probabilities.get(c.id) ?? 0) +
              learned.similarity * (learned.probabilities.get(c.id) ?? 0);
            mixed.set(c.id, p);
          }
          probabilities = mixed;
          if (learned.similarity >= 0.5) by += ", your overrides";
        }
      } else probabilities = classifier.classify(vector);
    } catch (error) {
      return this.fallback(
        candidates,
        `embedding failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }

    const scores = Object.fromEntries(candidates.map((c) => [c.id, probabilities.get(c.id) ?? 0]));
    const ranked = candidates
      .filter((c) => probabilities.has(c.id))
      .map((c) => ({ candidate: c, p: probabilities.get(c.id) ?? 0 }))
      .sort((a, b) => b.p - a.p || compare(a.candidate.id, b.candidate.id));
    const [first, second] = ranked;
    if (!first) return this.fallback(candidates, "no routing examples");
    const confidence = clamp01(first.p);
    if (confidence >= this.threshold || !second) {
      return {
        mode: "auto",
        adapters: [{ id: first.candidate.id, scale: first.candidate.defaultScale }],
        confidence,
        scores,
        reason: `auto: ${first.candidate.id} (${confidence.toFixed(2)})${by}`,
      };
    }
    const pair = first.p + second.p;
    const adapters = [first, second].map(({ candidate, p }) => ({
      id: candidate.id,
      scale: round3((candidate.defaultScale * p) / pair),
    }));
    return {
      mode: "auto",
      adapters,
      confidence,
      scores,
      reason:
        `auto: low confidence (${formatBelow(confidence, this.threshold)}), blend ` +
        adapters.map((a) => `${a.id} ${a.scale.toFixed(2)}`).join(" + ") +
        by,
    };
  }

  /**
   * The routing head to use for these candidates: the newest usable one a candidate's lineage
   * carries that was trained for the loaded base and knows every candidate. `note` says which
   * (or why none) in the decision's reason; "" = the kernel classifier, as before heads.
   */
  private offersHead(candidates: readonly RouterCandidate[]): boolean {
    return (
      this.deps.baseSha256 !== undefined && candidates.some((c) => routerInLineage(c.lineage) !== undefined)
    );
  }

  /**
   * `embeddingDim` is the length of the engine's embedding of the turn: a head made for another
   * length (decodable, but not for this engine) is unusable like a corrupt one: logged once,
   * kernel classifier.
   */
  private async headFor(
    candidates: readonly RouterCandidate[],
    embeddingDim: number,
  ): Promise<{ head: RoutingHead | null; note: string }> {
    if (!this.offersHead(candidates) || !this.deps.baseSha256) return { head: null, note: "" };
    // Asked only when a head is offered (hashing a large base can take a while the first time).
    const base = (await this.deps.baseSha256()) ?? null;
    let best: RoutingHead | null = null;
    let note = "";
    for (const c of candidates) {
      const encoded = routerInLineage(c.lineage);
      if (encoded === undefined) continue;
      const head = this.decodeHead(c.id, encoded);
      if (head instanceof Error) {
        note = `; router of ${c.id} unusable, kernel classifier`;
        continue;
      }
      if (base === null || head.baseSha256 !== base) continue;
      if (!candidates.every((k) => head.labels.includes(k.id))) continue;
      if (head.spec.embeddingDim !== embeddingDim) {
        if (!this.wrongDim.has(head)) {
          this.wrongDim.add(head);
          this.deps.log?.(
            `The router artifact of ${c.id} is not used: it is made for embeddings of ${head.spec.embeddingDim} values, the engine's have ${embeddingDim}`,
          );
        }
        note = `; router of ${c.id} unusable, kernel classifier`;
        continue;
      }
      if (!best || head.version > best.version) best = head;
    }
    return best ? { head: best, note: ` [router v${best.version}]` } : { head: null, note };
  }

  private decodeHead(adapterId: string, encoded: unknown): RoutingHead | Error {
    const key = typeof (encoded as { gz?: unknown })?.gz === "string" ? (encoded as { gz: string }).gz : "";
    const known = key ? this.heads.get(key) : undefined;
    if (known) return known;
    let head: RoutingHead | Error;
    try {
      head = decodeRouterArtifact(encoded);
    } catch (err) {
      head = err instanceof Error ? err : new Error(String(err));
      this.deps.log?.(`The router artifact of ${adapterId} is not used: ${head.message}`);
    }
    if (key) {
      if (this.heads.size >= 8) this.heads.delete(this.heads.keys().next().value!);
      this.heads.set(key, head);
    }
    return head;
  }

  private fallback(candidates: readonly RouterCandidate[], why: string): Omit<RouterDecision, "latencyMs"> {
    const chat =
      candidates.find((c) => c.id === FALLBACK_ADAPTER_ID) ??
      candidates.find((c) => c.domain === FALLBACK_ADAPTER_ID);
    return {
      mode: "auto",
      adapters: chat ? [{ id: chat.id, scale: chat.defaultScale }] : [],
      confidence: 0,
      scores: Object.fromEntries(candidates.map((c) => [c.id, 0])),
      reason: `auto: ${why}; fallback ${chat ? chat.id : "base model"}`,
    };
  }

  /** The classifier for this model, candidate set and learned examples, built once. */
  private classifierFor(candidates: readonly RouterCandidate[]): Promise<RoutingClassifier> {
    const modelKey = this.deps.modelKey();
    const key = JSON.stringify([
      modelKey,
      this.learnedVersion,
      candidates.map((c) => [c.id, c.routingExamples.map((t) => textHash(t.trim()))]),
    ]);
    if (this.index?.key === key) return this.index.classifier;
    const classifier = this.buildClassifier(modelKey, candidates);
    const index: Index = { key, classifier };
    this.index = index;
    // A failed build (engine down) must not stick: the next decision tries again.
    classifier.catch(() => {
      if (this.index === index) this.index = null;
    });
    return classifier;
  }

  private async buildClassifier(
    modelKey: string,
    candidates: readonly RouterCandidate[],
  ): Promise<RoutingClassifier> {
    const ids = new Set(candidates.map((c) => c.id));
    const seeds = candidates.flatMap((c) =>
      c.routingExamples
        .map((t) => t.trim())
        .filter((t) => t !== "")
        .map((text) => ({ label: c.id, text, seed: true })),
    );
    const learned = this.deps.store
      .listLearned()
      .filter((e) => ids.has(e.adapterId))
      .map((e) => ({ label: e.adapterId, text: e.text, seed: false }));
    const all = [...seeds, ...learned];
    const vectors = await this.vectorsFor(
      modelKey,
      all.map((e) => e.text),
    );
    const examples: LabelledVector[] = all.map((e) => ({
      label: e.label,
      vector: vectors.get(textHash(e.text)) ?? new Float32Array(),
      weight: e.seed ? 1 : this.learnedWeight,
      seed: e.seed,
    }));
    return new RoutingClassifier(examples, { temperature: this.options.temperature });
  }

  /** Vectors of `texts` by text hash: from the store, embedding (and storing) the missing ones. */
  private async vectorsFor(
    modelKey: string,
    texts: readonly string[],
    embed: (texts: string[]) => Promise<Float32Array[]> = (t) => this.embed(t),
  ): Promise<Map<string, Float32Array>> {
    const byHash = new Map(texts.map((t) => [textHash(t), t]));
    const found = this.deps.store.getVectors(modelKey, [...byHash.keys()]);
    const missing = [...byHash].filter(([hash]) => !found.has(hash));
    if (missing.length > 0) {
      const embedded = await embed(missing.map(([, text]) => text));
      const fresh = new Map(missing.map(([hash], i) => [hash, embedded[i] ?? new Float32Array()]));
      this.deps.store.putVectors(modelKey, fresh);
      for (const [hash, vector] of fresh) found.set(hash, vector);
    }
    return found;
  }

  /**
   * Embeds and checks the engine's answer. Vectors are rounded to float32 here so that a
   * database storing float32 gives back exactly what was used: decisions replay identically
   * after a restart.
   */
  private async embed(texts: string[]): Promise<Float32Array[]> {
    const vectors = await this.deps.embed(texts);
    if (!Array.isArray(vectors) || vectors.length !== texts.length) {
      throw new Error(
        `the engine returned ${Array.isArray(vectors) ? vectors.length : "no"} embeddings for ${texts.length} texts`,
      );
    }
    return vectors.map(checkedVector);
  }
}

/** One engine vector as float32 (see embed above); throws for an empty or non-finite one. */
function checkedVector(v: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(v);
  if (vector.length === 0 || !vector.every(Number.isFinite))
    throw new Error("the engine returned an invalid embedding");
  return vector;
}

function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/**
 * "0.42 < 0.50": both numbers with the same decimals, as many (up to 6) as it takes for the
 * smaller one not to read as equal ("0.50 < 0.5" was 0.4996 rounded).
 */
export function formatBelow(value: number, limit: number): string {
  for (let digits = 2; digits < 6; digits++) {
    const [a, b] = [value.toFixed(digits), limit.toFixed(digits)];
    if (a !== b) return `${a} < ${b}`;
  }
  return `${value.toFixed(6)} < ${limit.toFixed(6)}`;
}
