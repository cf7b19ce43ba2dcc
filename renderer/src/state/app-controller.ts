/**
 * The UI's actions: it owns the store, the API client's subscriptions and the timers, and
 * turns user intents and pushed events into store updates. One instance per app; dispose()
 * releases everything (no module-level state).
 */
import type { AdapterSelection, Conversation, EngineStatus, Message } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { AdapterController } from "./adapter-controller";
import { canChat, createAppStore, currentAdapters } from "./app-store";
import { DatabaseController, isDatabaseUnavailable } from "./database-controller";
import { FeedbackController } from "./feedback-controller";
import { MemoryController } from "./memory-controller";
import { PrivacyController } from "./privacy-controller";
import { ReleaseController } from "./release-controller";
import { TransferController } from "./transfer-controller";
import type { AppState, AppStore } from "./app-store";
import {
  applyDeltas,
  applyDone,
  isStreaming,
  mergeFetched,
  mergeSent,
  removeConversation,
  replaceLastAnswer,
  sortConversations,
  titleFromText,
  upsertConversation,
} from "./chat-logic";
import { DeltaBatcher } from "./delta-batcher";
import type { Schedule } from "./delta-batcher";
import { SettingsController } from "./settings-controller";
import { UpdateController } from "./update-controller";

/** How long a deleted conversation can be restored with Undo. */
export const UNDO_DELETE_MS = 5000;

export class AppController {
  readonly store: AppStore;
  /** Installed adapters and the Adapters panel. */
  readonly adapters: AdapterController;
  readonly settings: SettingsController;
  /** Ratings, corrections and copies of answers. */
  readonly feedback: FeedbackController;
  readonly privacy: PrivacyController;
  readonly memory: MemoryController;
  /** The database screen (corrupt or newer database). */
  readonly database: DatabaseController;
  readonly transfer: TransferController;
  /** Adapter versions, the evaluation gate, releases and their notices. */
  readonly releases: ReleaseController;
  /** Registry updates of adapters (Settings). */
  readonly updates: UpdateController;
  private readonly disposers: Array<() => void> = [];
  private readonly deleteTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly batcher: DeltaBatcher;
  private searchSeq = 0;
  private started = false;

  constructor(
    readonly api: RendererApi,
    schedule?: Schedule,
  ) {
    this.store = createAppStore(api.connection?.state ?? "open");
    this.adapters = new AdapterController(api);
    this.settings = new SettingsController(api);
    this.feedback = new FeedbackController(api, {
      get: (id) => this.findMessage(id),
      put: (message) => this.set((s) => ({ messages: applyDone(s.messages, message) })),
    });
    this.privacy = new PrivacyController(api);
    this.memory = new MemoryController(api);
    this.database = new DatabaseController(api, () => this.start(null));
    this.transfer = new TransferController(api, (notice) => this.set({ notice }));
    this.releases = new ReleaseController(
      api,
      (id) => this.adapters.store.getState().adapters?.find((a) => a.id === id)?.name ?? id,
    );
    this.updates = new UpdateController(api);
    this.batcher = new DeltaBatcher(
      (batch) => this.set((s) => ({ messages: applyDeltas(s.messages, batch) })),
      schedule,
    );
  }

  /** Subscribe to events, then load the engine status, the conversation list and `initialId`. */
  async start(initialId: string | null): Promise<void> {
    if (!this.started) {
      this.started = true;
      this.subscribe();
    }
    this.set({ currentId: initialId, phase: "loading", loadError: null });
    if (!(await this.database.check())) {
      this.set({ phase: "database" });
      return;
    }
    try {
      const [engine, conversations] = await Promise.all([
        this.api.call("models.status", {}),
        this.api.call("conversations.list", {}),
      ]);
      this.set({ engine, conversations: sortConversations(conversations), phase: "loaded" });
    } catch (error) {
      // The database broke between the check and the list: show its screen, not a dead end.
      if (isDatabaseUnavailable(error) && !(await this.database.check())) this.set({ phase: "database" });
      else this.set({ phase: "error", loadError: errorMessage(error) });
      return;
    }
    // Not part of readiness: chat works without adapters (the list shows its own error).
    void this.adapters.refresh();
    if (initialId) await this.loadDetail(initialId);
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
    for (const timer of this.deleteTimers.values()) clearTimeout(timer);
    this.deleteTimers.clear();
    this.batcher.dispose();
    this.adapters.dispose();
    this.privacy.dispose();
    this.memory.dispose();
    this.releases.dispose();
    this.updates.dispose();
  }

