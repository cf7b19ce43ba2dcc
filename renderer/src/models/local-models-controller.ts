/**
 * The models on this machine (the data folder's models/): the list, deleting one, and the load
 * settings dialog (its remembered or default settings, the fit estimate while the user changes
 * context and GPU layers, loading with the chosen settings). The load itself goes through the
 * app's ModelController (`load`), so the header and the model panel follow it as always.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { FitEstimate, LoadSettings, LocalModel, ModelProfile } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import type { GpuLayers } from "./hub-logic";

export const FIT_DEBOUNCE_MS = 300;

export interface LoadDialogState {
  path: string;
  /** What the dialog calls the model (its name, else the file name). */
  name: string;
  /** The model's training context when known (from models.local); 0 = unknown. */
  contextLength: number;
  status: "loading" | "ready" | "error";
  settings: LoadSettings | null;
  remembered: boolean;
  profile: ModelProfile | null;
  error: string | null;
  fit: FitEstimate | null;
  fitStatus: "idle" | "loading" | "done" | "error";
  fitError: string | null;
  /** The load (models.open) is running. */
  opening: boolean;
  openError: string | null;
}

export interface LocalModelsState {
  models: LocalModel[] | null;
  listError: string | null;
  /** The path being deleted. */
  deleting: string | null;
  /** The server's reason for a refused delete (e.g. the loaded model). */
  deleteError: { path: string; message: string } | null;
  load: LoadDialogState | null;
}

export type LocalModelsStore = StoreApi<LocalModelsState>;

export class LocalModelsController {
  readonly store: LocalModelsStore = createStore<LocalModelsState>()(() => ({
    models: null,
    listError: null,
    deleting: null,
    deleteError: null,
    load: null,
  }));
  private listSeq = 0;
  private fitSeq = 0;
  private fitTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly api: RendererApi,
    /** Loads through the app's model controller; resolves false with its error in `modelError`. */
    private readonly openModel: (
      path: string,
      settings: LoadSettings,
    ) => Promise<{ ok: boolean; error: string | null }>,
  ) {}

  dispose(): void {
    if (this.fitTimer) clearTimeout(this.fitTimer);
  }

  async refresh(): Promise<void> {
    const seq = ++this.listSeq;
    try {
      const models = await this.api.call("models.local", {});
      if (seq === this.listSeq) this.set({ models, listError: null });
    } catch (error) {
      if (seq === this.listSeq) this.set({ listError: errorMessage(error) });
    }
  }

  async remove(path: string): Promise<boolean> {
    this.set({ deleting: path, deleteError: null });
    try {
      await this.api.call("models.delete", { path });
      this.set((s) => ({ models: s.models?.filter((m) => m.path !== path) ?? null }));
      void this.refresh();
      return true;
    } catch (error) {
      this.set({ deleteError: { path, message: errorMessage(error) } });
      return false;
    } finally {
      this.set({ deleting: null });
    }
  }

  dismissDeleteError(): void {
    this.set({ deleteError: null });
  }

  /**
   * Open the load settings dialog for a model file: its settings, then a first fit estimate.
   * `contextSize`: the context the user chose where they came from (the hub's fit estimate),
   * which replaces the remembered or default one.
   */
  async openLoadDialog(model: {
    path: string;
    name?: string;
    contextLength?: number;
    contextSize?: number | null;
  }): Promise<void> {
    const known = this.store.getState().models?.find((m) => m.path === model.path);
    const name = model.name ?? known?.name ?? model.path.slice(model.path.lastIndexOf("/") + 1);
    const contextLength = model.contextLength ?? known?.contextLength ?? 0;
    this.set({
      load: {
        path: model.path,
        name,
        contextLength,
        status: "loading",
        settings: null,
        remembered: false,
        profile: null,
        error: null,
        fit: null,
        fitStatus: "idle",
        fitError: null,
        opening: false,
        openError: null,
      },
    });
    try {
      const loaded = await this.api.call("models.loadSettings", { path: model.path });
      const chosen = model.contextSize ?? null;
      const result =
        chosen === null ? loaded : { ...loaded, settings: { ...loaded.settings, contextSize: chosen } };
      this.patchLoad(model.path, { status: "ready", ...result });
      void this.fit(model.path, {
        ...(result.settings.contextSize !== null ? { contextSize: result.settings.contextSize } : {}),
        gpuLayers: result.settings.gpuLayers,
      });
    } catch (error) {
      this.patchLoad(model.path, { status: "error", error: errorMessage(error) });
    }
  }

  closeLoadDialog(): void {
    this.fitSeq += 1;
    if (this.fitTimer) clearTimeout(this.fitTimer);
    this.set({ load: null });
  }

  /** The dialog's context or GPU layers changed: estimate again once the typing rests. */
  fitSoon(path: string, input: { contextSize?: number; gpuLayers?: GpuLayers }): void {
    if (this.fitTimer) clearTimeout(this.fitTimer);
    this.fitTimer = setTimeout(() => {
      this.fitTimer = null;
      void this.fit(path, input);
    }, FIT_DEBOUNCE_MS);
  }

  async fit(path: string, input: { contextSize?: number; gpuLayers?: GpuLayers }): Promise<void> {
    const seq = ++this.fitSeq;
    this.patchLoad(path, { fitStatus: "loading", fitError: null });
    try {
      const fit = await this.api.call("models.fit", { path, ...input });
      if (seq === this.fitSeq) this.patchLoad(path, { fit, fitStatus: "done" });
    } catch (error) {
      if (seq === this.fitSeq) this.patchLoad(path, { fitStatus: "error", fitError: errorMessage(error) });
    }
  }

  /** Load with these settings (core remembers them for the model); closes the dialog when loaded. */
  async load(path: string, settings: LoadSettings): Promise<boolean> {
    this.patchLoad(path, { opening: true, openError: null });
    const { ok, error } = await this.openModel(path, settings);
    if (ok) {
      if (this.store.getState().load?.path === path) this.closeLoadDialog();
      return true;
    }
    this.patchLoad(path, { opening: false, openError: error ?? "The model could not be loaded." });
    return false;
  }

  /** Remember settings for the model without loading it. */
  async saveSettings(path: string, settings: LoadSettings): Promise<boolean> {
    this.patchLoad(path, { openError: null });
    try {
      const saved = await this.api.call("models.setLoadSettings", { path, settings });
      this.patchLoad(path, { settings: saved, remembered: true });
      return true;
    } catch (error) {
      this.patchLoad(path, { openError: errorMessage(error) });
      return false;
    }
  }

  private patchLoad(path: string, patch: Partial<LoadDialogState>): void {
    this.set((s) => (s.load?.path === path ? { load: { ...s.load, ...patch } } : {}));
  }

  private set(
    patch: Partial<LocalModelsState> | ((state: LocalModelsState) => Partial<LocalModelsState>),
  ): void {
    this.store.setState(patch);
  }
}
