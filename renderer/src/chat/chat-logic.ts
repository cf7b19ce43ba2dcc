/**
 * Pure transitions of the chat data, keyed by conversation. The store applies them; tests
 * exercise them directly. Every function returns new objects only where something changed,
 * so React re-renders just the message that streams.
 */
import type { Conversation, EventPayload, Message } from "../../../electron/api";
import { streamingPlaceholder } from "./streaming-placeholder";
import type { MessagesByConversation } from "./messages-by-conversation";
import { mergeSteps } from "./tool-logic";

export type { MessagesByConversation } from "./messages-by-conversation";
export type Delta = EventPayload<"chat.delta">;

/**
 * Append a batch of deltas. A delta for a message not seen yet (the event overtook the
 * chat.send answer) starts a streaming assistant placeholder that the answer later fills in.
 */
export function applyDeltas(
  state: MessagesByConversation,
  deltas: readonly Delta[],
  now = Date.now(),
): MessagesByConversation {
  if (deltas.length === 0) return state;
  const next: Record<string, readonly Message[]> = { ...state };
  const copied = new Set<string>();
  for (const { conversationId, messageId, delta } of deltas) {
    let list = next[conversationId] ?? [];
    if (!copied.has(conversationId)) {
      list = [...list];
      copied.add(conversationId);
    }
    const mutable = list as Message[];
    const index = findIndexFromEnd(mutable, messageId);
    if (index === -1) {
      mutable.push(streamingPlaceholder(conversationId, messageId, now, { content: delta }));
    } else {
      const message = mutable[index]!;
      // A delta arriving after the final message (late frame) must not grow the final text.
      if (message.status === "streaming") mutable[index] = { ...message, content: message.content + delta };
    }
    next[conversationId] = mutable;
  }
  return next;
}

/**
 * Replace the streamed message with its final version (complete, stopped, error). Its tool
 * steps are merged with those the events brought (a step never goes back, see laterStep).
 */
export function applyDone(state: MessagesByConversation, message: Message): MessagesByConversation {
  const list = state[message.conversationId] ?? [];
  const existing = list.find((m) => m.id === message.id);
  const final = existing ? withSteps(message, mergeSteps(existing.steps, message.steps)) : message;
  return { ...state, [message.conversationId]: upsertMessage(list, final) };
}

/**
 * Merge the messages chat.send returned. Deltas or chat.done may already have arrived for the
 * assistant message; what is already here is newer than the answer's empty streaming message.
 */
export function mergeSent(state: MessagesByConversation, sent: readonly Message[]): MessagesByConversation {
  let next = state;
  for (const [i, message] of sent.entries()) {
    const list = next[message.conversationId] ?? [];
    const existing = list.find((m) => m.id === message.id);
    // A final message (from chat.done) is newer than anything the answer can hold.
    if (existing && existing.status !== "streaming") continue;
    const keepStreamed =
      existing && message.status === "streaming" && existing.content.length > message.content.length;
    const streamed = keepStreamed ? { ...message, content: existing.content } : message;
    // Steps from chat.toolStep events are newer than the answer's.
    const merged = existing ? withSteps(streamed, mergeSteps(streamed.steps, existing.steps)) : streamed;
    // A question whose answer's events overtook the reply goes in front of that answer: core
    // stamps both with the same millisecond, so the sort alone keeps arrival order.
    const later = new Set(sent.slice(i + 1).map((m) => m.id));
    const before = existing ? -1 : list.findIndex((m) => later.has(m.id));
    next = { ...next, [message.conversationId]: upsertMessage(list, merged, before) };
  }
  return next;
}

/**
 * Take a freshly fetched transcript, keeping streamed text the server has not stored yet and
 * local messages that arrived after the fetch started.
 */
