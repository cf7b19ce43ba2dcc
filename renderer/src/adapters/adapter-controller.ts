/**
 * The installed specialist adapters as the UI sees them: the list (refreshed on
 * `adapters.changed` and when the loaded model changes, since "fits the model" depends on it),
 * the Adapters panel, install / enable / scale / remove, and the side-by-side comparison.
 * Owned by AppController; dispose() releases its subscriptions.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { AdapterInfo, HubAdapterFile } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { installFromPath, pickAndInstallWith } from "./install-flow";

export interface CompareState {
  adapterId: string;
  status: "idle" | "running" | "done" | "error";
  prompt: string;
  base: string | null;
  adapter: string | null;
  error: string | null;
}

export interface AdapterState {
  /** null until the first list answered (or while it fails). */
  adapters: AdapterInfo[] | null;
  listError: string | null;
  panelOpen: boolean;
  installing: boolean;
  /** The server's message for a refused install (wrong base, not a LoRA file, ...). */
  installError: string | null;
  /** A failed update or remove, shown in the panel. */
  actionError: string | null;
  /** Adapter ids with an update or remove in flight. */
  busyIds: readonly string[];
  compare: CompareState | null;
  /** "Find adapters for this model": hub adapters for the loaded base (null before a search). */
  hub: HubAdapterSearch;
}

export interface HubAdapterMatch {
  repo: string;
  /** GGUF files, and PEFT folders (`kind: "peft"`, converted for the loaded base on install). */
  files: HubAdapterFile[];
  /** Why it matches the loaded base (hub metadata, the file's architecture and shapes). */
  reason: string;
}

export interface HubAdapterSearch {
  results: HubAdapterMatch[] | null;
  searching: boolean;
  error: string | null;
  /** `repo/file` keys being installed, and the validation's message per key. */
  installing: readonly string[];
  installErrors: Readonly<Record<string, string>>;
  installed: readonly string[];
}

/** The key of one hub adapter file in HubAdapterSearch. */
export function hubFileKey(repo: string, file: string): string {
  return `${repo}/${file}`;
}

export type AdapterStore = StoreApi<AdapterState>;

function initialState(): AdapterState {
  return {
    adapters: null,
    listError: null,
    panelOpen: false,
    installing: false,
    installError: null,
    actionError: null,
    busyIds: [],
    compare: null,
    hub: { results: null, searching: false, error: null, installing: [], installErrors: {}, installed: [] },
  };
}

export class AdapterController {
  readonly store: AdapterStore = createStore<AdapterState>()(initialState);
  private readonly disposers: Array<() => void> = [];
  private listSeq = 0;
  private hubSeq = 0;
  private modelPath: string | null | undefined;

  constructor(private readonly api: RendererApi) {
    this.disposers.push(
      api.on("adapters.changed", () => void this.refresh()),
      api.on("engine.status", (engine) => {
        // Compatibility is computed against the loaded model: re-list when it changes.
        const path = engine.model?.path ?? null;
        if (this.modelPath !== undefined && path !== this.modelPath) void this.refresh();
        this.modelPath = path;
      }),
    );
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
  }

  /** Fetch the installed adapters; a slower, older answer never overwrites a newer one. */
  async refresh(): Promise<void> {
    const seq = ++this.listSeq;
    try {
      const adapters = await this.api.call("adapters.list", {});
      if (seq === this.listSeq) this.set({ adapters, listError: null });
    } catch (error) {
      if (seq === this.listSeq) this.set({ listError: errorMessage(error) });
    }
  }

  setPanelOpen(open: boolean): void {
    this.set(
      open ? { panelOpen: true } : { panelOpen: false, installError: null, actionError: null, compare: null },
    );
    if (open) void this.refresh();
  }

  /** Validate and install a LoRA file (or convert a PEFT folder) from a path on the machine running core. */
  install(path: string): Promise<boolean> {
    return installFromPath(
      this.store,
      path,
      "Enter the path of a LoRA adapter file (.gguf) or PEFT adapter folder.",
      async (p) => {
        const info = await this.api.call("adapters.install", { path: p });
        this.set((s) => ({ adapters: upsert(s.adapters, info) }));
      },
    );
  }

  /** Electron: native file dialog, then install; false when cancelled or refused. */
  pickAndInstall(): Promise<boolean> {
    return pickAndInstallWith(this.api, this.store, (path) => this.install(path));
  }

  /** Shown at once (a switch must follow the click); rolled back when core refuses. */
  async setEnabled(id: string, enabled: boolean): Promise<boolean> {
    const patchEnabled = (value: boolean) =>
      this.set((s) => ({
        adapters: s.adapters?.map((a) => (a.id === id ? { ...a, enabled: value } : a)) ?? null,
      }));
    patchEnabled(enabled);
    const ok = await this.update(id, { enabled });
    if (!ok) patchEnabled(!enabled);
    return ok;
  }

  setScale(id: string, scale: number): Promise<boolean> {
    return this.update(id, { scale: Math.min(2, Math.max(0, scale)) });
  }

