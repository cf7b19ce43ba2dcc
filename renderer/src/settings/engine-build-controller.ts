/**
 * "Build llama.cpp for this machine" (Settings): which binaries the engine runs, the build's
 * progress from `engine.build` events, its log tail when it fails, and going back to the
 * prebuilt binaries. Owned by AppController; dispose() releases its subscription.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { EngineBuild } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";

export interface EngineBuildState {
  status: EngineBuild | null;
  /** A call that failed (the build's own failure is in status.error). */
  error: string | null;
  busy: boolean;
}

export type EngineBuildStore = StoreApi<EngineBuildState>;

export class EngineBuildController {
  readonly store: EngineBuildStore = createStore<EngineBuildState>()(() => ({
    status: null,
    error: null,
    busy: false,
  }));
  private readonly disposers: Array<() => void> = [];

  constructor(private readonly api: RendererApi) {
    this.disposers.push(api.on("engine.build", (status) => this.store.setState({ status })));
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
  }

  async load(): Promise<void> {
    try {
      const status = await this.api.call("engine.buildStatus", {});
      this.store.setState({ status, error: null });
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
    }
  }

  /** Starts the build; it answers at once with state "building", progress follows as events. */
  build(): Promise<boolean> {
    return this.run(() => this.api.call("engine.build", {}));
  }

  usePrebuilt(): Promise<boolean> {
    return this.run(() => this.api.call("engine.usePrebuilt", {}));
  }

  private async run(call: () => Promise<EngineBuild>): Promise<boolean> {
    this.store.setState({ busy: true, error: null });
    try {
      const status = await call();
      this.store.setState({ status });
      return true;
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ busy: false });
    }
  }
}
