/** Token estimates of the loaded model; the pure estimator is common/token-estimate.ts (the trainer uses it too). */
import { TokenEstimator, utf8Length } from "../../../common/token-estimate";
import type { ChatTurn, EngineClient, GenerateResult } from "../engine/types";

export { DEFAULT_BYTES_PER_TOKEN, TokenEstimator, utf8Length } from "../../../common/token-estimate";

/** Token estimates for the model the engine has loaded now, calibrated on its finished answers. */
export class LoadedModelTokens {
  private readonly estimator = new TokenEstimator();

  constructor(private readonly engine: EngineClient) {}

  estimate(text: string): number {
    return this.estimator.estimate(text, this.engine.loaded?.path ?? null);
  }

  /** Calibrate on what the prompt and answer of a generation really took in the context. */
  learn(history: readonly ChatTurn[], result: GenerateResult): void {
    const path = this.engine.loaded?.path;
    // A full context may have been shifted by the engine: its count says nothing about the text.
    if (!path || result.stopReason === "abort" || result.contextTokens >= result.contextSize) return;
    const bytes = history.reduce((sum, t) => sum + utf8Length(t.text), utf8Length(result.text));
    this.estimator.observe(path, bytes, result.contextTokens);
  }
}
