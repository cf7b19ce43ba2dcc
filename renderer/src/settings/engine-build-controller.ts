/**
 * "Build llama.cpp for this machine" (Settings): which binaries the engine runs, the build's
 * progress from `engine.build` events, its log tail when it fails, and going back to the
 * prebuilt binaries. Owned by AppController; dispose() releases its subscription.
 */
import type { StoreApi } from "zustand/vanilla";
import type { EngineBuild } from "../../../electron/api";
import type { RendererApi } from "../api";
import { StatusController, type StatusState } from "./status-controller";

/** The build's own failure is in status.error; `error` here is a call that failed. */
export type EngineBuildState = StatusState<EngineBuild>;
export type EngineBuildStore = StoreApi<EngineBuildState>;

export class EngineBuildController extends StatusController<EngineBuild> {
  constructor(private readonly api: RendererApi) {
    super(
      (onStatus) => api.on("engine.build", onStatus),
      () => api.call("engine.buildStatus", {}),
    );
  }

  /** Starts the build; it answers at once with state "building", progress follows as events. */
  build(): Promise<boolean> {
    return this.run(() => this.api.call("engine.build", {}));
  }

  usePrebuilt(): Promise<boolean> {
    return this.run(() => this.api.call("engine.usePrebuilt", {}));
  }
}
