import type { Database, Statement } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { GenerationStats, type Message, type MessageRole, type MessageStatus } from "../../api";
import { routingFromColumns } from "../chat/turn-store";

interface MessageRow {
  id: string;
  conversation_id: string;
  role: MessageRole;
  content: string;
  status: MessageStatus;
  error: string | null;
  created_at: number;
  stats_json: string | null;
  seq: number;
  replaced_by: string | null;
  /** From the turn record (LEFT JOIN turns); null for user messages. */
  turn_adapters: string | null;
  turn_router: string | null;
}

function parseStats(json: string | null): GenerationStats | null {
  if (json === null) return null;
  try {
    const parsed = GenerationStats.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    role: row.role,
    content: row.content,
    status: row.status,
    error: row.error,
    createdAt: row.created_at,
    stats: parseStats(row.stats_json),
    routing: routingFromColumns(row.turn_adapters, row.turn_router),
  };
}

const SELECT = `
  SELECT m.*, t.adapters_json AS turn_adapters, t.router_json AS turn_router
  FROM messages m LEFT JOIN turns t ON t.message_id = m.id`;

export interface NewMessage {
  conversationId: string;
  role: MessageRole;
  content: string;
  status: MessageStatus;
}

export interface MessageFinal {
  content: string;
  status: MessageStatus;
  error: string | null;
  stats: GenerationStats | null;
}

/** Messages table, ordered by `seq` inside each conversation. */
export class MessageStore {
  private readonly insertStmt: Statement<[string, string, string, string, string, number, string]>;
  private readonly getStmt: Statement<[string], MessageRow>;
  private readonly listStmt: Statement<[string], MessageRow>;
  private readonly countStmt: Statement<[string, string], { n: number }>;
  private readonly contentStmt: Statement<[string, string]>;
  private readonly finishStmt: Statement<[string, string, string | null, string | null, string]>;
  private readonly interruptStmt: Statement<[]>;
  private readonly replaceStmt: Statement<[string, string]>;

  constructor(db: Database) {
    // seq is computed in the INSERT itself, so that it is atomic with the row.
    this.insertStmt = db.prepare(`
      INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq)
      VALUES (?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?))`);
    this.getStmt = db.prepare(`${SELECT} WHERE m.id = ?`);
    // Regenerated answers (replaced_by set) stay in the database but leave the transcript.
    this.listStmt = db.prepare(
      `${SELECT} WHERE m.conversation_id = ? AND m.replaced_by IS NULL ORDER BY m.seq`,
    );
    this.countStmt = db.prepare("SELECT COUNT(*) AS n FROM messages WHERE conversation_id = ? AND role = ?");
    this.contentStmt = db.prepare("UPDATE messages SET content = ? WHERE id = ?");
    this.finishStmt = db.prepare(
      "UPDATE messages SET content = ?, status = ?, error = ?, stats_json = ? WHERE id = ?",
    );
    this.interruptStmt = db.prepare("UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'");
    this.replaceStmt = db.prepare("UPDATE messages SET replaced_by = ? WHERE id = ?");
  }

  /** Append a message at the end of its conversation. */
  append(msg: NewMessage, now = Date.now()): Message {
    const id = randomUUID();
    this.insertStmt.run(id, msg.conversationId, msg.role, msg.content, msg.status, now, msg.conversationId);
    return { id, ...msg, error: null, createdAt: now, stats: null, routing: null };
  }

  get(id: string): Message | null {
    const row = this.getStmt.get(id);
    return row ? toMessage(row) : null;
  }

  /** The messages of a conversation in order, without answers replaced by a regeneration. */
  list(conversationId: string): Message[] {
    return this.listStmt.all(conversationId).map(toMessage);
  }

  /** Take an answer out of the transcript: `replacementId` answers in its place. */
  markReplaced(id: string, replacementId: string): void {
    this.replaceStmt.run(replacementId, id);
  }

  countByRole(conversationId: string, role: MessageRole): number {
    return this.countStmt.get(conversationId, role)?.n ?? 0;
  }

  /** Save the partial text of a streaming answer (so a killed process keeps most of it). */
  saveContent(id: string, content: string): void {
    this.contentStmt.run(content, id);
  }

  /** Store the final state of an answer; false when the message no longer exists (deleted). */
  finish(id: string, final: MessageFinal): boolean {
    const stats = final.stats ? JSON.stringify(final.stats) : null;
    return this.finishStmt.run(final.content, final.status, final.error, stats, id).changes > 0;
  }

  /** At start-up: answers left "streaming" by a killed process become "interrupted" (content kept). */
  markStreamingInterrupted(): number {
    return this.interruptStmt.run().changes;
  }
}
