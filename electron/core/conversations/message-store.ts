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
import type { MessageInteraction, UiDocument } from "../../api/genui";
import { generationFromColumns, routingFromColumns } from "../chat/turn-store";
import { type GenuiColumns, genuiFields } from "../genui/genui-store";
import { ToolStepStore } from "../tools/tool-step-store";
import type {
  AppendPlace,
  BranchTurn,
  ContextInfo,
  ConversationRepository,
  ImportedMessage,
  MessageFinal,
  MessagePlace,
  NewMessage,
} from "./conversation-repository";

export type { AppendPlace, ContextInfo, MessageFinal, NewMessage } from "./conversation-repository";

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
  /** The message tree (migration 0011): the message this one follows, and whether it is shown. */
  parent_id: string | null;
  chosen: number;
  shown: number;
  context_json: string | null;
  /** The latest rating and whether a correction exists (feedback_events, migration 0004). */
  rating: string | null;
  /** The latest correction's text (payload `correctedText`), null when none. */
  correction: string | null;
  /** From the turn record (LEFT JOIN turns); null for user messages. */
  turn_adapters: string | null;
  turn_router: string | null;
  /** The sampling and system prompt it was generated with (migration 0012). */
  turn_sampling: string | null;
  turn_system_prompt: string | null;
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

function toMessage(
  row: MessageRow,
  memoriesUsed: MemoryUse[] = [],
  steps: ToolStep[] = [],
  versions?: string[],
): Message {
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
    generation: generationFromColumns(row.turn_sampling, row.turn_system_prompt),
    rating: row.rating === "good" || row.rating === "bad" ? row.rating : null,
    corrected: row.correction !== null,
    correction: row.correction,
    memoriesUsed,
    context: parseContext(row.context_json),
    // The Agent's tool calls (migration 0008), in order.
    steps,
    // GenUI (migration 0007): format, ui and interaction, only when present.
    ...genuiFields(row),
    // Edits and regenerations (migration 0011): only when there is more than one version.
    ...(versions && versions.length > 1 ? { versions } : {}),
  };
}

// Ratings and corrections are read through feedback_events_message (message_id, kind, created_at).
const SELECT = `
  SELECT m.*, t.adapters_json AS turn_adapters, t.router_json AS turn_router,
    t.sampling_json AS turn_sampling, t.system_prompt AS turn_system_prompt,
    (SELECT json_extract(f.payload_json, '$.rating') FROM feedback_events f
      WHERE f.message_id = m.id AND f.kind = 'rating' ORDER BY f.created_at DESC, f.rowid DESC LIMIT 1) AS rating,
    (SELECT json_extract(f.payload_json, '$.correctedText') FROM feedback_events f
      WHERE f.message_id = m.id AND f.kind = 'correction' ORDER BY f.created_at DESC, f.rowid DESC LIMIT 1) AS correction
  FROM messages m LEFT JOIN turns t ON t.message_id = m.id`;

/**
 * Marks the shown branch of conversation @c: from the chosen root down through chosen children.
 * Only rows whose flag changes are written, so the search index's triggers touch just the
 * branches swapped. CROSS JOIN keeps `branch` the outer loop, so each step is a messages_parent
 * lookup; with a plain JOIN the planner built an automatic index on `chosen` over the whole
 * table at every call (a regeneration cost grew with the database: 20k messages with 5%
 * regenerations took 9 s, then 26 s, then 46 s as the file grew; 3.4 s each after).
 */
export const SHOW_BRANCH_SQL = `
  WITH RECURSIVE branch(id) AS (
    SELECT id FROM messages WHERE conversation_id = @c AND parent_id IS NULL AND chosen = 1
    UNION ALL
    SELECT m.id FROM branch b CROSS JOIN messages m ON m.parent_id = b.id WHERE m.chosen = 1
  )
  UPDATE messages SET shown = (id IN branch)
  WHERE conversation_id = @c AND shown <> (id IN branch)`;

