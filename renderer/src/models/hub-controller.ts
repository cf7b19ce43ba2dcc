/**
 * The model hub as the UI sees it: the Models dialog (Find a model / My models), search with a
 * debounce, the recommended list, one repo's files, the fit estimate for the chosen file,
 * downloads (from `hub.download` events and `hub.downloads`) and the access token.
 * Owned by AppController; dispose() releases its subscriptions and timers.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { Download, FitEstimate, HubModel, HubRepo, RecommendedModel } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { defaultFile, hubErrorKind, modelFiles, upsertDownload } from "./hub-logic";
import type { GpuLayers, HubErrorKind } from "./hub-logic";

export const SEARCH_DEBOUNCE_MS = 350;

export type ModelsTab = "find" | "local";

export interface HubFailure {
  message: string;
  kind: HubErrorKind;
}

export interface RepoView {
  repo: string;
  status: "loading" | "loaded" | "error";
  data: HubRepo | null;
  error: HubFailure | null;
  /** The quantization the recommended list offers first. */
  preferredQuant: string | null;
}

export interface FitView {
  status: "idle" | "loading" | "done" | "error";
  estimate: FitEstimate | null;
  error: string | null;
}

export interface TokenStatus {
  set: boolean;
  storage: "safeStorage" | "file";
}

export interface HubState {
  open: boolean;
  tab: ModelsTab;
  query: string;
  /** Results for `searchedQuery`; null before the first search (the recommended list shows). */
  results: HubModel[] | null;
  searchedQuery: string;
  searching: boolean;
  searchError: HubFailure | null;
  recommended: RecommendedModel[] | null;
  recommendedError: string | null;
  repo: RepoView | null;
  selectedFile: string | null;
  contextSize: number | null;
  gpuLayers: GpuLayers;
  fit: FitView;
  downloads: Download[];
  /** Ids the Downloads list leaves out: dismissed, or finished before this session. */
  hiddenDownloads: readonly string[];
  /** A download that could not start (or a pause/resume/cancel that failed). */
  downloadError: HubFailure | null;
  token: TokenStatus | null;
  tokenSaving: boolean;
  tokenError: string | null;
}

export type HubStore = StoreApi<HubState>;

function initialState(): HubState {
  return {
    open: false,
    tab: "find",
    query: "",
    results: null,
    searchedQuery: "",
    searching: false,
    searchError: null,
    recommended: null,
    recommendedError: null,
    repo: null,
    selectedFile: null,
    contextSize: null,
    gpuLayers: "auto",
    fit: { status: "idle", estimate: null, error: null },
    downloads: [],
    hiddenDownloads: [],
    downloadError: null,
    token: null,
    tokenSaving: false,
    tokenError: null,
  };
}

function failure(error: unknown): HubFailure {
  return { message: errorMessage(error), kind: hubErrorKind(error) };
}

export class HubController {
  readonly store: HubStore = createStore<HubState>()(initialState);
  private readonly disposers: Array<() => void> = [];
  private searchTimer: ReturnType<typeof setTimeout> | null = null;
  private fitTimer: ReturnType<typeof setTimeout> | null = null;
  private searchSeq = 0;
  private repoSeq = 0;
  private fitSeq = 0;

  constructor(
    private readonly api: RendererApi,
    /** A download finished: the local models list changed. */
    private readonly onDownloaded: (download: Download) => void = () => {},
  ) {
    this.disposers.push(
      api.on("hub.download", (d) => {
        const before = this.store.getState().downloads.find((x) => x.id === d.id);
        this.set((s) => ({ downloads: upsertDownload(s.downloads, d) }));
        if (d.state === "done" && before?.state !== "done") this.onDownloaded(d);
      }),
    );
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
    if (this.searchTimer) clearTimeout(this.searchTimer);
    if (this.fitTimer) clearTimeout(this.fitTimer);
  }

  /** Open the Models dialog on a tab; the first open loads the recommended list, downloads and token status. */
  setOpen(open: boolean, tab?: ModelsTab): void {
    this.set(tab ? { open, tab } : { open });
    if (!open) return;
    const s = this.store.getState();
    if (s.recommended === null) void this.loadRecommended();
    void this.refreshDownloads();
    if (s.token === null) void this.loadToken();
  }

