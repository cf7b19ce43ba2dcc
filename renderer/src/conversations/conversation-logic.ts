/**
 * Pure transitions of the app store's conversation data: a conversation created by the first
 * send, one deleted (here or in another window), the Undo-delete bookkeeping and a failed
 * detail fetch. The controllers apply them; tests exercise them directly.
 */
import type { Conversation, Message } from "../../../electron/api";
import { errorMessage } from "../api";
import type { AppState } from "../state/app-store";
import type { MessagesByConversation } from "../chat/chat-logic";
import { removeConversation, upsertConversation } from "../chat/chat-logic";

/** The longest query sent to conversations.search. */
export const MAX_SEARCH_QUERY = 500;

/**
 * The first send created `conversation`: list it, open it unless the user moved on, and make
 * the draft adapter choice its own (the caller already sent it to core).
 */
export function withCreatedConversation(
  state: AppState,
  conversation: Conversation,
): Pick<AppState, "conversations" | "currentId" | "draftAdapters" | "detail" | "messages"> {
  return {
    conversations: upsertConversation(state.conversations, conversation),
    currentId: state.currentId === null ? conversation.id : state.currentId,
    draftAdapters: "auto",
    detail: { ...state.detail, [conversation.id]: "loaded" },
    messages: { ...state.messages, [conversation.id]: state.messages[conversation.id] ?? [] },
  };
}

/** Drop a deleted conversation everywhere: list, search hits, messages and the open chat. */
export function withoutConversation(
  state: AppState,
  id: string,
): Pick<AppState, "conversations" | "searchHits" | "messages" | "currentId"> {
  const messages = { ...state.messages };
  delete messages[id];
  return {
    conversations: removeConversation(state.conversations, id),
    searchHits: state.searchHits?.filter((h) => h.conversationId !== id) ?? null,
    messages,
    currentId: state.currentId === id ? null : state.currentId,
  };
}

/** Hide `conversation` until its delete is committed or undone; close it if it is open. */
export function withPendingDelete(
  state: AppState,
  conversation: Conversation,
): Pick<AppState, "pendingDeletes" | "currentId"> {
  return {
    pendingDeletes: [...state.pendingDeletes, conversation],
    currentId: state.currentId === conversation.id ? null : state.currentId,
  };
}

/** The delete of `id` was committed, failed or undone: forget its Undo bookkeeping. */
export function withoutPendingDelete(
  state: AppState,
  id: string,
): Pick<AppState, "pendingDeletes" | "deleteMemoryIds"> {
  return {
    pendingDeletes: state.pendingDeletes.filter((c) => c.id !== id),
    deleteMemoryIds: state.deleteMemoryIds.filter((d) => d !== id),
  };
}

/** Tick or untick "also delete memories" for the pending delete of `id` (kept once, last). */
export function withDeleteMemories(ids: readonly string[], id: string, deleteMemories: boolean): string[] {
  const rest = ids.filter((d) => d !== id);
  return deleteMemories ? [...rest, id] : rest;
}

/**
 * conversations.get failed for `id`. A stale link (#/c/<deleted id>) falls back to a new chat
 * instead of an error page.
 */
export function withDetailError(
  state: AppState,
  id: string,
  error: unknown,
): Pick<AppState, "detail" | "currentId" | "notice"> {
  const notFound = (error as { code?: string }).code === "not_found";
  return {
    detail: { ...state.detail, [id]: "error" },
    currentId: notFound && state.currentId === id ? null : state.currentId,
    notice: notFound
      ? "That conversation no longer exists."
      : `Could not open the conversation: ${errorMessage(error)}`,
  };
}

/** The query to send to conversations.search; null for an empty one (show the plain list). */
export function searchQuery(query: string): string | null {
  const trimmed = query.trim();
  return trimmed ? trimmed.slice(0, MAX_SEARCH_QUERY) : null;
}

/** A message by id, in whichever conversation holds it. */
export function findMessage(messages: MessagesByConversation, id: string): Message | undefined {
  for (const list of Object.values(messages)) {
    const found = list.find((m) => m.id === id);
    if (found) return found;
  }
  return undefined;
}