/**
 * The SQLite ConversationRepository: the messages table, ordered by `seq` inside each
 * conversation, and the only code outside migrations and tests that runs SQL on it. Messages
 * form a tree (migration 0011): versions of a message are siblings (same parent), one of them
 * chosen; the transcript is the shown branch (`shown`, maintained here from the choices), read
 * in `seq` order, which is root to leaf because a child is always written after its parent.
 * An operation of several statements runs in one transaction (a savepoint inside the caller's).
 */
export class MessageStore implements ConversationRepository {
  private readonly insertStmt: Statement<
    [string, string, string, string, string, number, string, string | null]
  >;
  private readonly leafStmt: Statement<[string], string>;
  private readonly placeStmt: Statement<[string], { conversation_id: string; parent_id: string | null }>;
  private readonly unchooseStmt: Statement<[string, string | null]>;
  private readonly chooseStmt: Statement<[string]>;
  private readonly refreshStmt: Statement<{ c: string }>;
  private readonly siblingsStmt: Statement<[string, string | null], string>;
  private readonly treeStmt: Statement<[string], { id: string; parent_id: string | null }>;
  private readonly getStmt: Statement<[string], MessageRow>;
  private readonly listStmt: Statement<[string], MessageRow>;
  private readonly countStmt: Statement<[string, string], { n: number }>;
  private readonly contentStmt: Statement<[string, string]>;
  private readonly finishStmt: Statement<[string, string, string | null, string | null, string]>;
  private readonly interruptStmt: Statement<[]>;
  private readonly contextStmt: Statement<[string | null, string]>;
  private readonly usedByMessageStmt: Statement<[string], MemoryUse & { message_id: string }>;
  private readonly usedByConversationStmt: Statement<[string], MemoryUse & { message_id: string }>;
  private readonly roleStmt: Statement<[string], { conversation_id: string; role: MessageRole }>;
  private readonly upToStmt: Statement<{ id: string }, BranchTurn>;
  private readonly replacedStmt: Statement<[string, string], string>;
  private readonly importStmt: Statement<Record<string, unknown>>;
  private readonly markUiStmt: Statement<[string]>;
  private readonly uiStmt: Statement<[string | null, string]>;
  private readonly interactionStmt: Statement<[string, string]>;
  private readonly steps: ToolStepStore;
  /**
   * Answers that ended while their end could not be written (a full disk), by id: reads show
   * them ended, not "streaming", until finish() writes them.
   */
  private readonly unwritten = new Map<string, MessageFinal>();

