/** The UI's data, one zustand store per app instance (created by AppController, never global). */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { AdapterSelection, Conversation, EngineStatus } from "../../../electron/api";
import type { ConnectionState } from "../api";
import type { MessagesByConversation } from "./chat-logic";

export type AppPhase = "loading" | "loaded" | "error";

export interface AppState {
  /** "loaded" once models.status and conversations.list have answered (e2e readiness signal). */
  phase: AppPhase;
  /** Why the first load failed (e.g. the server cannot be reached). */
  loadError: string | null;
  connection: ConnectionState;
  engine: EngineStatus | null;
  conversations: Conversation[];
  /** Server-side search results for `searchQuery`; null when not searching. */
  searchResults: Conversation[] | null;
  searchQuery: string;
  /** The open conversation; null is a new, not yet created chat. */
  currentId: string | null;
  messages: MessagesByConversation;
  detail: Readonly<Record<string, "loading" | "loaded" | "error">>;
  /** A send is in flight (create + chat.send), so a double Enter does not send twice. */
  sending: boolean;
  composerError: string | null;
  modelError: string | null;
  modelBusy: boolean;
  modelPanelOpen: boolean;
  /** Deleted in the UI, waiting for Undo before the call is made. */
  pendingDeletes: Conversation[];
  /** A short message for the toast area (e.g. a failed delete). */
  notice: string | null;
  /** The adapter choice for a new chat, applied when the first send creates it. */
  draftAdapters: AdapterSelection;
}

export type AppStore = StoreApi<AppState>;

export function initialAppState(connection: ConnectionState): AppState {
  return {
    phase: "loading",
    loadError: null,
    connection,
    engine: null,
    conversations: [],
    searchResults: null,
    searchQuery: "",
    currentId: null,
    messages: {},
    detail: {},
    sending: false,
    composerError: null,
    modelError: null,
    modelBusy: false,
    modelPanelOpen: false,
    pendingDeletes: [],
    notice: null,
    draftAdapters: "auto",
  };
}

export function createAppStore(connection: ConnectionState): AppStore {
  return createStore<AppState>()(() => initialAppState(connection));
}

/** Conversations to list: search results or all, minus those waiting to be deleted. */
export function visibleConversations(
  state: Pick<AppState, "conversations" | "searchResults" | "pendingDeletes">,
): Conversation[] {
  const source = state.searchResults ?? state.conversations;
  if (state.pendingDeletes.length === 0) return source;
  const hidden = new Set(state.pendingDeletes.map((c) => c.id));
  return source.filter((c) => !hidden.has(c.id));
}

/**
 * A model is loaded and not being replaced. While the engine restarts after a crash, core
 * takes the turn once it is back (or answers with a clear error), so sending stays allowed.
 */
export function canChat(state: AppState): boolean {
  return !!state.engine?.model && state.engine.state !== "loading";
}

/** The adapter choice of the open conversation (or of the new chat about to be created). */
export function currentAdapters(state: AppState): AdapterSelection {
  if (!state.currentId) return state.draftAdapters;
  return state.conversations.find((c) => c.id === state.currentId)?.adapters ?? "auto";
}
