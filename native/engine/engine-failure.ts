import type { EngineErrorCode } from "../../common/engine-protocol";

/**
 * A request the engine refuses or cannot serve, with the code its error reply carries (the
 * runtime answers any other error with "internal"). Thrown by the runtime's handlers and by
 * ModelSession for what only the loaded model can check (token ids, prompt length).
 */
export class EngineFailure extends Error {
  override name = "EngineFailure";

  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
  }
}