  constructor(private readonly db: Database) {
    this.steps = new ToolStepStore(db);
    // seq is computed in the INSERT itself, so that it is atomic with the row.
    this.insertStmt = db.prepare(`
      INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq, parent_id, chosen, shown)
      VALUES (?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?), ?, 1, 1)`);
    this.leafStmt = db
      .prepare("SELECT id FROM messages WHERE conversation_id = ? AND shown = 1 ORDER BY seq DESC LIMIT 1")
      .pluck() as Statement<[string], string>;
    this.placeStmt = db.prepare("SELECT conversation_id, parent_id FROM messages WHERE id = ?");
    this.unchooseStmt = db.prepare(
      "UPDATE messages SET chosen = 0 WHERE conversation_id = ? AND parent_id IS ? AND chosen = 1",
    );
    this.chooseStmt = db.prepare("UPDATE messages SET chosen = 1 WHERE id = ?");
    this.refreshStmt = db.prepare(SHOW_BRANCH_SQL);
    this.siblingsStmt = db
      .prepare("SELECT id FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY seq")
      .pluck() as Statement<[string, string | null], string>;
    this.treeStmt = db.prepare("SELECT id, parent_id FROM messages WHERE conversation_id = ? ORDER BY seq");
    this.getStmt = db.prepare(`${SELECT} WHERE m.id = ?`);
    // Versions not shown (earlier answers, edited questions and what followed them) stay in the
    // database but are not the transcript.
    this.listStmt = db.prepare(`${SELECT} WHERE m.conversation_id = ? AND m.shown = 1 ORDER BY m.seq`);
    this.countStmt = db.prepare("SELECT COUNT(*) AS n FROM messages WHERE conversation_id = ? AND role = ?");
    this.contentStmt = db.prepare("UPDATE messages SET content = ? WHERE id = ?");
    this.finishStmt = db.prepare(
      "UPDATE messages SET content = ?, status = ?, error = ?, stats_json = ? WHERE id = ?",
    );
    this.interruptStmt = db.prepare("UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'");
    this.contextStmt = db.prepare("UPDATE messages SET context_json = ? WHERE id = ?");
    const used = `
      SELECT mm.message_id, mem.id, mem.text FROM message_memories mm
      JOIN memories mem ON mem.id = mm.memory_id`;
    this.usedByMessageStmt = db.prepare(`${used} WHERE mm.message_id = ? ORDER BY mem.created_at, mem.id`);
    this.usedByConversationStmt = db.prepare(`${used}
      JOIN messages m ON m.id = mm.message_id
      WHERE m.conversation_id = ? ORDER BY mem.created_at, mem.id`);
    this.roleStmt = db.prepare("SELECT conversation_id, role FROM messages WHERE id = ?");
    // The message's own branch (migration 0011): it and its ancestors, whichever versions are
    // shown now, so feedback on an earlier version carries the conversation it answered.
    this.upToStmt = db.prepare(`
      WITH RECURSIVE up(id, parent_id, role, content, seq) AS (
        SELECT id, parent_id, role, content, seq FROM messages WHERE id = @id
        UNION ALL
        SELECT m.id, m.parent_id, m.role, m.content, m.seq FROM messages m JOIN up ON m.id = up.parent_id
      )
      SELECT role, content FROM up ORDER BY seq`);
    this.replacedStmt = db
      .prepare("SELECT id FROM messages WHERE conversation_id = ? AND replaced_by = ?")
      .pluck() as Statement<[string, string], string>;
    // An import is a chain: each message follows the end of the shown branch, chosen and shown.
    this.importStmt = db.prepare(`
      INSERT INTO messages (id, conversation_id, role, content, status, error, created_at, stats_json, seq, context_json,
        format, ui_json, interaction_json, parent_id, chosen, shown)
      VALUES (@id, @conversationId, @role, @content, @status, @error, @createdAt, @stats,
        (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = @conversationId), @context,
        @format, @ui, @interaction, @parentId, 1, 1)`);
    this.markUiStmt = db.prepare("UPDATE messages SET format = 'ui' WHERE id = ?");
    this.uiStmt = db.prepare("UPDATE messages SET ui_json = ? WHERE id = ?");
    this.interactionStmt = db.prepare("UPDATE messages SET interaction_json = ? WHERE id = ?");
  }

  /**
   * Append a message at the end of the shown branch, or (place.versionOf) as a new version of
   * a message, shown in its place. Throws when `versionOf` is not a message of the conversation
   * (callers check first).
   */
  append(msg: NewMessage, now = Date.now(), place: AppendPlace = {}): Message {
    const id = randomUUID();
    return this.db.transaction(() => {
      let parentId: string | null;
      if (place.versionOf !== undefined) {
        const of = this.placeStmt.get(place.versionOf);
        if (!of || of.conversation_id !== msg.conversationId) {
          throw new Error(`message ${place.versionOf} is not in conversation ${msg.conversationId}`);
        }
        parentId = of.parent_id;
        this.unchooseStmt.run(msg.conversationId, parentId);
      } else {
        parentId = this.leafStmt.get(msg.conversationId) ?? null;
      }
      this.insertStmt.run(
        id,
        msg.conversationId,
        msg.role,
        msg.content,
        msg.status,
        now,
        msg.conversationId,
        parentId,
      );
      if (place.versionOf !== undefined) this.refreshStmt.run({ c: msg.conversationId });
      const versions =
        place.versionOf !== undefined ? this.siblingsStmt.all(msg.conversationId, parentId) : [];
      return {
        ...messageDefaults(),
        id,
        ...msg,
        error: null,
        createdAt: now,
        stats: null,
        ...(versions.length > 1 ? { versions } : {}),
      };
    })();
  }

