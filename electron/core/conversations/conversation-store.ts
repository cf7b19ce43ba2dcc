import type { Database, Statement } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { AdapterSelection, type Conversation } from "../../api";
import { ConversationSearch } from "./conversation-search";

/** Title of a conversation nobody named yet; the first user message replaces it. */
export const DEFAULT_TITLE = "New chat";

interface ConversationRow {
  id: string;
  title: string;
  created_at: number;
  updated_at: number;
  adapters_json: string;
}

function parseSelection(json: string): AdapterSelection {
  try {
    const parsed = AdapterSelection.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : "auto";
  } catch {
    return "auto";
  }
}

function toConversation(row: ConversationRow): Conversation {
  return {
    id: row.id,
    title: row.title,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    adapters: parseSelection(row.adapters_json),
  };
}

/** Conversations table: create, list/search, rename, delete (messages cascade). */
export class ConversationStore {
  private readonly insertStmt: Statement<[string, string, number, number]>;
  private readonly getStmt: Statement<[string], ConversationRow>;
  private readonly listStmt: Statement<[], ConversationRow>;
  private readonly search: ConversationSearch;
  private readonly renameStmt: Statement<[string, number, string]>;
  private readonly touchStmt: Statement<[number, string]>;
  private readonly deleteStmt: Statement<[string]>;
  private readonly adaptersStmt: Statement<[string, number, string]>;

  constructor(db: Database) {
    this.insertStmt = db.prepare(
      "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
    );
    this.getStmt = db.prepare("SELECT * FROM conversations WHERE id = ?");
    this.listStmt = db.prepare("SELECT * FROM conversations ORDER BY updated_at DESC, rowid DESC");
    this.search = new ConversationSearch(db);
    this.renameStmt = db.prepare("UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?");
    this.touchStmt = db.prepare("UPDATE conversations SET updated_at = ? WHERE id = ?");
    this.deleteStmt = db.prepare("DELETE FROM conversations WHERE id = ?");
    this.adaptersStmt = db.prepare("UPDATE conversations SET adapters_json = ?, updated_at = ? WHERE id = ?");
  }

  /** Create a conversation; without a title it is called DEFAULT_TITLE until its first message. */
  create(title: string | undefined, now = Date.now()): Conversation {
    const id = randomUUID();
    const t = title?.trim() || DEFAULT_TITLE;
    this.insertStmt.run(id, t, now, now);
    return { id, title: t, createdAt: now, updatedAt: now, adapters: "auto" };
  }

  get(id: string): Conversation | null {
    const row = this.getStmt.get(id);
    return row ? toConversation(row) : null;
  }

  /**
   * Most recently active first. With `query`: only conversations whose title or transcript
   * contains every word of it (the last word as a prefix; full-text, see ConversationSearch).
   */
  list(query?: string): Conversation[] {
    const q = query?.trim();
    if (!q) return this.listStmt.all().map(toConversation);
    const ids = this.search.matchingConversationIds(q);
    return this.listStmt
      .all()
      .filter((row) => ids.has(row.id))
      .map(toConversation);
  }

  /** Returns the renamed conversation, or null when it does not exist. */
  rename(id: string, title: string, now = Date.now()): Conversation | null {
    const info = this.renameStmt.run(title, now, id);
    return info.changes > 0 ? this.get(id) : null;
  }

  /** Set the conversation's adapter choice; null when it does not exist. */
  setAdapters(id: string, selection: AdapterSelection, now = Date.now()): Conversation | null {
    const info = this.adaptersStmt.run(JSON.stringify(selection), now, id);
    return info.changes > 0 ? this.get(id) : null;
  }

  /** Mark activity (a new message) so the conversation sorts first. */
  touch(id: string, now = Date.now()): void {
    this.touchStmt.run(now, id);
  }

  /** Delete a conversation and (by cascade) its messages; false when it did not exist. */
  delete(id: string): boolean {
    return this.deleteStmt.run(id).changes > 0;
  }
}