  /** Open a conversation (null: a new chat that is created on the first send). */
  selectConversation(id: string | null): void {
    const state = this.store.getState();
    if (id !== state.currentId) this.set({ currentId: id, composerError: null });
    // Fetch once; an event-created conversation (another window) has no detail yet.
    if (id && (state.detail[id] === undefined || state.detail[id] === "error")) void this.loadDetail(id);
  }

  newChat(): void {
    this.selectConversation(null);
  }

  /**
   * Send `text` in the current conversation, creating it first when it is new.
   * Resolves true when the message was accepted; on failure the error is in `composerError`.
   */
  async send(text: string): Promise<boolean> {
    const trimmed = text.trim();
    const state = this.store.getState();
    if (!trimmed || state.sending) return false;
    if (!canChat(state)) {
      this.set({ composerError: "No model is loaded yet. Open a model or try the demo model first." });
      return false;
    }
    this.set({ sending: true, composerError: null });
    try {
      let id = state.currentId;
      if (!id) {
        let conversation = await this.api.call("conversations.create", { title: titleFromText(trimmed) });
        const draft = this.store.getState().draftAdapters;
        // The choice made before the chat existed becomes the conversation's own.
        if (draft !== "auto") {
          conversation = await this.api.call("conversations.setAdapters", {
            id: conversation.id,
            adapters: draft,
          });
        }
        id = conversation.id;
        this.set((s) => ({
          conversations: upsertConversation(s.conversations, conversation),
          currentId: s.currentId === null ? conversation.id : s.currentId,
          draftAdapters: "auto",
          detail: { ...s.detail, [conversation.id]: "loaded" },
          messages: { ...s.messages, [conversation.id]: s.messages[conversation.id] ?? [] },
        }));
      }
      const sent = await this.api.call("chat.send", { conversationId: id, text: trimmed });
      this.set((s) => ({ messages: mergeSent(s.messages, [sent.userMessage, sent.assistantMessage]) }));
      return true;
    } catch (error) {
      this.set({ composerError: errorMessage(error) });
      return false;
    } finally {
      this.set({ sending: false });
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
    if (before) this.applyConversation({ ...before, adapters: selection });
    try {
      this.applyConversation(await this.api.call("conversations.setAdapters", { id, adapters: selection }));
      return true;
    } catch (error) {
      const now = this.store.getState().conversations.find((c) => c.id === id);
      if (before && now) this.applyConversation({ ...now, adapters: before.adapters });
      this.set({ notice: `Could not change the adapters: ${errorMessage(error)}` });
      return false;
    }
  }

  /**
   * Answer the last question again, with `adapters` or (undefined) the conversation's own
   * choice. The new answer takes the old one's place in the transcript.
   */
  async regenerate(adapters?: AdapterSelection): Promise<boolean> {
    const state = this.store.getState();
    const id = state.currentId;
    if (!id || state.sending || isStreaming(state.messages[id])) return false;
    this.set({ sending: true, composerError: null });
    try {
      const { assistantMessage } = await this.api.call(
        "chat.regenerate",
        adapters === undefined ? { conversationId: id } : { conversationId: id, adapters },
      );
      this.set((s) => ({ messages: replaceLastAnswer(s.messages, assistantMessage) }));
      return true;
    } catch (error) {
      this.set({ composerError: errorMessage(error) });
      return false;
    } finally {
      this.set({ sending: false });
    }
  }

  /** The open conversation's adapter choice. */
  currentAdapters(): AdapterSelection {
    return currentAdapters(this.store.getState());
  }

  /** Stop the generation in the current conversation; the partial answer stays as "stopped". */
  async stop(): Promise<void> {
    const { currentId, messages } = this.store.getState();
    if (!currentId || !isStreaming(messages[currentId])) return;
    try {
      await this.api.call("chat.stop", { conversationId: currentId });
    } catch (error) {
      this.set({ composerError: errorMessage(error) });
    }
  }

  dismissComposerError(): void {
    this.set({ composerError: null });
  }

  /** Rename; resolves false (with a notice) when the server refused. */
  async rename(id: string, title: string): Promise<boolean> {
    const trimmed = title.trim();
    if (!trimmed) return false;
    try {
      const conversation = await this.api.call("conversations.rename", { id, title: trimmed.slice(0, 200) });
      this.applyConversation(conversation);
      return true;
    } catch (error) {
      this.set({ notice: `Could not rename: ${errorMessage(error)}` });
      return false;
    }
  }

  /** Hide the conversation now and delete it after UNDO_DELETE_MS unless undone. */
  requestDelete(id: string): void {
    const state = this.store.getState();
    const conversation = state.conversations.find((c) => c.id === id);
    if (!conversation || this.deleteTimers.has(id)) return;
    this.set((s) => ({
      pendingDeletes: [...s.pendingDeletes, conversation],
      currentId: s.currentId === id ? null : s.currentId,
    }));
    this.armDelete(id);
  }

  /**
   * "Also delete memories from this conversation" in the Undo toast. Changing it restarts the
   * countdown: the user is still deciding.
   */
  setDeleteMemories(id: string, deleteMemories: boolean): void {
    if (!this.deleteTimers.has(id)) return;
    this.set((s) => ({
      deleteMemoryIds: deleteMemories
        ? [...s.deleteMemoryIds.filter((d) => d !== id), id]
        : s.deleteMemoryIds.filter((d) => d !== id),
    }));
    this.armDelete(id);
  }

  undoDelete(id: string): void {
    const timer = this.deleteTimers.get(id);
    if (!timer) return;
    clearTimeout(timer);
    this.deleteTimers.delete(id);
    this.set((s) => ({
      pendingDeletes: s.pendingDeletes.filter((c) => c.id !== id),
      deleteMemoryIds: s.deleteMemoryIds.filter((d) => d !== id),
    }));
  }

  /** Delete everything still waiting for Undo now (the page is closing: the user meant it). */
  flushDeletes(): void {
    for (const [id, timer] of [...this.deleteTimers]) {
      clearTimeout(timer);
      void this.commitDelete(id);
    }
  }

  dismissNotice(): void {
    this.set({ notice: null });
  }

  /** Full-text search over titles and messages; an empty query shows the plain list again. */
  async search(query: string): Promise<void> {
    const seq = ++this.searchSeq;
    this.set({ searchQuery: query });
    if (!query.trim()) {
      this.set({ searchHits: null });
      return;
    }
    try {
      const hits = await this.api.call("conversations.search", {
        query: query.trim().slice(0, 500),
        limit: 50,
      });
      // A slower answer to an older query must not overwrite the newer one.
      if (seq === this.searchSeq) this.set({ searchHits: hits });
    } catch (error) {
      if (seq === this.searchSeq) this.set({ notice: `Search failed: ${errorMessage(error)}` });
    }
  }

  setModelPanelOpen(open: boolean): void {
    this.set({ modelPanelOpen: open, modelError: open ? this.store.getState().modelError : null });
  }

  /** Load a .gguf file from a path on the machine running core. */
  openModel(path: string): Promise<boolean> {
    const trimmed = path.trim();
    if (!trimmed) {
      this.set({ modelError: "Enter the path of a .gguf model file." });
      return Promise.resolve(false);
    }
    return this.loadModel(() => this.api.call("models.open", { path: trimmed }));
  }

  openDemo(): Promise<boolean> {
    return this.loadModel(() => this.api.call("models.openDemo", {}));
  }

  /** Electron: native file dialog, then load; resolves false when cancelled or failed. */
  async pickAndOpenModel(): Promise<boolean> {
    const pick = this.api.platform.pickModelFile;
    if (!pick) return false;
    let path: string | null;
    try {
      path = await pick();
    } catch (error) {
      this.set({ modelError: errorMessage(error) });
      return false;
    }
    return path ? this.openModel(path) : false;
  }

  private async loadModel(load: () => Promise<EngineStatus>): Promise<boolean> {
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

  private armDelete(id: string): void {
    const previous = this.deleteTimers.get(id);
    if (previous) clearTimeout(previous);
    this.deleteTimers.set(
      id,
      setTimeout(() => void this.commitDelete(id), UNDO_DELETE_MS),
    );
  }

  private async commitDelete(id: string): Promise<void> {
    this.deleteTimers.delete(id);
    const deleteMemories = this.store.getState().deleteMemoryIds.includes(id);
    try {
      await this.api.call("conversations.delete", deleteMemories ? { id, deleteMemories } : { id });
      this.forgetConversation(id);
    } catch (error) {
      this.set({ notice: `Could not delete the conversation: ${errorMessage(error)}` });
    } finally {
      this.set((s) => ({
        pendingDeletes: s.pendingDeletes.filter((c) => c.id !== id),
        deleteMemoryIds: s.deleteMemoryIds.filter((d) => d !== id),
      }));
    }
  }

  private findMessage(id: string): Message | undefined {
    for (const list of Object.values(this.store.getState().messages)) {
      const found = list.find((m) => m.id === id);
      if (found) return found;
    }
    return undefined;
  }

  private async loadDetail(id: string): Promise<void> {
    this.set((s) => ({ detail: { ...s.detail, [id]: "loading" } }));
    try {
      const detail = await this.api.call("conversations.get", { id });
      this.applyConversation(detail.conversation);
      this.set((s) => ({
        messages: mergeFetched(s.messages, id, detail.messages),
        detail: { ...s.detail, [id]: "loaded" },
      }));
    } catch (error) {
      const notFound = (error as { code?: string }).code === "not_found";
      this.set((s) => ({
        detail: { ...s.detail, [id]: "error" },
        // A stale link (#/c/<deleted id>) falls back to a new chat instead of an error page.
        currentId: notFound && s.currentId === id ? null : s.currentId,
        notice: notFound
          ? "That conversation no longer exists."
          : `Could not open the conversation: ${errorMessage(error)}`,
      }));
    }
  }

  /** After the event channel comes back, fetch what may have been missed while it was down. */
  private async resync(): Promise<void> {
    if (this.store.getState().phase !== "loaded") {
      await this.start(this.store.getState().currentId);
      return;
    }
    try {
      const [engine, conversations] = await Promise.all([
        this.api.call("models.status", {}),
        this.api.call("conversations.list", {}),
      ]);
      this.set({ engine, conversations: sortConversations(conversations) });
      void this.adapters.refresh();
    } catch {
      return; // The banner already says the connection is unstable; the next reconnect retries.
    }
    const { currentId } = this.store.getState();
    if (currentId) await this.loadDetail(currentId);
  }

  private subscribe(): void {
    const { api } = this;
    this.disposers.push(
      api.on("chat.delta", (delta) => this.batcher.push(delta)),
      api.on("chat.done", ({ message }) => {
        this.batcher.flush();
        this.set((s) => ({ messages: applyDone(s.messages, message) }));
      }),
      api.on("engine.status", (engine) => this.set({ engine })),
      api.on("conversations.changed", ({ conversation, deletedId }) => {
        if (conversation) this.applyConversation(conversation);
        if (deletedId) this.forgetConversation(deletedId);
      }),
    );
    const connection = api.connection;
    if (connection) {
      this.disposers.push(
        connection.onChange((state) => {
          const previous = this.store.getState().connection;
          this.set({ connection: state });
          if (state === "open" && previous === "reconnecting") void this.resync();
        }),
      );
    }
  }

  private applyConversation(conversation: Conversation): void {
    this.set((s) => ({ conversations: upsertConversation(s.conversations, conversation) }));
  }

  private forgetConversation(id: string): void {
    this.set((s) => {
      const messages = { ...s.messages };
      delete messages[id];
      return {
        conversations: removeConversation(s.conversations, id),
        searchHits: s.searchHits?.filter((h) => h.conversationId !== id) ?? null,
        messages,
        currentId: s.currentId === id ? null : s.currentId,
      };
    });
  }

  private set(patch: Partial<AppState> | ((state: AppState) => Partial<AppState>)): void {
    this.store.setState(patch);
  }
}
