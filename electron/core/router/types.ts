/**
 * The router's vocabulary: which adapters may answer a turn, how the user asked to choose, and
 * what was chosen. Plain data, so a decision can be stored in the turn record as it is.
 */

/** Base-model embeddings of `texts`, one vector per text (EngineClient.embed fits). */
export type EmbedFn = (texts: string[]) => Promise<number[][]>;

/**
 * An enabled adapter the router may pick. An AdapterManifest (common/adapter-manifest.ts) has
 * these fields, so a manifest can be passed as it is.
 */
export interface RouterCandidate {
  id: string;
  domain: string;
  /** The scale used when the adapter is picked alone. */
  defaultScale: number;
  /** Prompts this adapter should answer: the seed examples of the classifier. */
  routingExamples: readonly string[];
  /**
   * The version's lineage (AdapterManifest.lineage): its `details.router`, when present, is a
   * learned routing head (routing-head.ts) that auto uses instead of the kernel classifier.
   */
  lineage?: unknown;
}

/** How the user asked to choose adapters for a turn. */
export type RouterMode =
  | { kind: "auto" }
  | { kind: "pinned"; adapterId: string }
  /** Explicit scales, each 0..2; 0 leaves the adapter out. */
  | { kind: "blend"; weights: Record<string, number> };

export interface RoutedAdapter {
  id: string;
  scale: number;
}

export interface RouterDecision {
  mode: RouterMode["kind"];
  /** What to apply to the base model; [] = the base model alone. */
  adapters: RoutedAdapter[];
  /** 0..1: the classifier's probability of the top adapter (auto), 1 for a user's choice. */
  confidence: number;
  /**
   * Per candidate id, 0..1 and summing to 1 when non-empty: the classifier's probabilities
   * (auto) or each adapter's share of the chosen scales (pinned, blend).
   */
  scores: Record<string, number>;
  /** Time spent deciding, embedding included. */
  latencyMs: number;
  /** One line for logs and the UI, e.g. "auto: coding (0.82)". */
  reason: string;
}

export interface DecideInput {
  /** The user's turn. */
  text: string;
  /** The enabled adapters. */
  candidates: readonly RouterCandidate[];
  mode: RouterMode;
}

export interface OverrideInput {
  /** The turn the user re-routed. */
  text: string;
  /** The adapter the user chose ("answer again with Coding", or a pin). */
  chosenAdapterId: string;
}

/** Milliseconds; wall-clock based so that learned examples can be ordered across restarts. */
export interface RouterClock {
  now(): number;
}
