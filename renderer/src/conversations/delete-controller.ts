/**
 * Deleting conversations with Undo: a delete hides the conversation at once and calls
 * conversations.delete (with its memories when the Undo toast says so) only after
 * UNDO_DELETE_MS. dispose() cancels the countdowns without deleting anything.
 */
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import type { AppState, AppStore } from "../state/app-store";
import { withDeleteMemories, withoutPendingDelete, withPendingDelete } from "./conversation-logic";

/** How long a deleted conversation can be restored with Undo. */
/** Long enough to notice the toast, read it and reach Undo (issue 30: 5 s was too short). */
export const UNDO_DELETE_MS = 10_000;

export class DeleteController {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly api: RendererApi,
    private readonly store: AppStore,
    /** Drops a deleted conversation from the store. */
    private readonly forget: (id: string) => void,
  ) {}

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Hide the conversation now and delete it after UNDO_DELETE_MS unless undone. */
  request(id: string): void {
    const conversation = this.store.getState().conversations.find((c) => c.id === id);
    if (!conversation || this.timers.has(id)) return;
    this.set((s) => withPendingDelete(s, conversation));
    this.arm(id);
  }

  /**
   * "Also delete memories from this conversation" in the Undo toast. Changing it restarts the
   * countdown: the user is still deciding.
   */
  setDeleteMemories(id: string, deleteMemories: boolean): void {
    if (!this.timers.has(id)) return;
    this.set((s) => ({ deleteMemoryIds: withDeleteMemories(s.deleteMemoryIds, id, deleteMemories) }));
    this.arm(id);
  }

  undo(id: string): void {
    const timer = this.timers.get(id);
    if (!timer) return;
    clearTimeout(timer);
    this.timers.delete(id);
    this.set((s) => withoutPendingDelete(s, id));
  }

  /** Delete everything still waiting for Undo now (the page is closing: the user meant it). */
  flush(): void {
    for (const [id, timer] of [...this.timers]) {
      clearTimeout(timer);
      void this.commit(id);
    }
  }

  private arm(id: string): void {
    const previous = this.timers.get(id);
    if (previous) clearTimeout(previous);
    this.timers.set(
      id,
      setTimeout(() => void this.commit(id), UNDO_DELETE_MS),
    );
  }

  private async commit(id: string): Promise<void> {
    this.timers.delete(id);
    const deleteMemories = this.store.getState().deleteMemoryIds.includes(id);
    try {
      await this.api.call("conversations.delete", deleteMemories ? { id, deleteMemories } : { id });
      this.forget(id);
    } catch (error) {
      this.set({ notice: `Could not delete the conversation: ${errorMessage(error)}` });
    } finally {
      this.set((s) => withoutPendingDelete(s, id));
    }
  }

  private set(patch: Partial<AppState> | ((state: AppState) => Partial<AppState>)): void {
    this.store.setState(patch);
  }
}
