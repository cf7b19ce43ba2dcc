/**
 * Registry updates of adapters as the Settings dialog shows them: the settings (automatic
 * updates, update server, last check), "Check for updates", and the live progress from
 * `adapters.updates` (checking, downloading, verifying, staged, failed). Owned by
 * AppController; dispose() releases its subscription.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { UpdateCheck, UpdateProgress, UpdateSettings } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { versionKey } from "../adapters/release-logic";

export interface UpdateState {
  settings: UpdateSettings | null;
  loadError: string | null;
  saving: boolean;
  saveError: string | null;
  /** A check call is in flight (the downloads and gates go on after it returns). */
  checking: boolean;
  /** The latest registry progress event (null before any). */
  progress: UpdateProgress | null;
  /** The latest progress event of each version, by `id@version` (what happened to each). */
  byVersion: Record<string, UpdateProgress>;
  /** What the last check from this window found. */
  lastCheck: UpdateCheck | null;
  checkError: string | null;
}

export type UpdateStore = StoreApi<UpdateState>;

export type UpdateChange = { autoUpdate?: boolean; registryUrl?: string | null; intervalMinutes?: number };

export class UpdateController {
  readonly store: UpdateStore = createStore<UpdateState>()(() => ({
    settings: null,
    loadError: null,
    saving: false,
    saveError: null,
    checking: false,
    progress: null,
    byVersion: {},
    lastCheck: null,
    checkError: null,
  }));
  private readonly disposers: Array<() => void> = [];

  constructor(private readonly api: RendererApi) {
    this.disposers.push(
      api.on("adapters.updates", (progress) => {
        this.store.setState((s) => ({
          progress,
          byVersion:
            progress.adapterId && progress.version
              ? { ...s.byVersion, [versionKey(progress.adapterId, progress.version)]: progress }
              : s.byVersion,
        }));
        // The check ended (or failed): its time and error are in the settings now.
        if (progress.state === "idle" || (progress.state === "failed" && progress.adapterId === null))
          void this.load();
      }),
    );
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
  }

  async load(): Promise<void> {
    try {
      const settings = await this.api.call("updates.get", {});
      this.store.setState({ settings, loadError: null });
    } catch (error) {
      this.store.setState({ loadError: errorMessage(error) });
    }
  }

  /** Save a change; an empty update server means none (null). The store shows the server's answer. */
  async configure(change: UpdateChange): Promise<boolean> {
    const input = { ...change };
    if (typeof input.registryUrl === "string") input.registryUrl = input.registryUrl.trim() || null;
    this.store.setState({ saving: true, saveError: null });
    try {
      const settings = await this.api.call("updates.configure", input);
      this.store.setState({ settings });
      return true;
    } catch (error) {
      this.store.setState({ saveError: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ saving: false });
    }
  }

  /**
   * Ask the registry for newer versions. Resolves once the index was read; downloads and the
   * contract then go on in the background (their progress arrives as events).
   */
  async check(): Promise<boolean> {
    if (this.store.getState().checking) return false;
    this.store.setState({ checking: true, checkError: null });
    try {
      const lastCheck = await this.api.call("adapters.checkUpdates", {});
      this.store.setState({ lastCheck });
      return true;
    } catch (error) {
      this.store.setState({ checkError: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ checking: false });
      void this.load();
    }
  }
}
