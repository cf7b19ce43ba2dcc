/**
 * Loading a model: the model panel, a .gguf path on the machine running core, the native file
 * picker (Electron) or the demo model. The engine status core answers goes into the app store.
 */
import type { EngineStatus, LoadSettings } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import type { AppState, AppStore } from "../state/app-store";

export class ModelController {
  constructor(
    private readonly api: RendererApi,
    private readonly store: AppStore,
  ) {}

  /** Closing the panel forgets its error. */
  setPanelOpen(open: boolean): void {
    this.set({ modelPanelOpen: open, modelError: open ? this.store.getState().modelError : null });
  }

  /**
   * Load a .gguf file from a path on the machine running core, with `settings` (core remembers
   * them for the model) or, without, the remembered or default ones.
   */
  open(path: string, settings?: LoadSettings): Promise<boolean> {
    const trimmed = path.trim();
    if (!trimmed) {
      this.set({ modelError: "Enter the path of a .gguf model file." });
      return Promise.resolve(false);
    }
    return this.load(() =>
      this.api.call("models.open", settings ? { path: trimmed, settings } : { path: trimmed }),
    );
  }

  openDemo(): Promise<boolean> {
    return this.load(() => this.api.call("models.openDemo", {}));
  }

  /** Free the loaded model (its memory goes back to the system); the chat then offers to load one. */
  unload(): Promise<boolean> {
    return this.load(() => this.api.call("models.unload", {}));
  }

  /** Electron: native file dialog, then load; resolves false when cancelled or failed. */
  async pickAndOpen(): Promise<boolean> {
    const pick = this.api.platform.pickModelFile;
    if (!pick) return false;
    let path: string | null;
    try {
      path = await pick();
    } catch (error) {
      this.set({ modelError: errorMessage(error) });
      return false;
    }
    return path ? this.open(path) : false;
  }

  private async load(load: () => Promise<EngineStatus>): Promise<boolean> {
    if (this.store.getState().modelBusy) return false;
    this.set({ modelBusy: true, modelError: null });
    try {
      const engine = await load();
      this.set({ engine, modelPanelOpen: false });
      return true;
    } catch (error) {
      this.set({ modelError: errorMessage(error) });
      return false;
    } finally {
      this.set({ modelBusy: false });
    }
  }

  private set(patch: Partial<AppState>): void {
    this.store.setState(patch);
  }
}