export function mergeFetched(
  state: MessagesByConversation,
  conversationId: string,
  fetched: readonly Message[],
): MessagesByConversation {
  const local = state[conversationId] ?? [];
  const localById = new Map(local.map((m) => [m.id, m]));
  const merged = fetched.map((m) => {
    const mine = localById.get(m.id);
    if (mine && m.status === "streaming" && mine.status !== "streaming") return mine;
    if (!mine || m.status !== "streaming") return m;
    // Still streaming: text and tool steps from events may be ahead of the stored copy.
    const content = mine.content.length > m.content.length ? mine.content : m.content;
    return withSteps({ ...m, content }, mergeSteps(m.steps, mine.steps));
  });
  const fetchedIds = new Set(fetched.map((m) => m.id));
  for (const m of local) if (!fetchedIds.has(m.id)) merged.push(m);
  return { ...state, [conversationId]: sortMessages(merged) };
}

/**
 * "Answer again": the new answer takes the place of the previous one. Core keeps the old one
 * in its database but out of the transcript, so every answer after the last question other
 * than `answer` leaves (deltas may already have started `answer` as a placeholder).
 */
export function replaceLastAnswer(state: MessagesByConversation, answer: Message): MessagesByConversation {
  const list = state[answer.conversationId] ?? [];
  let lastQuestion = -1;
  for (let i = list.length - 1; i >= 0; i -= 1) {
    if (list[i]!.role === "user") {
      lastQuestion = i;
      break;
    }
  }
  const kept = list.filter((m, i) => i <= lastQuestion || m.role !== "assistant" || m.id === answer.id);
  return mergeSent({ ...state, [answer.conversationId]: kept }, [answer]);
}

/**
 * The transcript with the question still being sent: before the answer's first streamed
 * message (its events may overtake chat.send's reply), else at the end. Core's copy replaces
 * it when chat.send answers, in the same update, so the two are never shown together.
 */
export function withPendingQuestion(
  messages: readonly Message[] | undefined,
  pending: Message | null,
): readonly Message[] | undefined {
  if (!pending) return messages;
  const list = messages ?? [];
  const at = list.findIndex((m) => m.status === "streaming");
  return at === -1 ? [...list, pending] : [...list.slice(0, at), pending, ...list.slice(at)];
}

/** True while an assistant message of the conversation is being generated. */
export function isStreaming(messages: readonly Message[] | undefined): boolean {
  return !!messages?.some((m) => m.status === "streaming");
}

/** Insert or replace a conversation, newest activity first. */
export function upsertConversation(
  list: readonly Conversation[],
  conversation: Conversation,
): Conversation[] {
  const rest = list.filter((c) => c.id !== conversation.id);
  return sortConversations([...rest, conversation]);
}

export function removeConversation(list: readonly Conversation[], id: string): Conversation[] {
  return list.filter((c) => c.id !== id);
}

export function sortConversations(list: readonly Conversation[]): Conversation[] {
  return [...list].sort((a, b) => b.updatedAt - a.updatedAt || b.createdAt - a.createdAt);
}

/** A conversation title from the first message: its first line, shortened on a word boundary. */
export function titleFromText(text: string, max = 60): string {
  const line = text.trim().split("\n")[0]!.trim().replace(/\s+/g, " ");
  if (line.length <= max) return line || "New chat";
  const cut = line.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function withSteps(message: Message, steps: Message["steps"]): Message {
  return steps === message.steps ? message : { ...message, steps };
}

/** `before`: where a new message goes before sorting (-1: at the end). */
function upsertMessage(list: readonly Message[], message: Message, before = -1): Message[] {
  const index = findIndexFromEnd(list, message.id);
  if (index === -1) {
    const at = before < 0 ? list.length : before;
    return sortMessages([...list.slice(0, at), message, ...list.slice(at)]);
  }
  const next = [...list];
  next[index] = message;
  // The server's createdAt may differ from a placeholder's local clock: re-sort.
  return sortMessages(next);
}

// Stable: messages created in the same millisecond keep their arrival order.
function sortMessages(list: Message[]): Message[] {
  return list
    .map((m, i) => [m, i] as const)
    .sort(([a, i], [b, j]) => a.createdAt - b.createdAt || i - j)
    .map(([m]) => m);
}

function findIndexFromEnd(list: readonly Message[], id: string): number {
  for (let i = list.length - 1; i >= 0; i -= 1) if (list[i]!.id === id) return i;
  return -1;
}
