/**
 * The Memory panel: the long-term memories (memories.*), refreshed on `memories.changed`
 * while the panel is open, with add, edit, keep (accept a proposal), discard and delete.
 * Owned by AppController; dispose() releases its subscription.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { Memory } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { upsertMemory } from "./memory-logic";

export interface MemoryState {
  open: boolean;
  /** null until the first list answered. */
  memories: Memory[] | null;
  listError: string | null;
  /** The last failed add, edit or delete. */
  actionError: string | null;
  /** Memory ids with a call in flight. */
  busyIds: readonly string[];
  adding: boolean;
}

export type MemoryStore = StoreApi<MemoryState>;

export class MemoryController {
  readonly store: MemoryStore = createStore<MemoryState>()(() => ({
    open: false,
    memories: null,
    listError: null,
    actionError: null,
    busyIds: [],
    adding: false,
  }));
  private readonly disposers: Array<() => void> = [];
  private listSeq = 0;

  constructor(private readonly api: RendererApi) {
    this.disposers.push(
      api.on("memories.changed", () => {
        // Closed: nothing shows the list; opening fetches it anyway.
        if (this.store.getState().open) void this.refresh();
      }),
    );
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
  }

  setOpen(open: boolean): void {
    this.store.setState(open ? { open: true } : { open: false, actionError: null });
    if (open) void this.refresh();
  }

  /** Fetch the memories; a slower, older answer never overwrites a newer one. */
  async refresh(): Promise<void> {
    const seq = ++this.listSeq;
    try {
      const memories = await this.api.call("memories.list", {});
      if (seq === this.listSeq) this.store.setState({ memories, listError: null });
    } catch (error) {
      if (seq === this.listSeq) this.store.setState({ listError: errorMessage(error) });
    }
  }

  /** Add a memory the user typed; resolves false (error shown) when empty or refused. */
  async create(text: string): Promise<boolean> {
    const trimmed = text.trim();
    if (!trimmed) {
      this.store.setState({ actionError: "Type the memory first." });
      return false;
    }
    if (this.store.getState().adding) return false;
    this.store.setState({ adding: true, actionError: null });
    try {
      const memory = await this.api.call("memories.create", { text: trimmed.slice(0, 2000) });
      this.put(memory);
      return true;
    } catch (error) {
      this.store.setState({ actionError: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ adding: false });
    }
  }

  /** Change a memory's text. */
  async edit(id: string, text: string): Promise<boolean> {
    const trimmed = text.trim();
    if (!trimmed) {
      this.store.setState({ actionError: "A memory cannot be empty. Delete it instead." });
      return false;
    }
    return this.withBusy(id, async () =>
      this.put(await this.api.call("memories.update", { id, text: trimmed.slice(0, 2000) })),
    );
  }

  /** "Keep" a proposed memory: it becomes active and is used from now on. */
  keep(id: string): Promise<boolean> {
    return this.withBusy(id, async () =>
      this.put(await this.api.call("memories.update", { id, status: "active" })),
    );
  }

  /** Delete a memory ("Discard" for a proposed one). */
  remove(id: string): Promise<boolean> {
    return this.withBusy(id, async () => {
      await this.api.call("memories.delete", { id });
      this.store.setState((s) => ({ memories: s.memories?.filter((m) => m.id !== id) ?? null }));
    });
  }

  /**
   * "Discard all" proposals: each one shown now is deleted (kept memories are never touched).
   * Resolves how many were discarded; a failure stops there and is shown, the rest stay listed.
   */
  async discardProposed(): Promise<number> {
    const ids = (this.store.getState().memories ?? [])
      .filter((m) => m.status === "proposed")
      .map((m) => m.id);
    if (ids.length === 0) return 0;
    this.store.setState((s) => ({ busyIds: [...s.busyIds, ...ids], actionError: null }));
    let discarded = 0;
    try {
      for (const id of ids) {
        await this.api.call("memories.delete", { id });
        discarded += 1;
        this.store.setState((s) => ({ memories: s.memories?.filter((m) => m.id !== id) ?? null }));
      }
    } catch (error) {
      this.store.setState({ actionError: `Discarded ${discarded} of ${ids.length}: ${errorMessage(error)}` });
    } finally {
      const done = new Set(ids);
      this.store.setState((s) => ({ busyIds: s.busyIds.filter((b) => !done.has(b)) }));
    }
    return discarded;
  }

  dismissError(): void {
    this.store.setState({ actionError: null });
  }

  private put(memory: Memory): void {
    this.store.setState((s) => ({ memories: upsertMemory(s.memories, memory) }));
  }

  private async withBusy(id: string, action: () => Promise<void>): Promise<boolean> {
    this.store.setState((s) => ({ busyIds: [...s.busyIds, id], actionError: null }));
    try {
      await action();
      return true;
    } catch (error) {
      this.store.setState({ actionError: errorMessage(error) });
      return false;
    } finally {
      this.store.setState((s) => ({ busyIds: s.busyIds.filter((b) => b !== id) }));
    }
  }
}
