import { ApiError } from "../../api/errors";
import type { RoutedAdapter, RouterCandidate, RouterDecision } from "./types";

/**
 * The user's own choices: one pinned adapter, or explicit blend weights. Validated against
 * the enabled adapters, because a scale the engine cannot apply must fail here, with a
 * sentence the user understands, not as a generic LoRA error in the engine.
 */

/** Highest scale a blend may give one adapter; beyond it the demo adapters saturate. */
export const MAX_BLEND_SCALE = 2;

type ManualDecision = Omit<RouterDecision, "latencyMs">;

/** `adapterId` alone at its default scale. Throws ApiError("invalid_input") if it is not enabled. */
export function pinnedDecision(adapterId: string, candidates: readonly RouterCandidate[]): ManualDecision {
  const candidate = findCandidate(adapterId, candidates);
  return {
    mode: "pinned",
    adapters: [{ id: candidate.id, scale: candidate.defaultScale }],
    confidence: 1,
    scores: Object.fromEntries(candidates.map((c) => [c.id, c.id === candidate.id ? 1 : 0])),
    reason: `pinned: ${candidate.id}`,
  };
}

/**
 * The given scales (0 leaves an adapter out). Throws ApiError("invalid_input") for an empty
 * blend, an adapter that is not enabled, a scale outside 0..MAX_BLEND_SCALE or all zeros.
 */
export function blendDecision(
  weights: Readonly<Record<string, number>>,
  candidates: readonly RouterCandidate[],
): ManualDecision {
  const entries = Object.entries(weights);
  if (entries.length === 0) throw new ApiError("invalid_input", "a blend needs at least one adapter");
  const adapters: RoutedAdapter[] = [];
  for (const [id, scale] of entries) {
    findCandidate(id, candidates);
    if (typeof scale !== "number" || !Number.isFinite(scale) || scale < 0 || scale > MAX_BLEND_SCALE) {
      throw new ApiError(
        "invalid_input",
        `blend scale of "${id}" must be a number from 0 to ${MAX_BLEND_SCALE}, got ${String(scale)}`,
      );
    }
    if (scale > 0) adapters.push({ id, scale });
  }
  if (adapters.length === 0)
    throw new ApiError("invalid_input", "a blend needs at least one adapter with a scale above 0");
  adapters.sort((a, b) => b.scale - a.scale || compare(a.id, b.id));
  const total = adapters.reduce((sum, a) => sum + a.scale, 0);
  const scales = new Map(adapters.map((a) => [a.id, a.scale]));
  return {
    mode: "blend",
    adapters,
    confidence: 1,
    scores: Object.fromEntries(candidates.map((c) => [c.id, (scales.get(c.id) ?? 0) / total])),
    reason: `blend: ${adapters.map((a) => `${a.id} ${a.scale.toFixed(2)}`).join(" + ")}`,
  };
}

function findCandidate(id: string, candidates: readonly RouterCandidate[]): RouterCandidate {
  const candidate = candidates.find((c) => c.id === id);
  if (candidate) return candidate;
  const enabled = candidates.map((c) => c.id).join(", ") || "none";
  throw new ApiError(
    "invalid_input",
    `adapter "${id}" is not installed or not enabled (enabled: ${enabled})`,
  );
}

/** Code-unit order, independent of the locale: decisions must not depend on the machine. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
