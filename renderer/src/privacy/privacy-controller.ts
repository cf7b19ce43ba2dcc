/**
 * The Privacy page: what may leave this device (privacy.get / privacy.update), the exact next
 * upload (privacy.preview), sync status live from `privacy.sync`, "Sync now" and "Delete my
 * uploaded data". Sharing more than before waits for an explicit confirmation in the page.
 * Owned by AppController; dispose() releases its subscription.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { PrivacyState, SharingLevel } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { previewText, sharesMore, stoppedSharingMessage } from "./privacy-logic";

export interface PrivacyPreview {
  text: string;
  bytes: number;
  items: number;
}

export interface PrivacyViewState {
  open: boolean;
  privacy: PrivacyState | null;
  loadError: string | null;
  /** A level the user picked that shares more: shown as a confirm step before it is saved. */
  pendingLevel: SharingLevel | null;
  /** The level being saved: the radio follows the click at once, not after the round trip. */
  applyingLevel: SharingLevel | null;
  saving: boolean;
  /** The feedback service URL being saved. */
  savingEndpoint: boolean;
  /** "Saved" after the URL was stored (cleared on the next edit or close). */
  endpointSaved: boolean;
  /** "Stopped sharing — N queued items deleted" after turning sharing off. */
  stoppedMessage: string | null;
  preview: PrivacyPreview | null;
  previewing: boolean;
  syncing: boolean;
  confirmingDelete: boolean;
  deleting: boolean;
  deleteResult: string | null;
  /** The last failed action (update, preview, sync, delete), shown in the page. */
  actionError: string | null;
}

export type PrivacyStore = StoreApi<PrivacyViewState>;

function initialState(): PrivacyViewState {
  return {
    open: false,
    privacy: null,
    loadError: null,
    pendingLevel: null,
    applyingLevel: null,
    saving: false,
    savingEndpoint: false,
    endpointSaved: false,
    stoppedMessage: null,
    preview: null,
    previewing: false,
    syncing: false,
    confirmingDelete: false,
    deleting: false,
    deleteResult: null,
    actionError: null,
  };
}

export class PrivacyController {
  readonly store: PrivacyStore = createStore<PrivacyViewState>()(initialState);
  private readonly disposers: Array<() => void> = [];

  constructor(private readonly api: RendererApi) {
    this.disposers.push(
      api.on("privacy.sync", (sync) =>
        this.set((s) => (s.privacy ? { privacy: { ...s.privacy, sync } } : {})),
      ),
    );
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
  }

  /** Opening re-reads the state (sync may have moved on); closing forgets the transient parts. */
  setOpen(open: boolean): void {
    if (open) {
      this.set({ open: true });
      void this.load();
    } else {
      this.set({ ...initialState(), privacy: this.store.getState().privacy });
    }
  }

  async load(): Promise<void> {
    try {
      const privacy = await this.api.call("privacy.get", {});
      this.set({ privacy, loadError: null });
    } catch (error) {
      this.set({ loadError: errorMessage(error) });
    }
  }

  /** The user picked a level: sharing more asks first, sharing less (or off) applies at once. */
  async chooseLevel(level: SharingLevel): Promise<boolean> {
    const current = this.store.getState().privacy?.sharing ?? "off";
    if (level === current) {
      this.set({ pendingLevel: null });
      return true;
    }
    if (sharesMore(current, level)) {
      this.set({ pendingLevel: level, stoppedMessage: null });
      return false;
    }
    return this.applyLevel(level);
  }

  /** The confirm step's "Turn on sharing". */
  confirmLevel(): Promise<boolean> {
    const level = this.store.getState().pendingLevel;
    return level ? this.applyLevel(level) : Promise.resolve(false);
  }

  cancelLevel(): void {
    this.set({ pendingLevel: null });
  }

  /** Fetch exactly the next batch that would be sent (after redaction). */
  async preview(): Promise<void> {
    this.set({ previewing: true, actionError: null });
    try {
      const { items, bytes } = await this.api.call("privacy.preview", {});
      this.set({ preview: { text: previewText(items), bytes, items: items.length } });
    } catch (error) {
      this.set({ actionError: `Could not build the preview: ${errorMessage(error)}` });
    } finally {
      this.set({ previewing: false });
    }
  }

  async syncNow(): Promise<void> {
    this.set({ syncing: true, actionError: null });
    try {
      const sync = await this.api.call("privacy.syncNow", {});
      this.set((s) => ({ privacy: s.privacy ? { ...s.privacy, sync } : s.privacy }));
      // What was sent is no longer "next": an open preview would be stale.
      if (this.store.getState().preview) await this.preview();
    } catch (error) {
      this.set({ actionError: `Sync failed: ${errorMessage(error)}` });
    } finally {
      this.set({ syncing: false });
    }
  }

  setConfirmingDelete(confirming: boolean): void {
    this.set({
      confirmingDelete: confirming,
      deleteResult: confirming ? null : this.store.getState().deleteResult,
    });
  }

  /** Ask the feedback service to delete everything tied to this install's random id. */
  async deleteUploaded(): Promise<boolean> {
    this.set({ deleting: true, actionError: null, confirmingDelete: false });
    try {
      const { deletedItems } = await this.api.call("privacy.deleteUploaded", {});
      this.set({
        deleteResult: `The feedback service deleted ${deletedItems} uploaded ${deletedItems === 1 ? "item" : "items"}.`,
      });
      return true;
    } catch (error) {
      this.set({ actionError: `Could not delete the uploaded data: ${errorMessage(error)}` });
      return false;
    } finally {
      this.set({ deleting: false });
    }
  }

  /**
   * Store the feedback service URL ("" clears it: nothing is uploaded until one is set). Core
   * checks it (https, or http to localhost); a refusal keeps the old one and says why.
   */
  async setEndpoint(endpoint: string): Promise<boolean> {
    this.set({ savingEndpoint: true, endpointSaved: false, actionError: null });
    try {
      const { privacy } = await this.api.call("privacy.update", { endpoint: endpoint.trim() });
      this.set({ privacy, endpointSaved: true });
      return true;
    } catch (error) {
      this.set({ actionError: `Could not save the feedback service URL: ${errorMessage(error)}` });
      return false;
    } finally {
      this.set({ savingEndpoint: false });
    }
  }

  /** The URL field was edited: an earlier "Saved" no longer describes it. */
  editEndpoint(): void {
    if (this.store.getState().endpointSaved) this.set({ endpointSaved: false });
  }

  private async applyLevel(level: SharingLevel): Promise<boolean> {
    this.set({ saving: true, applyingLevel: level, actionError: null, stoppedMessage: null });
    try {
      const { privacy, purged } = await this.api.call("privacy.update", { sharing: level });
      this.set({
        privacy,
        pendingLevel: null,
        stoppedMessage: level === "off" ? stoppedSharingMessage(purged) : null,
      });
      // The queue changed (emptied, or items now go out with/without text).
      if (this.store.getState().preview) await this.preview();
      return true;
    } catch (error) {
      this.set({ actionError: `Could not change the sharing level: ${errorMessage(error)}` });
      return false;
    } finally {
      this.set({ saving: false, applyingLevel: null });
    }
  }

  private set(patch: Partial<PrivacyViewState> | ((s: PrivacyViewState) => Partial<PrivacyViewState>)): void {
    this.store.setState(patch);
  }
}
