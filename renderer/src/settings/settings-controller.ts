/** App settings (settings.get / settings.update) and the Settings dialog's open state. */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { AppSettings } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";

export interface SettingsState {
  settings: AppSettings | null;
  open: boolean;
  saving: boolean;
  error: string | null;
}

export type SettingsStore = StoreApi<SettingsState>;

export class SettingsController {
  readonly store: SettingsStore = createStore<SettingsState>()(() => ({
    settings: null,
    open: false,
    saving: false,
    error: null,
  }));

  constructor(private readonly api: RendererApi) {}

  /** Opening re-reads the settings: another window may have changed them. */
  setOpen(open: boolean): void {
    this.store.setState({ open, error: null });
    if (open) void this.load();
  }

  async load(): Promise<void> {
    try {
      const settings = await this.api.call("settings.get", {});
      this.store.setState({ settings });
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
    }
  }

  /** Save a change; the store shows the server's answer (it may normalize the values). */
  async update(patch: Partial<AppSettings>): Promise<boolean> {
    this.store.setState({ saving: true, error: null });
    try {
      const settings = await this.api.call("settings.update", patch);
      this.store.setState({ settings });
      return true;
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ saving: false });
    }
  }
}
