import type { GenerationStats, Message, MessageRole, MessageStatus } from "../../api";
import type { MessageInteraction, UiDocument } from "../../api/genui";

/**
 * The one home of conversation storage: every read and write of the `messages` table goes
 * through a ConversationRepository (its SQLite implementation is MessageStore,
 * message-store.ts). Other stores and services call it instead of running SQL on `messages`
 * (`scripts/check-messages-sql.mjs` checks that). Each operation is one transaction. The types
 * live here, apart from the implementation, so that stores the implementation reads (GenUI's)
 * can depend on the interface without an import cycle.
 */
export interface ConversationRepository {
  /**
   * Append a message at the end of the shown branch, or (place.versionOf) as a new version of
   * a message, shown in its place. Throws when `versionOf` is not a message of the conversation.
   */
  append(msg: NewMessage, now?: number, place?: AppendPlace): Message;
  /**
   * Show the branch through message `id` (it becomes the chosen version among its siblings).
   * Returns its conversation's id, or null when there is no such message.
   */
  showVersion(id: string): string | null;
  get(id: string): Message | null;
  /** The shown branch of a conversation, in order; each message with its versions' ids. */
  list(conversationId: string): Message[];
  countByRole(conversationId: string, role: MessageRole): number;
  /** Save the partial text of a streaming answer. */
  saveContent(id: string, content: string): void;
  /** Record how the history was fitted into the context for the answer `id`. */
  saveContext(id: string, context: ContextInfo | null): void;
  /** Store the final state of an answer; false when the message no longer exists. */
  finish(id: string, final: MessageFinal): boolean;
  /** At start-up: answers left "streaming" become "interrupted" (content kept). */
  markStreamingInterrupted(): number;
  /**
   * Keep how an answer ended when writing it failed (a full disk): reads show it, and a later
   * finish() writes it.
   */
  keepUnwritten(id: string, final: MessageFinal): void;
  /** The answers kept by keepUnwritten and not written yet. */
  unwrittenFinals(): [string, MessageFinal][];

  /** The ids of every message of a conversation, on any branch, oldest first. */
  messageIds(conversationId: string): string[];
  /** The conversation and role of a message, or null when it does not exist. */
  placeOf(id: string): MessagePlace | null;
  /**
   * The message and its ancestors (its own branch, whichever versions are shown now), root
   * first; empty when there is no such message.
   */
  branchUpTo(id: string): BranchTurn[];
  /** The answer a (version 3) regeneration replaced: its `replaced_by` is `newMessageId`. */
  replacedMessage(conversationId: string, newMessageId: string): string | null;
  /**
   * Write an imported message at the end of its conversation's shown branch (the tree's rules:
   * its parent is the last shown message, its seq the next one, chosen and shown), with the
   * columns an export carries. Returns its id.
   */
  importMessage(message: ImportedMessage): string;
  /** A UI answer is starting: the message's format becomes "ui". */
  markUiAnswer(id: string): void;
  /** The UI document of an answer (null: none could be made). */
  saveUiDocument(id: string, doc: UiDocument | null): void;
  /** The interaction a user message reports. */
  saveInteraction(id: string, interaction: MessageInteraction): void;
}

export interface NewMessage {
  conversationId: string;
  role: MessageRole;
  content: string;
  status: MessageStatus;
}

/** Where append() puts a message in the conversation's tree. */
export interface AppendPlace {
  /**
   * A new version of this message (an edited question, an answer given again): its sibling,
   * shown in its place, with the branch below the old one kept but hidden. Absent: the message
   * follows the end of the shown branch.
   */
  versionOf?: string;
}

export interface MessageFinal {
  content: string;
  status: MessageStatus;
  error: string | null;
  stats: GenerationStats | null;
}

/** How the history was fitted into the context for an answer (Message.context). */
export type ContextInfo = NonNullable<Message["context"]>;

export interface MessagePlace {
  conversationId: string;
  role: MessageRole;
}

export interface BranchTurn {
  role: MessageRole;
  content: string;
}

/** A message as an import writes it (new id chosen by the importer). */
export interface ImportedMessage {
  id: string;
  conversationId: string;
  role: MessageRole;
  content: string;
  status: MessageStatus;
  error: string | null;
  createdAt: number;
  stats: GenerationStats | null;
  context: ContextInfo | null;
  /** GenUI (migration 0007): "ui" for a UI answer, with its document. */
  format: "ui" | null;
  ui: UiDocument | null;
  interaction: MessageInteraction | null;
}