  async remove(id: string): Promise<boolean> {
    return this.withBusy(id, async () => {
      await this.api.call("adapters.remove", { id });
      this.set((s) => ({
        adapters: s.adapters?.filter((a) => a.id !== id) ?? null,
        compare: s.compare?.adapterId === id ? null : s.compare,
      }));
    });
  }

  /** Open (or close, with null) the comparison of one adapter against the base model. */
  openCompare(adapterId: string | null): void {
    const current = this.store.getState().compare;
    if (adapterId === null) this.set({ compare: null });
    else if (current?.adapterId !== adapterId)
      this.set({
        compare: {
          adapterId,
          status: "idle",
          prompt: current?.prompt ?? "",
          base: null,
          adapter: null,
          error: null,
        },
      });
  }

  /** Answer `prompt` with the base alone and with the adapter (adapters.compare). */
  async compare(adapterId: string, prompt: string): Promise<void> {
    const text = prompt.trim();
    if (!text) {
      this.setCompare(adapterId, { status: "error", error: "Enter a test prompt first.", prompt });
      return;
    }
    this.set({ compare: { adapterId, status: "running", prompt, base: null, adapter: null, error: null } });
    try {
      const result = await this.api.call("adapters.compare", { adapterId, prompt: text.slice(0, 4000) });
      this.setCompare(adapterId, { status: "done", base: result.base, adapter: result.adapter });
    } catch (error) {
      this.setCompare(adapterId, { status: "error", error: errorMessage(error) });
    }
  }

  /** Search the hub for LoRA adapters made for the loaded base. */
  async findForBase(query: string): Promise<void> {
    const q = query.trim().slice(0, 200);
    const seq = ++this.hubSeq;
    this.setHub({ searching: true, error: null });
    try {
      const results = await this.api.call("hub.adaptersForBase", q ? { query: q } : {});
      if (seq === this.hubSeq) this.setHub({ results, searching: false });
    } catch (error) {
      if (seq === this.hubSeq) this.setHub({ error: errorMessage(error), searching: false });
    }
  }

  /** Download a hub adapter and install it with the same validation as a file. */
  async installFromHub(repo: string, file: string): Promise<boolean> {
    const key = hubFileKey(repo, file);
    this.set((s) => ({
      hub: {
        ...s.hub,
        installing: [...s.hub.installing, key],
        installErrors: Object.fromEntries(Object.entries(s.hub.installErrors).filter(([k]) => k !== key)),
      },
    }));
    try {
      const info = await this.api.call("hub.installAdapter", { repo, file });
      this.set((s) => ({
        adapters: upsert(s.adapters, info),
        hub: { ...s.hub, installed: [...s.hub.installed, key] },
      }));
      return true;
    } catch (error) {
      this.set((s) => ({
        hub: { ...s.hub, installErrors: { ...s.hub.installErrors, [key]: errorMessage(error) } },
      }));
      return false;
    } finally {
      this.set((s) => ({ hub: { ...s.hub, installing: s.hub.installing.filter((k) => k !== key) } }));
    }
  }

  private setHub(patch: Partial<HubAdapterSearch>): void {
    this.set((s) => ({ hub: { ...s.hub, ...patch } }));
  }

  dismissErrors(): void {
    this.set({ installError: null, actionError: null });
  }

  private async update(id: string, patch: { enabled?: boolean; scale?: number }): Promise<boolean> {
    return this.withBusy(id, async () => {
      const info = await this.api.call("adapters.update", { id, ...patch });
      this.set((s) => ({ adapters: upsert(s.adapters, info) }));
    });
  }

  private async withBusy(id: string, action: () => Promise<void>): Promise<boolean> {
    this.set((s) => ({ busyIds: [...s.busyIds, id], actionError: null }));
    try {
      await action();
      return true;
    } catch (error) {
      this.set({ actionError: errorMessage(error) });
      return false;
    } finally {
      this.set((s) => ({ busyIds: s.busyIds.filter((b) => b !== id) }));
    }
  }

  /** Patch the comparison only while it is still about this adapter (the user may have moved on). */
  private setCompare(adapterId: string, patch: Partial<CompareState>): void {
    this.set((s) => {
      if (s.compare && s.compare.adapterId !== adapterId) return {};
      const base: CompareState = s.compare ?? {
        adapterId,
        status: "idle",
        prompt: "",
        base: null,
        adapter: null,
        error: null,
      };
      return { compare: { ...base, error: null, ...patch } };
    });
  }

  private set(patch: Partial<AdapterState> | ((state: AdapterState) => Partial<AdapterState>)): void {
    this.store.setState(patch);
  }
}

/** Insert or replace an adapter, keeping the list ordered by name. */
export function upsert(list: readonly AdapterInfo[] | null, info: AdapterInfo): AdapterInfo[] {
  const rest = (list ?? []).filter((a) => a.id !== info.id);
  return [...rest, info].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}
