export {
  AdapterRouter,
  FALLBACK_ADAPTER_ID,
  LEARNED_EXAMPLE_WEIGHT,
  LOW_CONFIDENCE_THRESHOLD,
  MAX_LEARNED_PER_ADAPTER,
  type AdapterRouterDeps,
  type AdapterRouterOptions,
} from "./adapter-router";
export { KERNEL_TEMPERATURE, RoutingClassifier, type LabelledVector } from "./classifier";
export { MAX_BLEND_SCALE } from "./manual-modes";
export { MemoryRouterStore, textHash, type LearnedExample, type RouterStore } from "./store";
export type {
  DecideInput,
  EmbedFn,
  OverrideInput,
  RoutedAdapter,
  RouterCandidate,
  RouterClock,
  RouterDecision,
  RouterMode,
} from "./types";
