/**
 * Adapter versions and releases as the UI sees them: the version history of one adapter
 * (opened from the Adapters panel), the evaluation gate's progress from `adapters.gate`,
 * promote / rollback / prune / install-a-version, the release history, and the notices
 * ("Coding 2.0.0 is live") when a gate decides. Owned by AppController; dispose() releases
 * its subscriptions.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { AdapterVersionInfo, GateProgress, Release } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { installFromPath, pickAndInstallWith } from "./install-flow";
import { describePrune, gateNotice, prependRelease, versionKey } from "./release-logic";
import type { NameOf } from "./release-logic";

export interface ReleaseNotice {
  id: number;
  text: string;
  tone: "ok" | "error";
}

/** At most this many notices at once: the oldest goes when another arrives. */
export const MAX_NOTICES = 3;
/**
 * How long a notice stays: long enough to read, short enough not to sit on the composer. What
 * it says stays in the version history and in Settings.
 */
export const NOTICE_MS = 15_000;

export interface ReleaseState {
  /** The adapter whose version history is open in the Adapters panel. */
  openId: string | null;
  /** Version lists by adapter id (newest first), as last fetched. */
  versions: Record<string, AdapterVersionInfo[]>;
  versionsError: string | null;
  /** The latest gate event of each version, by `id@version`. */
  gates: Record<string, GateProgress>;
  /** `id@version` keys with a promote or rollback in flight. */
  busy: readonly string[];
  actionError: string | null;
  /** Adapter id being pruned, or null. */
  pruning: string | null;
  /** "Deleted 2 old version files, freed 1.2 MB." after a prune. */
  pruneResult: string | null;
  installing: boolean;
  installError: string | null;
  /** The release history (newest first); null until loaded. */
  releases: Release[] | null;
  releasesError: string | null;
  notices: ReleaseNotice[];
}

export type ReleaseStore = StoreApi<ReleaseState>;

function initialState(): ReleaseState {
  return {
    openId: null,
    versions: {},
    versionsError: null,
    gates: {},
    busy: [],
    actionError: null,
    pruning: null,
    pruneResult: null,
    installing: false,
    installError: null,
    releases: null,
    releasesError: null,
    notices: [],
  };
}

