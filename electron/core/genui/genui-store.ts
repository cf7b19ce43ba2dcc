import type { Database, Statement } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import type { Message } from "../../api";
import {
  CATALOG_VERSION,
  MessageInteraction,
  type InteractionOutcome,
  type InteractionValues,
  type UiDocument,
} from "../../api/genui";
import type { ConversationRepository } from "../conversations/conversation-repository";

/** The GenUI columns of a messages row (migration 0007). */
export interface GenuiColumns {
  format?: string | null;
  ui_json?: string | null;
  interaction_json?: string | null;
}

/**
 * Message.format/ui/interaction from a row. Only set when present, so text messages look
 * exactly as they did before GenUI. The stored document was validated when it was written.
 */
export function genuiFields(row: GenuiColumns): Pick<Message, "format" | "ui" | "interaction"> {
  const out: Pick<Message, "format" | "ui" | "interaction"> = {};
  if (row.format === "ui") {
    out.format = "ui";
    out.ui = parseJson(row.ui_json) as UiDocument | null;
  }
  if (row.interaction_json) {
    const parsed = MessageInteraction.safeParse(parseJson(row.interaction_json));
    if (parsed.success) out.interaction = parsed.data;
  }
  return out;
}

function parseJson(json: string | null | undefined): unknown {
  if (!json) return null;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return null;
  }
}

export interface GenuiEvent {
  id: string;
  messageId: string;
  componentId: string;
  action: string;
  values: InteractionValues;
  outcome: InteractionOutcome;
  userMessageId: string | null;
  createdAt: number;
}

/**
 * The GenUI columns of messages (written through the conversation repository) and turns, and
 * the genui_events table.
 */
export class GenuiStore {
  private readonly turnStmt: Statement<[number, string]>;
  private readonly eventStmt: Statement<Record<string, unknown>>;
  private readonly countStmt: Statement<[string, string], { n: number }>;

  constructor(
    db: Database,
    private readonly messages: Pick<
      ConversationRepository,
      "markUiAnswer" | "saveUiDocument" | "saveInteraction"
    >,
  ) {
    this.turnStmt = db.prepare("UPDATE turns SET genui_catalog_version = ? WHERE message_id = ?");
    this.eventStmt = db.prepare(`
      INSERT INTO genui_events (id, message_id, component_id, action, values_json, outcome, user_message_id, created_at)
      VALUES (@id, @messageId, @componentId, @action, @values, @outcome, @userMessageId, @createdAt)`);
    this.countStmt = db.prepare(
      "SELECT COUNT(*) AS n FROM genui_events WHERE message_id = ? AND component_id = ? AND outcome != 'abandoned'",
    );
  }

  /** A UI answer is starting: its message and its turn record say so (in the turn's transaction). */
  markUiAnswer(messageId: string): void {
    this.messages.markUiAnswer(messageId);
    this.turnStmt.run(CATALOG_VERSION, messageId);
  }

  saveDocument(messageId: string, doc: UiDocument | null): void {
    this.messages.saveUiDocument(messageId, doc);
  }

  saveInteraction(messageId: string, interaction: MessageInteraction): void {
    this.messages.saveInteraction(messageId, interaction);
  }

  /** How many times a component was used before (abandonments aside): >0 makes the next one "changed". */
  usedBefore(messageId: string, componentId: string): number {
    return this.countStmt.get(messageId, componentId)?.n ?? 0;
  }

  recordEvent(event: Omit<GenuiEvent, "id">): GenuiEvent {
    const stored = { ...event, id: randomUUID() };
    this.eventStmt.run({ ...stored, values: JSON.stringify(stored.values) });
    return stored;
  }
}