  setTab(tab: ModelsTab): void {
    this.set({ tab });
  }

  async loadRecommended(): Promise<void> {
    this.set({ recommendedError: null });
    try {
      const recommended = await this.api.call("hub.recommended", {});
      this.set({ recommended });
    } catch (error) {
      this.set({ recommendedError: errorMessage(error) });
    }
  }

  async refreshDownloads(): Promise<void> {
    try {
      const list = await this.api.call("hub.downloads", {});
      // Events may have arrived meanwhile: merge, an event's newer state wins by id.
      this.set((s) => {
        let downloads = [...list].sort((a, b) => b.startedAt - a.startedAt);
        for (const d of s.downloads) {
          const listed = downloads.find((x) => x.id === d.id);
          if (!listed || (listed.state === d.state && d.downloadedBytes > listed.downloadedBytes))
            downloads = upsertDownload(downloads, d);
        }
        // Finished before this session (or before the list was first read): My models has them.
        const known = new Set(s.downloads.map((d) => d.id));
        const old = list.filter((d) => !known.has(d.id) && (d.state === "done" || d.state === "cancelled"));
        return { downloads, hiddenDownloads: [...new Set([...s.hiddenDownloads, ...old.map((d) => d.id)])] };
      });
    } catch {
      // Shown per download when an action fails; the list itself is not essential.
    }
  }

