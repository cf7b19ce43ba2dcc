import type { Database, Statement } from "better-sqlite3";
import { StopReasonWire, withCustomSystem, type ItemVersions } from "../../../common/feedback-protocol";
import type { ToolStep } from "../../api";
import type { ConversationRepository } from "../conversations/conversation-repository";
import { MessageStore } from "../conversations/message-store";
import type { ChatTurn } from "../engine/types";
import { ToolStepStore } from "../tools/tool-step-store";
import type { MessageVersions } from "./feedback-items";

interface TurnRow {
  model_sha256: string | null;
  harness_version: string;
  adapters_json: string;
  router_json: string;
  system_prompt: string | null;
  timings_json: string | null;
}

/**
 * Default `versionsFor` and `conversationUpTo` for FeedbackService, read from the schema-v3
 * tables (turns, adapters) and the conversation repository. The lead may wire other sources;
 * these keep the service usable and tested on real data. `catalogVersion` comes from the
 * component catalog, if any.
 */
export class MessageContext {
  private readonly turnStmt: Statement<[string], TurnRow>;
  private readonly domainStmt: Statement<[string], string>;
  private readonly steps: ToolStepStore;

  constructor(
    db: Database,
    private readonly catalogVersion: () => string | null = () => null,
    private readonly messages: Pick<ConversationRepository, "branchUpTo"> = new MessageStore(db),
  ) {
    this.turnStmt = db.prepare(
      "SELECT model_sha256, harness_version, adapters_json, router_json, system_prompt, timings_json FROM turns WHERE message_id = ?",
    );
    this.domainStmt = db.prepare("SELECT domain FROM adapters WHERE id = ?").pluck() as Statement<
      [string],
      string
    >;
    this.steps = new ToolStepStore(db);
  }

  /** The answer's tool calls (its trajectory), in order; none for an answer without calls. */
  stepsFor(messageId: string): ToolStep[] {
    return this.steps.forMessage(messageId);
  }

  /** The versions of an assistant message from its turn record; null without one. */
  versionsFor(messageId: string): MessageVersions | null {
    const row = this.turnStmt.get(messageId);
    if (!row) return null;
    let adapters: ItemVersions["adapters"] = [];
    let router: ItemVersions["router"] = null;
    try {
      const parsed = JSON.parse(row.adapters_json) as { id: string; version: string; scale: number }[];
      adapters = parsed.slice(0, 16).map((a) => ({
        id: String(a.id).slice(0, 64),
        version: String(a.version).slice(0, 64),
        scale: Number(a.scale) || 0,
      }));
      const r = JSON.parse(row.router_json) as { mode?: string; confidence?: number; reason?: string };
      if (r && typeof r.mode === "string") {
        router = {
          mode: r.mode.slice(0, 16),
          confidence: Math.min(1, Math.max(0, Number(r.confidence) || 0)),
          reason: String(r.reason ?? "").slice(0, 500),
        };
      }
    } catch {
      // A damaged record still yields the model and harness versions.
    }
    // The strongest adapter says what the answer was about.
    const top = [...adapters].sort((a, b) => b.scale - a.scale)[0];
    const domain = top ? (this.domainStmt.get(top.id) ?? null) : null;
    return {
      versions: {
        modelSha256: row.model_sha256,
        // An answer under the conversation's own system prompt says so (migration 0012).
        harnessVersion: withCustomSystem(row.harness_version, row.system_prompt !== null),
        adapters,
        router,
        catalogVersion: this.catalogVersion(),
      },
      domain,
      stopReason: stopReasonOf(row.timings_json),
    };
  }

  /** The conversation up to and including the message (the last turn is the message itself). */
  conversationUpTo(messageId: string): ChatTurn[] {
    // The message's own branch, whichever versions are shown now, so feedback on an earlier
    // version carries the conversation it answered.
    return this.messages.branchUpTo(messageId).map((r) => ({ role: r.role, text: r.content }));
  }
}

/** The stop reason in a turn's timings (TurnTimings.stopReason); null when unknown. */
function stopReasonOf(timingsJson: string | null): StopReasonWire | null {
  if (timingsJson === null) return null;
  try {
    const parsed = StopReasonWire.safeParse((JSON.parse(timingsJson) as { stopReason?: unknown }).stopReason);
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
