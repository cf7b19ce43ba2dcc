import type { Database, Statement } from "better-sqlite3";
import { createHash, randomUUID } from "node:crypto";
import type { Memory } from "../../api";
import type { ConversationRepository } from "../conversations/conversation-repository";
import { MessageStore } from "../conversations/message-store";
import { anyTermQuery } from "../db/fts-query";

interface MemoryRow {
  id: string;
  text: string;
  source: Memory["source"];
  status: Memory["status"];
  conversation_id: string | null;
  message_id: string | null;
  created_at: number;
  updated_at: number;
}

function toMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    text: row.text,
    source: row.source,
    status: row.status,
    conversationId: row.conversation_id,
    messageId: row.message_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface NewMemory {
  text: string;
  source: Memory["source"];
  status: Memory["status"];
  conversationId?: string | null;
  messageId?: string | null;
}

/** Identifies a text in the vector cache: a cached vector is valid while the hash matches. */
export function textHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

/** The memories table (migration 0005), its full-text index, vector cache and usage links. */
export class MemoryStore {
  private readonly insertStmt: Statement<Record<string, unknown>>;
  private readonly getStmt: Statement<[string], MemoryRow>;
  private readonly listStmt: Statement<[], MemoryRow>;
  private readonly activeStmt: Statement<[], MemoryRow>;
  private readonly textStmt: Statement<[string, number, string]>;
  private readonly statusStmt: Statement<[string, number, string]>;
  private readonly deleteStmt: Statement<[string]>;
  private readonly searchStmt: Statement<[string, number], MemoryRow & { rank: number }>;
  private readonly fromConversationStmt: Statement<[string, string], { id: string }>;
  private readonly messages: Pick<ConversationRepository, "messageIds">;
  private readonly linkStmt: Statement<[string, string]>;
  private readonly usedStmt: Statement<[number, string]>;
  private readonly vectorGetStmt: Statement<[string, string], { text_hash: string; vector: Buffer }>;
  private readonly vectorPutStmt: Statement<[string, string, string, Buffer]>;

  constructor(
    private readonly db: Database,
    /** Where a conversation's messages are; default: one on `db`. */
    messages?: Pick<ConversationRepository, "messageIds">,
  ) {
    this.messages = messages ?? new MessageStore(db);
    this.insertStmt = db.prepare(`
      INSERT INTO memories (id, text, source, status, conversation_id, message_id, created_at, updated_at)
      VALUES (@id, @text, @source, @status, @conversationId, @messageId, @now, @now)`);
    this.getStmt = db.prepare("SELECT * FROM memories WHERE id = ?");
    // Proposed ones first: they wait for the user's decision.
    this.listStmt = db.prepare(
      "SELECT * FROM memories ORDER BY status = 'proposed' DESC, updated_at DESC, rowid DESC",
    );
    this.activeStmt = db.prepare("SELECT * FROM memories WHERE status = 'active' ORDER BY updated_at DESC");
    this.textStmt = db.prepare("UPDATE memories SET text = ?, updated_at = ? WHERE id = ?");
    this.statusStmt = db.prepare("UPDATE memories SET status = ?, updated_at = ? WHERE id = ?");
    this.deleteStmt = db.prepare("DELETE FROM memories WHERE id = ?");
    this.searchStmt = db.prepare(`
      SELECT m.*, bm25(memories_fts) AS rank FROM memories_fts
      JOIN memories m ON m.rowid = memories_fts.rowid
      WHERE memories_fts MATCH ? AND m.status = 'active'
      ORDER BY rank LIMIT ?`);
    // A conversation's own memories: proposed from it, or created from one of its messages
    // (their ids as one JSON array, each an index lookup).
    this.fromConversationStmt = db.prepare(`
      SELECT id FROM memories WHERE conversation_id = ?
      UNION SELECT id FROM memories WHERE message_id IN (SELECT value FROM json_each(?))`);
    this.linkStmt = db.prepare(
      "INSERT OR IGNORE INTO message_memories (message_id, memory_id) VALUES (?, ?)",
    );
    this.usedStmt = db.prepare("UPDATE memories SET last_used_at = ? WHERE id = ?");
    this.vectorGetStmt = db.prepare(
      "SELECT text_hash, vector FROM memory_vectors WHERE memory_id = ? AND model_key = ?",
    );
    this.vectorPutStmt = db.prepare(`
      INSERT INTO memory_vectors (memory_id, model_key, text_hash, vector) VALUES (?, ?, ?, ?)
      ON CONFLICT(memory_id, model_key) DO UPDATE SET text_hash = excluded.text_hash, vector = excluded.vector`);
  }

  create(memory: NewMemory, now = Date.now()): Memory {
    const id = randomUUID();
    this.insertStmt.run({
      id,
      text: memory.text,
      source: memory.source,
      status: memory.status,
      conversationId: memory.conversationId ?? null,
      messageId: memory.messageId ?? null,
      now,
    });
    return this.get(id)!;
  }

  get(id: string): Memory | null {
    const row = this.getStmt.get(id);
    return row ? toMemory(row) : null;
  }

  /** Every memory: proposed first, then the most recently changed. */
  list(): Memory[] {
    return this.listStmt.all().map(toMemory);
  }

  /** Active memories only (the ones answers may use), most recently changed first. */
  listActive(): Memory[] {
    return this.activeStmt.all().map(toMemory);
  }

  /** Null when it does not exist. */
  setText(id: string, text: string, now = Date.now()): Memory | null {
    return this.textStmt.run(text, now, id).changes > 0 ? this.get(id) : null;
  }

  setStatus(id: string, status: Memory["status"], now = Date.now()): Memory | null {
    return this.statusStmt.run(status, now, id).changes > 0 ? this.get(id) : null;
  }

  delete(id: string): boolean {
    return this.deleteStmt.run(id).changes > 0;
  }

  /** Ids of the memories that came from a conversation (see fromConversationStmt). */
  idsFromConversation(conversationId: string): string[] {
    return this.transaction(() =>
      this.fromConversationStmt
        .all(conversationId, JSON.stringify(this.messages.messageIds(conversationId)))
        .map((r) => r.id),
    );
  }

  /** Active memories sharing words with `text`, best bm25 first. */
  searchActive(text: string, limit: number): Memory[] {
    const query = anyTermQuery(text);
    if (!query) return [];
    return this.searchStmt.all(query, limit).map(toMemory);
  }

  /** Record that an answer was given these memories; call in the answer's transaction. */
  linkToMessage(messageId: string, memoryIds: readonly string[], now = Date.now()): void {
    for (const id of memoryIds) {
      this.linkStmt.run(messageId, id);
      this.usedStmt.run(now, id);
    }
  }

  /** The cached embedding of a memory under a model, if it was made from the current text. */
  cachedVector(memory: Memory, modelKey: string): Float32Array | null {
    const row = this.vectorGetStmt.get(memory.id, modelKey);
    if (!row || row.text_hash !== textHash(memory.text)) return null;
    // A fresh, aligned copy: a Buffer may sit at any offset of a shared pool.
    return new Float32Array(new Uint8Array(row.vector).buffer);
  }

  cacheVector(memory: Memory, modelKey: string, vector: readonly number[]): void {
    const bytes = Buffer.from(Float32Array.from(vector).buffer);
    this.vectorPutStmt.run(memory.id, modelKey, textHash(memory.text), bytes);
  }

  /** Run `fn` in one transaction (a memory and its links are written together). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
