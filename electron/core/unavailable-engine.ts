import type { ApiError } from "../api";
import type { EngineClient, GenerateResult, LoadedModel } from "./engine/types";

/**
 * The engine core exposes while the database is unusable: no engine process is started until
 * the user restores a backup or starts fresh, and every request fails with the reason.
 */
export class UnavailableEngine implements EngineClient {
  readonly loaded: LoadedModel | null = null;

  constructor(private readonly reason: () => ApiError) {}

  load(): Promise<LoadedModel> {
    return Promise.reject(this.reason());
  }

  generate(): Promise<GenerateResult> {
    return Promise.reject(this.reason());
  }

  embed(): Promise<number[][]> {
    return Promise.reject(this.reason());
  }

  onLifecycle(): () => void {
    return () => undefined;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
