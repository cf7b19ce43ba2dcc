import type { Database, Statement } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import {
  GenerationStats,
  Message,
  messageDefaults,
  type MessageRole,
  type MessageStatus,
  type ToolStep,
} from "../../api";
import { routingFromColumns } from "../chat/turn-store";
import { type GenuiColumns, genuiFields } from "../genui/genui-store";
import { ToolStepStore } from "../tools/tool-step-store";

interface MessageRow extends GenuiColumns {
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
  context_json: string | null;
  /** The latest rating and whether a correction exists (feedback_events, migration 0004). */
  rating: string | null;
  corrected: number;
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

/** How the history was fitted into the context for an answer (Message.context). */
export type ContextInfo = NonNullable<Message["context"]>;
type MemoryUse = Message["memoriesUsed"][number];

const ContextSchema = Message.shape.context.unwrap().unwrap();

function parseContext(json: string | null): ContextInfo | null {
  if (json === null) return null;
  try {
    const parsed = ContextSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function toMessage(row: MessageRow, memoriesUsed: MemoryUse[] = [], steps: ToolStep[] = []): Message {
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
    rating: row.rating === "good" || row.rating === "bad" ? row.rating : null,
    corrected: row.corrected === 1,
    memoriesUsed,
    context: parseContext(row.context_json),
    // The Agent's tool calls (migration 0008), in order.
    steps,
    // GenUI (migration 0007): format, ui and interaction, only when present.
    ...genuiFields(row),
  };
}

// Ratings and corrections are read through feedback_events_message (message_id, kind, created_at).
const SELECT = `
  SELECT m.*, t.adapters_json AS turn_adapters, t.router_json AS turn_router,
    (SELECT json_extract(f.payload_json, '$.rating') FROM feedback_events f
      WHERE f.message_id = m.id AND f.kind = 'rating' ORDER BY f.created_at DESC, f.rowid DESC LIMIT 1) AS rating,
    EXISTS (SELECT 1 FROM feedback_events f WHERE f.message_id = m.id AND f.kind = 'correction') AS corrected
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
  private readonly contextStmt: Statement<[string | null, string]>;
  private readonly usedByMessageStmt: Statement<[string], MemoryUse & { message_id: string }>;
  private readonly usedByConversationStmt: Statement<[string], MemoryUse & { message_id: string }>;
  private readonly steps: ToolStepStore;
  /**
   * Answers that ended while their end could not be written (a full disk), by id: reads show
   * them ended, not "streaming", until finish() writes them.
   */
  private readonly unwritten = new Map<string, MessageFinal>();

  constructor(db: Database) {
    this.steps = new ToolStepStore(db);
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
    this.contextStmt = db.prepare("UPDATE messages SET context_json = ? WHERE id = ?");
    const used = `
      SELECT mm.message_id, mem.id, mem.text FROM message_memories mm
      JOIN memories mem ON mem.id = mm.memory_id`;
    this.usedByMessageStmt = db.prepare(`${used} WHERE mm.message_id = ? ORDER BY mem.created_at, mem.id`);
    this.usedByConversationStmt = db.prepare(`${used}
      JOIN messages m ON m.id = mm.message_id
      WHERE m.conversation_id = ? ORDER BY mem.created_at, mem.id`);
  }

  /** Append a message at the end of its conversation. */
  append(msg: NewMessage, now = Date.now()): Message {
    const id = randomUUID();
    this.insertStmt.run(id, msg.conversationId, msg.role, msg.content, msg.status, now, msg.conversationId);
    return { ...messageDefaults(), id, ...msg, error: null, createdAt: now, stats: null };
  }

  get(id: string): Message | null {
    const row = this.getStmt.get(id);
    if (!row) return null;
    const used = this.usedByMessageStmt.all(id).map((u) => ({ id: u.id, text: u.text }));
    return this.withUnwritten(toMessage(row, used, this.steps.forMessage(id)));
  }

  /** The messages of a conversation in order, without answers replaced by a regeneration. */
  list(conversationId: string): Message[] {
    const used = new Map<string, MemoryUse[]>();
    for (const u of this.usedByConversationStmt.all(conversationId)) {
      const list = used.get(u.message_id) ?? [];
      list.push({ id: u.id, text: u.text });
      used.set(u.message_id, list);
    }
    const steps = this.steps.forConversation(conversationId);
    return this.listStmt
      .all(conversationId)
      .map((row) => this.withUnwritten(toMessage(row, used.get(row.id), steps.get(row.id))));
  }

  /** Keep how an answer ended when writing it failed (a full disk); finish() writes it later. */
  keepUnwritten(id: string, final: MessageFinal): void {
    this.unwritten.set(id, final);
  }

  /** The answers kept by keepUnwritten and not written yet. */
  unwrittenFinals(): [string, MessageFinal][] {
    return [...this.unwritten];
  }

  private withUnwritten(message: Message): Message {
    const final = this.unwritten.get(message.id);
    if (!final || message.status !== "streaming") return message;
    return {
      ...message,
      content: final.content,
      status: final.status,
      error: final.error,
      stats: final.stats,
    };
  }

  /** Record how the history was fitted into the context for the answer `id`. */
  saveContext(id: string, context: ContextInfo | null): void {
    this.contextStmt.run(context ? JSON.stringify(context) : null, id);
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
    const found = this.finishStmt.run(final.content, final.status, final.error, stats, id).changes > 0;
    this.unwritten.delete(id);
    return found;
  }

  /** At start-up: answers left "streaming" by a killed process become "interrupted" (content kept). */
  markStreamingInterrupted(): number {
    return this.interruptStmt.run().changes;
  }
}
