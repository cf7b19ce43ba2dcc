/**
 * The conversation list and the open conversation: selecting one (its detail is fetched
 * once), renaming, its adapter choice, full-text search, and applying the changes core
 * pushes. Shares the app store; AppController routes conversations.changed here.
 */
import type { AdapterSelection, Conversation } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { currentAdapters } from "../state/app-store";
import type { AppState, AppStore } from "../state/app-store";
import { mergeFetched, upsertConversation } from "../chat/chat-logic";
import { searchQuery, withDetailError, withoutConversation } from "./conversation-logic";

export class ConversationController {
  private searchSeq = 0;

  constructor(
    private readonly api: RendererApi,
    private readonly store: AppStore,
  ) {}

  /** Open a conversation (null: a new chat that is created on the first send). */
  select(id: string | null): void {
    const state = this.store.getState();
    if (id !== state.currentId) this.set({ currentId: id, composerError: null });
    // Fetch once; an event-created conversation (another window) has no detail yet.
    if (id && (state.detail[id] === undefined || state.detail[id] === "error")) void this.loadDetail(id);
  }

  /** A new chat, created on the first send. */
  newChat(): void {
    this.select(null);
  }

  /** The open conversation's adapter choice. */
  currentAdapters(): AdapterSelection {
    return currentAdapters(this.store.getState());
  }

  /** Fetch a conversation and its messages (conversations.get). */
  async loadDetail(id: string): Promise<void> {
    this.set((s) => ({ detail: { ...s.detail, [id]: "loading" } }));
    try {
      const detail = await this.api.call("conversations.get", { id });
      this.apply(detail.conversation);
      this.set((s) => ({
        messages: mergeFetched(s.messages, id, detail.messages),
        detail: { ...s.detail, [id]: "loaded" },
      }));
    } catch (error) {
      this.set((s) => withDetailError(s, id, error));
    }
  }

  /** Rename; resolves false (with a notice) when the server refused. */
  async rename(id: string, title: string): Promise<boolean> {
    const trimmed = title.trim();
    if (!trimmed) return false;
    try {
      const conversation = await this.api.call("conversations.rename", { id, title: trimmed.slice(0, 200) });
      this.apply(conversation);
      return true;
    } catch (error) {
      this.set({ notice: `Could not rename: ${errorMessage(error)}` });
      return false;
    }
  }

  /**
   * Set the open conversation's adapters (a new chat keeps the choice until its first send).
   * Shown at once; rolled back with a notice when core refuses it.
   */
  async setAdapters(selection: AdapterSelection): Promise<boolean> {
    const state = this.store.getState();
    const id = state.currentId;
    if (!id) {
      this.set({ draftAdapters: selection });
      return true;
    }
    const before = state.conversations.find((c) => c.id === id);
    if (before) this.apply({ ...before, adapters: selection });
    try {
      this.apply(await this.api.call("conversations.setAdapters", { id, adapters: selection }));
      return true;
    } catch (error) {
      const now = this.store.getState().conversations.find((c) => c.id === id);
      if (before && now) this.apply({ ...now, adapters: before.adapters });
      this.set({ notice: `Could not change the adapters: ${errorMessage(error)}` });
      return false;
    }
  }

  /** Full-text search over titles and messages; an empty query shows the plain list again. */
  async search(query: string): Promise<void> {
    const seq = ++this.searchSeq;
    this.set({ searchQuery: query });
    const sent = searchQuery(query);
    if (sent === null) {
      this.set({ searchHits: null });
      return;
    }
    try {
      const hits = await this.api.call("conversations.search", { query: sent, limit: 50 });
      // A slower answer to an older query must not overwrite the newer one.
      if (seq === this.searchSeq) this.set({ searchHits: hits });
    } catch (error) {
      if (seq === this.searchSeq) this.set({ notice: `Search failed: ${errorMessage(error)}` });
    }
  }

  /** A new or changed conversation (an answer from core, or conversations.changed). */
  apply(conversation: Conversation): void {
    this.set((s) => ({ conversations: upsertConversation(s.conversations, conversation) }));
  }

  /** A deleted conversation (here, or in another window). */
  forget(id: string): void {
    this.set((s) => withoutConversation(s, id));
  }

  private set(patch: Partial<AppState> | ((state: AppState) => Partial<AppState>)): void {
    this.store.setState(patch);
  }
}
