/**
 * The turn pipeline's hold on the database, without the database itself: the stores a turn
 * writes besides the conversation repository (per-conversation settings, turn records), and
 * `atomically`, which makes a turn's several writes (the user message, the title, a memory, the
 * empty answer and its turn record) one transaction. Only this module opens the pipeline's
 * transactions; the pipeline and its parts never see a `Database`.
 */
import type { Database } from "better-sqlite3";
import { ConversationSettingsStore } from "../conversations/conversation-settings";
import { TurnStore } from "./turn-store";

export interface ChatStorage {
  /**
   * Runs `fn` as one transaction (inside another: a savepoint), so the writes in it land together
   * or not at all; returns what `fn` returns and rethrows what it throws.
   */
  atomically<T>(fn: () => T): T;
  readonly settings: ConversationSettingsStore;
  readonly turns: TurnStore;
}

export function chatStorage(db: Database): ChatStorage {
  return {
    atomically: (fn) => db.transaction(fn)(),
    settings: new ConversationSettingsStore(db),
    turns: new TurnStore(db),
  };
}