  /**
   * Show the branch through message `id`: it becomes the chosen version among its siblings, and
   * below it the versions chosen last time it was shown. Returns its conversation's id, or null
   * when there is no such message.
   */
  showVersion(id: string): string | null {
    return this.db.transaction(() => {
      const place = this.placeStmt.get(id);
      if (!place) return null;
      this.unchooseStmt.run(place.conversation_id, place.parent_id);
      this.chooseStmt.run(id);
      this.refreshStmt.run({ c: place.conversation_id });
      return place.conversation_id;
    })();
  }

  get(id: string): Message | null {
    return this.db.transaction(() => {
      const row = this.getStmt.get(id);
      if (!row) return null;
      const used = this.usedByMessageStmt.all(id).map((u) => ({ id: u.id, text: u.text }));
      const versions = this.siblingsStmt.all(row.conversation_id, row.parent_id);
      return this.withUnwritten(toMessage(row, used, this.steps.forMessage(id), versions));
    })();
  }

  /** The shown branch of a conversation, in order; each message with its versions' ids. */
  list(conversationId: string): Message[] {
    return this.db.transaction(() => this.readList(conversationId))();
  }

  private readList(conversationId: string): Message[] {
    const used = new Map<string, MemoryUse[]>();
    for (const u of this.usedByConversationStmt.all(conversationId)) {
      const list = used.get(u.message_id) ?? [];
      list.push({ id: u.id, text: u.text });
      used.set(u.message_id, list);
    }
    const rows = this.listStmt.all(conversationId);
    const steps = this.steps.forMessages(rows.map((row) => row.id));
    const versions = this.versionsIn(conversationId);
    return rows.map((row) =>
      this.withUnwritten(
        toMessage(row, used.get(row.id), steps.get(row.id), versions.get(row.parent_id ?? "")),
      ),
    );
  }

  /** The ids of each parent's children in a conversation, oldest first ("" for the roots). */
  private versionsIn(conversationId: string): Map<string, string[]> {
    const byParent = new Map<string, string[]>();
    for (const { id, parent_id } of this.treeStmt.all(conversationId)) {
      const key = parent_id ?? "";
      const list = byParent.get(key);
      if (list) list.push(id);
      else byParent.set(key, [id]);
    }
    return byParent;
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

  messageIds(conversationId: string): string[] {
    return this.treeStmt.all(conversationId).map((row) => row.id);
  }

  placeOf(id: string): MessagePlace | null {
    const row = this.roleStmt.get(id);
    return row ? { conversationId: row.conversation_id, role: row.role } : null;
  }

  branchUpTo(id: string): BranchTurn[] {
    return this.upToStmt.all({ id });
  }

  replacedMessage(conversationId: string, newMessageId: string): string | null {
    return this.replacedStmt.get(conversationId, newMessageId) ?? null;
  }

  importMessage(m: ImportedMessage): string {
    return this.db.transaction(() => {
      this.importStmt.run({
        id: m.id,
        conversationId: m.conversationId,
        role: m.role,
        content: m.content,
        status: m.status,
        error: m.error,
        createdAt: m.createdAt,
        stats: m.stats ? JSON.stringify(m.stats) : null,
        context: m.context ? JSON.stringify(m.context) : null,
        format: m.format,
        ui: m.ui ? JSON.stringify(m.ui) : null,
        interaction: m.interaction ? JSON.stringify(m.interaction) : null,
        parentId: this.leafStmt.get(m.conversationId) ?? null,
      });
      return m.id;
    })();
  }

  markUiAnswer(id: string): void {
    this.markUiStmt.run(id);
  }

  saveUiDocument(id: string, doc: UiDocument | null): void {
    this.uiStmt.run(doc ? JSON.stringify(doc) : null, id);
  }

  saveInteraction(id: string, interaction: MessageInteraction): void {
    this.interactionStmt.run(JSON.stringify(interaction), id);
  }
}