  /** The search box changed: search after a pause in typing; an empty box shows the recommended list. */
  setQuery(query: string): void {
    this.set({ query });
    if (this.searchTimer) clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => {
      this.searchTimer = null;
      void this.search(query);
    }, SEARCH_DEBOUNCE_MS);
  }

  /** Search now (Enter); a slower, older answer never overwrites a newer one. */
  async search(query: string = this.store.getState().query): Promise<void> {
    if (this.searchTimer) {
      clearTimeout(this.searchTimer);
      this.searchTimer = null;
    }
    const q = query.trim();
    const seq = ++this.searchSeq;
    if (!q) {
      this.set({ results: null, searchedQuery: "", searching: false, searchError: null });
      return;
    }
    this.set({ searching: true, searchError: null });
    try {
      const results = await this.api.call("hub.search", { query: q.slice(0, 200), limit: 30 });
      if (seq === this.searchSeq) this.set({ results, searchedQuery: q, searching: false });
    } catch (error) {
      if (seq === this.searchSeq)
        this.set({ searchError: failure(error), searching: false, searchedQuery: q });
    }
  }

  /** Show a repo's files (null: back to the list); picks the usual file and estimates its fit. */
  async openRepo(repo: string | null, preferredQuant: string | null = null): Promise<void> {
    const seq = ++this.repoSeq;
    this.fitSeq += 1;
    if (this.fitTimer) clearTimeout(this.fitTimer);
    if (repo === null) {
      this.set({
        repo: null,
        selectedFile: null,
        downloadError: null,
        fit: { status: "idle", estimate: null, error: null },
      });
      return;
    }
    this.set({
      repo: { repo, status: "loading", data: null, error: null, preferredQuant },
      selectedFile: null,
      downloadError: null,
      fit: { status: "idle", estimate: null, error: null },
    });
    try {
      const data = await this.api.call("hub.repo", { repo });
      if (seq !== this.repoSeq) return;
      const file = defaultFile(modelFiles(data), preferredQuant);
      this.set({
        repo: { repo, status: "loaded", data, error: null, preferredQuant },
        selectedFile: file?.path ?? null,
      });
      if (file) void this.estimate();
    } catch (error) {
      if (seq === this.repoSeq)
        this.set({ repo: { repo, status: "error", data: null, error: failure(error), preferredQuant } });
    }
  }

  selectFile(path: string): void {
    this.set({ selectedFile: path, downloadError: null });
    void this.estimate();
  }

  /** The fit controls changed: estimate again after a short pause (typing a number). */
  setFitInput(patch: { contextSize?: number | null; gpuLayers?: GpuLayers }): void {
    this.set(patch);
    if (this.fitTimer) clearTimeout(this.fitTimer);
    this.fitTimer = setTimeout(() => {
      this.fitTimer = null;
      void this.estimate();
    }, SEARCH_DEBOUNCE_MS);
  }

  /** hub.fit for the selected file with the chosen context and GPU layers. */
  async estimate(): Promise<void> {
    const { repo, selectedFile, contextSize, gpuLayers } = this.store.getState();
    if (!repo?.data || !selectedFile) return;
    const seq = ++this.fitSeq;
    this.set((s) => ({ fit: { ...s.fit, status: "loading", error: null } }));
    try {
      const estimate = await this.api.call("hub.fit", {
        repo: repo.repo,
        file: selectedFile,
        ...(contextSize !== null ? { contextSize } : {}),
        gpuLayers,
      });
      if (seq === this.fitSeq) this.set({ fit: { status: "done", estimate, error: null } });
    } catch (error) {
      if (seq !== this.fitSeq) return;
      this.set({ fit: { status: "error", estimate: null, error: errorMessage(error) } });
      if (hubErrorKind(error) === "token") this.set({ downloadError: failure(error) });
    }
  }

  /** Start downloading the selected file (all parts). */
  async download(repo: string, file: string): Promise<Download | null> {
    this.set({ downloadError: null });
    try {
      const d = await this.api.call("hub.download", { repo, file });
      this.set((s) => ({ downloads: upsertDownload(s.downloads, d) }));
      return d;
    } catch (error) {
      this.set({ downloadError: failure(error) });
      return null;
    }
  }

  pause(id: string): Promise<boolean> {
    return this.act(() => this.api.call("hub.pause", { id }));
  }

  resume(id: string): Promise<boolean> {
    return this.act(() => this.api.call("hub.resume", { id }));
  }

  cancel(id: string): Promise<boolean> {
    return this.act(() => this.api.call("hub.cancel", { id }));
  }

  /** Keep a download the hub gave no sha256 for (the user's decision after reading why). */
  acceptUnverified(id: string): Promise<boolean> {
    return this.act(() => this.api.call("hub.acceptUnverified", { id }));
  }

  /** Forget a finished, failed or cancelled download in the list (the server keeps its own). */
  dismiss(id: string): void {
    this.set((s) => ({ hiddenDownloads: [...s.hiddenDownloads, id] }));
  }

  async loadToken(): Promise<void> {
    try {
      const token = await this.api.call("hub.tokenStatus", {});
      this.set({ token });
    } catch (error) {
      this.set({ tokenError: errorMessage(error) });
    }
  }

  /** Store (or, with null, delete) the access token; after a token-gated failure, tries again. */
  async setToken(token: string | null): Promise<boolean> {
    const value = token === null ? null : token.trim();
    if (value === "") {
      this.set({ tokenError: "Paste the access token first." });
      return false;
    }
    this.set({ tokenSaving: true, tokenError: null });
    try {
      const status = await this.api.call("hub.setToken", { token: value });
      this.set({ token: status });
      const s = this.store.getState();
      if (value !== null && s.downloadError?.kind === "token") {
        this.set({ downloadError: null });
        void this.estimate();
      }
      if (value !== null && s.repo?.status === "error" && s.repo.error?.kind === "token")
        void this.openRepo(s.repo.repo, s.repo.preferredQuant);
      return true;
    } catch (error) {
      this.set({ tokenError: errorMessage(error) });
      return false;
    } finally {
      this.set({ tokenSaving: false });
    }
  }

  private async act(call: () => Promise<Download>): Promise<boolean> {
    this.set({ downloadError: null });
    try {
      const d = await call();
      const before = this.store.getState().downloads.find((x) => x.id === d.id);
      this.set((s) => ({ downloads: upsertDownload(s.downloads, d) }));
      // The reply may overtake its own event (an accepted download is done at once).
      if (d.state === "done" && before?.state !== "done") this.onDownloaded(d);
      return true;
    } catch (error) {
      this.set({ downloadError: failure(error) });
      return false;
    }
  }

  private set(patch: Partial<HubState> | ((state: HubState) => Partial<HubState>)): void {
    this.store.setState(patch);
  }
}
