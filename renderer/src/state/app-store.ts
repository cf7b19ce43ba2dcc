/** The UI's data, one zustand store per app instance (created by AppController, never global). */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { AdapterSelection, Conversation, EngineStatus, Message, SearchHit } from "../../../electron/api";
import type { ConnectionState } from "../api";
import type { MessagesByConversation } from "../chat/chat-logic";

/**
 * "database": core could not open the database; the database screen offers recovery.
 * "signedOut": the headless server does not know this browser (restarted with a new key, or
 * the session was ended); the signed-out screen says how to get a new sign-in link.
 */
export type AppPhase = "loading" | "loaded" | "error" | "database" | "signedOut";

export interface AppState {
  /** "loaded" once models.status and conversations.list have answered (e2e readiness signal). */
  phase: AppPhase;
  /** Why the first load failed (e.g. the server cannot be reached). */
  loadError: string | null;
  connection: ConnectionState;
  engine: EngineStatus | null;
  conversations: Conversation[];
  /** Full-text search matches for `searchQuery` (conversations.search); null when not searching. */
  searchHits: SearchHit[] | null;
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
  /** Pending deletes that also delete the memories that came from the conversation. */
  deleteMemoryIds: readonly string[];
  /** A short message for the toast area (e.g. a failed delete). */
  notice: string | null;
  /** The adapter choice for a new chat, applied when the first send creates it. */
  draftAdapters: AdapterSelection;
  /**
   * The question being sent, shown at once (before core has stored it): in `conversationId`
   * (null while a new chat is being created). Replaced by core's copy when chat.send answers.
   */
  pendingQuestion: PendingQuestion | null;
  /**
   * What the user waited for each answer sent from this window: Enter → its first text on
   * screen, in ms (routing, prompt, transport and rendering included), by message id.
   */
  answerWaitMs: Readonly<Record<string, number>>;
}

export interface PendingQuestion {
  conversationId: string | null;
  message: Message;
}

export type AppStore = StoreApi<AppState>;

export function initialAppState(connection: ConnectionState): AppState {
  return {
    phase: "loading",
    loadError: null,
    connection,
    engine: null,
    conversations: [],
    searchHits: null,
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
    deleteMemoryIds: [],
    notice: null,
    draftAdapters: "auto",
    pendingQuestion: null,
    answerWaitMs: {},
  };
}

export function createAppStore(connection: ConnectionState): AppStore {
  return createStore<AppState>()(() => initialAppState(connection));
}

/** Conversations to list, minus those waiting to be deleted. */
export function visibleConversations(
  state: Pick<AppState, "conversations" | "pendingDeletes">,
): Conversation[] {
  const source = state.conversations;
  if (state.pendingDeletes.length === 0) return source;
  const hidden = new Set(state.pendingDeletes.map((c) => c.id));
  return source.filter((c) => !hidden.has(c.id));
}

/** Search matches to list, minus those of conversations waiting to be deleted. */
export function visibleHits(state: Pick<AppState, "searchHits" | "pendingDeletes">): SearchHit[] | null {
  if (!state.searchHits || state.pendingDeletes.length === 0) return state.searchHits;
  const hidden = new Set(state.pendingDeletes.map((c) => c.id));
  return state.searchHits.filter((h) => !hidden.has(h.conversationId));
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
