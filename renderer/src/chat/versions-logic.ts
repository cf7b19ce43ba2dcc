/**
 * Message versions in the chat data (edits of a question, answers given again): pure
 * transitions, like chat-logic's. Core keeps the versions as a tree and sends the shown branch.
 */
import type { Message } from "../../../electron/api";
import { mergeSent } from "./chat-logic";
import type { MessagesByConversation } from "./messages-by-conversation";

/** Where a message is among its versions: "2 / 3" is { index: 1, count: 3 }; null: no others. */
export interface VersionPlace {
  index: number;
  count: number;
  previous: string | null;
  next: string | null;
}

export function versionPlace(message: Message): VersionPlace | null {
  const versions = message.versions ?? [];
  const index = versions.indexOf(message.id);
  if (versions.length < 2 || index < 0) return null;
  return {
    index,
    count: versions.length,
    previous: versions[index - 1] ?? null,
    next: versions[index + 1] ?? null,
  };
}

/**
 * chat.edit's reply: the edited message and everything after it leave the transcript; the new
 * question and its answer follow what the edited message followed. An answer whose deltas
 * overtook the reply keeps what it streamed (mergeSent).
 */
export function withEdit(
  state: MessagesByConversation,
  editedId: string,
  user: Message,
  answer: Message,
): MessagesByConversation {
  const list = state[user.conversationId] ?? [];
  const at = list.findIndex((m) => m.id === editedId);
  const kept = at < 0 ? list.filter((m) => m.id !== editedId) : list.slice(0, at);
  const streamed = list.filter((m) => m.id === answer.id || m.id === user.id);
  return mergeSent({ ...state, [user.conversationId]: [...kept, ...streamed] }, [user, answer]);
}

/** chat.showVersion's reply: the conversation's transcript is the branch now shown. */
export function withTranscript(
  state: MessagesByConversation,
  conversationId: string,
  messages: readonly Message[],
): MessagesByConversation {
  return { ...state, [conversationId]: messages };
}
