/**
 * The `tool_steps` and `tool_grants` tables (migration 0008): each step of an answer's
 * trajectory, written when the call is made and updated as it is decided and answered (so a
 * killed process leaves what happened), and the "always allow" grants of each conversation.
 */
import type { Database, Statement } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import type { ToolStep } from "../../api";

interface StepRow {
  id: string;
  message_id: string;
  idx: number;
  server: string;
  tool: string;
  arguments_json: string;
  state: ToolStep["state"];
  decision: ToolStep["decision"];
  result: string | null;
  truncated: number;
  error: string | null;
  duration_ms: number | null;
  created_at: number;
}

function parseArguments(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    // Written by us from a parsed value: only a hand-edited database gets here.
    return json;
  }
}

function toStep(row: StepRow): ToolStep {
  return {
    id: row.id,
    messageId: row.message_id,
    index: row.idx,
    server: row.server,
    tool: row.tool,
    arguments: parseArguments(row.arguments_json),
    state: row.state,
    decision: row.decision,
    result: row.result,
    truncated: row.truncated === 1,
    error: row.error,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
  };
}

/** A new step: the model's call, before any decision. */
export interface NewToolStep {
  messageId: string;
  index: number;
  server: string;
  tool: string;
  arguments: unknown;
  state: ToolStep["state"];
  error?: string | null;
}

/** What changes on a step as it goes (pending → running → done, …). */
export type ToolStepUpdate = Partial<
  Pick<ToolStep, "state" | "decision" | "result" | "truncated" | "error" | "durationMs">
>;

/** A step as imported from an export (new ids, another message). */
export type ImportedToolStep = Omit<ToolStep, "id" | "messageId">;

/** States a step cannot stay in once its answer is no longer generating. */
const UNFINISHED = "('pending', 'running')";

export class ToolStepStore {
  private readonly insertStmt: Statement<[Record<string, unknown>]>;
  private readonly getStmt: Statement<[string], StepRow>;
  private readonly updateStmt: Statement<[Record<string, unknown>]>;
  private readonly byMessageStmt: Statement<[string], StepRow>;
  private readonly byMessagesStmt: Statement<[string], StepRow>;
  private readonly stopUnfinishedStmt: Statement<[]>;
  private readonly grantStmt: Statement<[string, string, string, number]>;
  private readonly hasGrantStmt: Statement<[string, string, string], { n: number }>;

  constructor(db: Database) {
    this.insertStmt = db.prepare(`
      INSERT INTO tool_steps (id, message_id, idx, server, tool, arguments_json, state, decision,
        result, truncated, error, duration_ms, created_at)
      VALUES (@id, @messageId, @index, @server, @tool, @arguments, @state, @decision, @result,
        @truncated, @error, @durationMs, @createdAt)`);
    this.getStmt = db.prepare("SELECT * FROM tool_steps WHERE id = ?");
    this.updateStmt = db.prepare(`
      UPDATE tool_steps SET state = @state, decision = @decision, result = @result,
        truncated = @truncated, error = @error, duration_ms = @durationMs WHERE id = @id`);
    this.byMessageStmt = db.prepare("SELECT * FROM tool_steps WHERE message_id = ? ORDER BY idx");
    // The ids as one JSON array: one statement whatever their number (each id an index lookup).
    this.byMessagesStmt = db.prepare(`
      SELECT * FROM tool_steps WHERE message_id IN (SELECT value FROM json_each(?))
      ORDER BY message_id, idx`);
    this.stopUnfinishedStmt = db.prepare(
      `UPDATE tool_steps SET state = 'stopped' WHERE state IN ${UNFINISHED}`,
    );
    this.grantStmt = db.prepare(
      "INSERT OR IGNORE INTO tool_grants (conversation_id, server, tool, created_at) VALUES (?, ?, ?, ?)",
    );
    this.hasGrantStmt = db.prepare(
      "SELECT COUNT(*) AS n FROM tool_grants WHERE conversation_id = ? AND server = ? AND tool = ?",
    );
  }

  /** Record a step (the model made the call); returns it as stored. */
  create(step: NewToolStep, now = Date.now()): ToolStep {
    const id = randomUUID();
    this.insertStmt.run({
      id,
      messageId: step.messageId,
      index: step.index,
      server: step.server,
      tool: step.tool,
      arguments: JSON.stringify(step.arguments ?? null),
      state: step.state,
      decision: null,
      result: null,
      truncated: 0,
      error: step.error ?? null,
      durationMs: null,
      createdAt: now,
    });
    return this.get(id)!;
  }

  get(id: string): ToolStep | null {
    const row = this.getStmt.get(id);
    return row ? toStep(row) : null;
  }

  /** Change a step; returns it as stored now (null when its answer was deleted meanwhile). */
  update(id: string, change: ToolStepUpdate): ToolStep | null {
    const current = this.get(id);
    if (!current) return null;
    const next = { ...current, ...change };
    this.updateStmt.run({
      id,
      state: next.state,
      decision: next.decision,
      result: next.result,
      truncated: next.truncated ? 1 : 0,
      error: next.error,
      durationMs: next.durationMs,
    });
    return next;
  }

  /** The steps of one answer, in order. */
  forMessage(messageId: string): ToolStep[] {
    return this.byMessageStmt.all(messageId).map(toStep);
  }

  /** The steps of these answers (a transcript's), grouped by message id, each in order. */
  forMessages(messageIds: readonly string[]): Map<string, ToolStep[]> {
    const byMessage = new Map<string, ToolStep[]>();
    if (messageIds.length === 0) return byMessage;
    for (const row of this.byMessagesStmt.all(JSON.stringify(messageIds))) {
      const list = byMessage.get(row.message_id) ?? [];
      list.push(toStep(row));
      byMessage.set(row.message_id, list);
    }
    return byMessage;
  }

  /** Steps of an imported answer, as they were (states, results, durations kept). */
  importSteps(messageId: string, steps: readonly ImportedToolStep[]): void {
    for (const s of steps) {
      this.insertStmt.run({
        id: randomUUID(),
        messageId,
        index: s.index,
        server: s.server,
        tool: s.tool,
        arguments: JSON.stringify(s.arguments ?? null),
        // An export taken while a call waited: nothing will ever answer it here.
        state: s.state === "pending" || s.state === "running" ? "stopped" : s.state,
        decision: s.decision,
        result: s.result,
        truncated: s.truncated ? 1 : 0,
        error: s.error,
        durationMs: s.durationMs,
        createdAt: s.createdAt,
      });
    }
  }

  /** At start-up: steps left pending or running by a killed process can never finish. */
  stopUnfinished(): number {
    return this.stopUnfinishedStmt.run().changes;
  }

  /** "Always allow" `server`/`tool` in this conversation (kept across restarts). */
  grant(conversationId: string, server: string, tool: string, now = Date.now()): void {
    this.grantStmt.run(conversationId, server, tool, now);
  }

  isGranted(conversationId: string, server: string, tool: string): boolean {
    return (this.hasGrantStmt.get(conversationId, server, tool)?.n ?? 0) > 0;
  }
}
