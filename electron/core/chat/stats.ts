import type { GenerationStats } from "../../api";
import type { GenerateResult } from "../engine/types";

/**
 * Per-answer numbers shown under each message. Tokens per second measure decoding only
 * (from the first token on): the prompt's cost is already visible as time to first token.
 */
export function statsFromResult(r: GenerateResult): GenerationStats {
  const decodeMs = r.ttftMs !== null && r.tokens > 1 ? r.durationMs - r.ttftMs : r.durationMs;
  const decodeTokens = r.ttftMs !== null && r.tokens > 1 ? r.tokens - 1 : r.tokens;
  const tokensPerSecond = decodeMs > 0 && decodeTokens > 0 ? (decodeTokens * 1000) / decodeMs : null;
  return {
    tokens: Math.max(0, Math.trunc(r.tokens)),
    ttftMs: r.ttftMs === null ? null : Math.max(0, r.ttftMs),
    durationMs: Math.max(0, r.durationMs),
    tokensPerSecond,
    contextTokens: Math.max(0, Math.trunc(r.contextTokens)),
    contextSize: Math.max(0, Math.trunc(r.contextSize)),
  };
}