export class ReleaseController {
  readonly store: ReleaseStore = createStore<ReleaseState>()(initialState);
  private readonly disposers: Array<() => void> = [];
  private readonly versionSeq = new Map<string, number>();
  private noticeSeq = 0;
  private readonly noticeTimers = new Map<number, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly api: RendererApi,
    private readonly nameOf: NameOf,
    private readonly noticeMs = NOTICE_MS,
  ) {
    this.disposers.push(
      api.on("adapters.gate", (gate) => this.onGate(gate)),
      // Promotions, rejections, rollbacks, prunes and new staged versions all announce this.
      api.on("adapters.changed", () => {
        const id = this.store.getState().openId;
        if (id) void this.refreshVersions(id);
      }),
      api.on("releases.changed", ({ release }) =>
        this.set((s) => ({ releases: prependRelease(s.releases, release) })),
      ),
    );
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
    for (const timer of this.noticeTimers.values()) clearTimeout(timer);
    this.noticeTimers.clear();
  }

  /** Open (or close, with null) the version history of an adapter. */
  openVersions(adapterId: string | null): void {
    this.set({ openId: adapterId, versionsError: null, actionError: null, pruneResult: null });
    if (adapterId) void this.refreshVersions(adapterId);
  }

  /** Fetch an adapter's versions; an older answer never overwrites a newer one. */
  async refreshVersions(adapterId: string): Promise<void> {
    const seq = (this.versionSeq.get(adapterId) ?? 0) + 1;
    this.versionSeq.set(adapterId, seq);
    try {
      const list = await this.api.call("adapters.versions", { id: adapterId });
      if (this.versionSeq.get(adapterId) === seq) {
        this.set((s) => ({ versions: { ...s.versions, [adapterId]: list }, versionsError: null }));
      }
    } catch (error) {
      if (this.versionSeq.get(adapterId) === seq) this.set({ versionsError: errorMessage(error) });
    }
  }

  /** Run the contract on a staged or rejected version now; it goes live when it passes. */
  runContract(adapterId: string, version: string): Promise<boolean> {
    return this.withBusy(adapterId, version, () =>
      this.api.call("adapters.promote", { id: adapterId, version }),
    );
  }

  /** Make a retired version live again at once (no gate: it was live before). */
  rollback(adapterId: string, version: string): Promise<boolean> {
    return this.withBusy(adapterId, version, () =>
      this.api.call("adapters.rollback", { id: adapterId, version }),
    );
  }

  /** Delete the kept files of retired and rejected versions; the result says what it freed. */
  async prune(adapterId: string): Promise<boolean> {
    if (this.store.getState().pruning) return false;
    this.set({ pruning: adapterId, pruneResult: null, actionError: null });
    try {
      const result = await this.api.call("adapters.prune", { id: adapterId });
      this.set({ pruneResult: describePrune(result) });
      await this.refreshVersions(adapterId);
      return true;
    } catch (error) {
      this.set({ actionError: errorMessage(error) });
      return false;
    } finally {
      this.set({ pruning: null });
    }
  }

  /**
   * Stage a new version from a file (its manifest beside it names the adapter); the gate then
   * runs in the background. Opens that adapter's history so its progress shows.
   */
  installVersion(path: string): Promise<boolean> {
    return installFromPath(
      this.store,
      path,
      "Enter the path of the new version's adapter file (.gguf).",
      async (p) => {
        const info = await this.api.call("adapters.installVersion", { path: p });
        this.set((s) => ({
          openId: info.adapterId,
          versions: { ...s.versions, [info.adapterId]: upsertVersion(s.versions[info.adapterId], info) },
        }));
        await this.refreshVersions(info.adapterId);
      },
    );
  }

  /** Electron: native file dialog, then installVersion; false when cancelled or refused. */
  pickAndInstallVersion(): Promise<boolean> {
    return pickAndInstallWith(this.api, this.store, (path) => this.installVersion(path));
  }

  /** Load the release history (newest first). */
  async loadReleases(limit = 50): Promise<void> {
    try {
      const releases = await this.api.call("releases.list", { limit });
      this.set({ releases, releasesError: null });
    } catch (error) {
      this.set({ releasesError: errorMessage(error) });
    }
  }

  /** The release that produced an assistant message (null for answers older than releases). */
  releaseForMessage(messageId: string): Promise<Release | null> {
    return this.api.call("releases.forMessage", { messageId });
  }

  dismissNotice(id: number): void {
    const timer = this.noticeTimers.get(id);
    if (timer) clearTimeout(timer);
    this.noticeTimers.delete(id);
    this.set((s) => ({ notices: s.notices.filter((n) => n.id !== id) }));
  }

  private onGate(gate: GateProgress): void {
    const key = versionKey(gate.adapterId, gate.version);
    this.set((s) => ({ gates: { ...s.gates, [key]: gate } }));
    const notice = gateNotice(gate, this.nameOf);
    if (notice) {
      const id = ++this.noticeSeq;
      const kept = [...this.store.getState().notices, { id, ...notice }];
      for (const dropped of kept.splice(0, Math.max(0, kept.length - MAX_NOTICES)))
        this.dismissNotice(dropped.id);
      this.set({ notices: kept });
      this.noticeTimers.set(
        id,
        setTimeout(() => this.dismissNotice(id), this.noticeMs),
      );
    }
    // Decided (or could not run): the stored status and report changed; re-read them.
    const openId = this.store.getState().openId;
    const decided = gate.state === "passed" || gate.state === "failed" || gate.state === "error";
    if (decided && openId === gate.adapterId) void this.refreshVersions(openId);
  }

  private async withBusy(
    adapterId: string,
    version: string,
    action: () => Promise<AdapterVersionInfo>,
  ): Promise<boolean> {
    const key = versionKey(adapterId, version);
    this.set((s) => ({ busy: [...s.busy, key], actionError: null, pruneResult: null }));
    try {
      const info = await action();
      this.set((s) => ({
        versions: { ...s.versions, [adapterId]: upsertVersion(s.versions[adapterId], info) },
      }));
      await this.refreshVersions(adapterId);
      return true;
    } catch (error) {
      this.set({ actionError: errorMessage(error) });
      return false;
    } finally {
      this.set((s) => ({ busy: s.busy.filter((b) => b !== key) }));
    }
  }

  private set(patch: Partial<ReleaseState> | ((state: ReleaseState) => Partial<ReleaseState>)): void {
    this.store.setState(patch);
  }
}

/** Replace a version in a list (or put a new one first: lists are newest first). */
export function upsertVersion(
  list: readonly AdapterVersionInfo[] | undefined,
  info: AdapterVersionInfo,
): AdapterVersionInfo[] {
  const current = list ?? [];
  return current.some((v) => v.version === info.version)
    ? current.map((v) => (v.version === info.version ? info : v))
    : [info, ...current];
}
