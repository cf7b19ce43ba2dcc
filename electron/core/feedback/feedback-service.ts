import type { Database } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import type { ToolDefinitionWire } from "../../../common/feedback-protocol";
import { ApiError, type ToolStep } from "../../api";
import type { ConversationRepository } from "../conversations/conversation-repository";
import { MessageStore } from "../conversations/message-store";
import type { ChatTurn } from "../engine/types";
import { FeedbackEventStore, type FeedbackEvent } from "./feedback-event-store";
import {
  type FeedbackKind,
  type ItemInput,
  type ItemText,
  type MessageVersions,
  type SharingLevel,
  UNKNOWN_VERSIONS,
  buildItem,
  toolOutcomeOf,
} from "./feedback-items";
import { SqliteOutbox } from "./sqlite-outbox";

export type Rating = "good" | "bad";
export type GenuiOutcome = "completed" | "abandoned" | "changed";

export interface GenuiInteraction {
  componentId: string;
  action: string;
  /** What the user entered or picked (text: sent only with the text consent, redacted). */
  values?: Record<string, unknown>;
  outcome: GenuiOutcome;
}

export interface FeedbackServiceDeps {
  db: Database;
  /** Versions + adapter domain of an assistant message (its turn record); null when unknown. */
  versionsFor: (messageId: string) => MessageVersions | null;
  /** The conversation up to AND including the message, in order (the last turn is the message). */
  conversationUpTo: (messageId: string) => ChatTurn[];
  getConsent: () => SharingLevel;
  now?: () => number;
  newId?: () => string;
  /** Shared with the privacy settings and the sync client; default: one on `db`. */
  outbox?: SqliteOutbox;
  /** Where the rated messages are (their conversation and role); default: one on `db`. */
  messages?: Pick<ConversationRepository, "placeOf">;
  /** The tool calls of an answer, in order (its trajectory); default: none. */
  stepsFor?: (messageId: string) => ToolStep[];
  /** Definitions of the tools the steps called, as the model was given them; default: names only. */
  toolsFor?: (steps: readonly ToolStep[]) => ToolDefinitionWire[];
}

/** What recording a signal did. */
export interface FeedbackRecord {
  eventId: string;
  kind: FeedbackKind;
  messageId: string;
  createdAt: number;
  /** True when a redacted item was queued for upload (consent was not "off"). */
  queued: boolean;
}

const GENUI_OUTCOMES: readonly GenuiOutcome[] = ["completed", "abandoned", "changed"];

/** Tools only run in answers of the Agent specialist: their items train it. */
export const AGENT_DOMAIN = "agent";

/**
 * Whether the user's next message reads as a correction of the answer before it: it opens with
 * a refusal or a repair ("no", "wrong", "that's not …", "I meant …", "try again", "instead …").
 * A cheap, conservative check: a follow-up it misses is counted as not correcting.
 */
export function readsAsCorrection(text: string): boolean {
  const t = text.trim().toLowerCase();
  return /^(no\b|nope\b|wrong\b|incorrect\b|not (that|what|quite|right)\b|that'?s (not|wrong|incorrect)\b|that is (not|wrong|incorrect)\b|this is (not|wrong)\b|you (got it wrong|misunderstood|are wrong|did not|didn'?t)\b|i (meant|said|asked)\b|try again\b|actually\b|instead\b|don'?t\b|do not\b|stop\b|undo\b)/u.test(
    t,
  );
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new ApiError("invalid_input", message);
}

function isShortString(v: unknown, max: number): v is string {
  return typeof v === "string" && v.length > 0 && v.length <= max;
}

/** The text of an item about `messageId`: the conversation before it and the answer itself. */
function promptAndResponse(turns: ChatTurn[]): Pick<ItemText, "prompt" | "response"> {
  const last = turns[turns.length - 1];
  if (last?.role !== "assistant") return { prompt: turns };
  return { prompt: turns.slice(0, -1), response: last.text };
}

interface Signal {
  kind: FeedbackKind;
  messageId: string;
  payload: Record<string, unknown>;
  item: Omit<ItemInput, "key" | "kind" | "createdAt" | "consent" | "target">;
}

/**
 * Records feedback signals on assistant answers. Each signal is stored as a local event and,
 * only with the user's consent, as a redacted wire item in the outbox: both in one transaction,
 * so an item never exists without its event and a failure leaves neither.
 */
export class FeedbackService {
  private readonly events: FeedbackEventStore;
  private readonly messages: Pick<ConversationRepository, "placeOf">;
  readonly outbox: SqliteOutbox;
  private readonly now: () => number;
  private readonly newId: () => string;

  constructor(private readonly deps: FeedbackServiceDeps) {
    this.events = new FeedbackEventStore(deps.db);
    this.messages = deps.messages ?? new MessageStore(deps.db);
    this.outbox = deps.outbox ?? new SqliteOutbox(deps.db);
    this.now = deps.now ?? Date.now;
    this.newId = deps.newId ?? randomUUID;
  }

  /** Thumbs up/down on an answer, with an optional reason (text: sent only with text consent). */
  rate(messageId: string, rating: Rating, reason?: string): FeedbackRecord {
    check(rating === "good" || rating === "bad", 'A rating is "good" or "bad".');
    check(
      reason === undefined || (typeof reason === "string" && reason.length <= 2000),
      "The reason is at most 2000 characters.",
    );
    const trimmed = reason?.trim() || undefined;
    return this.record({
      kind: "rating",
      messageId,
      payload: { rating, reason: trimmed ?? null },
      item: {
        rating,
        text: () => ({ ...promptAndResponse(this.deps.conversationUpTo(messageId)), reason: trimmed }),
      },
    });
  }

  /** The user's edit of an answer: the original and the corrected text form a training pair. */
  correct(messageId: string, correctedText: string): FeedbackRecord {
    check(
      isShortString(correctedText, 100_000) && correctedText.trim() !== "",
      "The correction must be 1–100000 characters.",
    );
    return this.record({
      kind: "correction",
      messageId,
      payload: { correctedText },
      item: {
        text: () => ({
          ...promptAndResponse(this.deps.conversationUpTo(messageId)),
          correction: correctedText,
        }),
      },
    });
  }

  /**
   * A regenerated answer completed: the preference pair (rejected = the replaced answer, chosen =
   * the new one). The event belongs to the new answer.
   */
  regenerated(oldMessageId: string, newMessageId: string): FeedbackRecord {
    const old = this.answer(oldMessageId);
    const fresh = this.answer(newMessageId);
    check(
      old.conversationId === fresh.conversationId,
      "A regeneration pairs two answers of the same conversation.",
    );
    check(oldMessageId !== newMessageId, "A regeneration pairs two different answers.");
    const rejectedVersions = this.deps.versionsFor(oldMessageId)?.versions ?? UNKNOWN_VERSIONS;
    return this.record({
      kind: "regeneration",
      messageId: newMessageId,
      payload: { rejectedMessageId: oldMessageId, chosenMessageId: newMessageId },
      item: {
        interaction: { rejectedVersions },
        text: () => {
          const { prompt, response } = promptAndResponse(this.deps.conversationUpTo(newMessageId));
          const rejected = promptAndResponse(this.deps.conversationUpTo(oldMessageId)).response;
          return { prompt, chosen: response, rejected };
        },
      },
    });
  }

  /** The user copied an answer (a weak positive signal). */
  copied(messageId: string): FeedbackRecord {
    return this.record({
      kind: "copy",
      messageId,
      payload: {},
      item: { text: () => promptAndResponse(this.deps.conversationUpTo(messageId)) },
    });
  }

  /** The user replaced the router's choice (`fromAdapters`) with `toAdapterId` for this answer. */
  routerOverride(messageId: string, fromAdapters: string[], toAdapterId: string): FeedbackRecord {
    check(
      Array.isArray(fromAdapters) &&
        fromAdapters.length <= 16 &&
        fromAdapters.every((a) => isShortString(a, 64)),
      "fromAdapters is a list of up to 16 adapter ids.",
    );
    check(isShortString(toAdapterId, 64), "toAdapterId is an adapter id (1–64 characters).");
    return this.record({
      kind: "router_override",
      messageId,
      payload: { fromAdapters, toAdapterId },
      item: {
        interaction: { from: fromAdapters, chosen: toAdapterId },
        text: () => promptAndResponse(this.deps.conversationUpTo(messageId)),
      },
    });
  }

  /** A click, submit or abandonment in a generated component of the answer. */
  genuiInteraction(messageId: string, interaction: GenuiInteraction): FeedbackRecord {
    const { componentId, action, values, outcome } = interaction ?? ({} as GenuiInteraction);
    check(isShortString(componentId, 100), "componentId must be 1–100 characters.");
    check(isShortString(action, 100), "action must be 1–100 characters.");
    check(GENUI_OUTCOMES.includes(outcome), `outcome is one of ${GENUI_OUTCOMES.join(", ")}.`);
    check(
      values === undefined || (typeof values === "object" && values !== null && !Array.isArray(values)),
      "values is an object.",
    );
    return this.record({
      kind: "genui",
      messageId,
      payload: { componentId, action, values: values ?? null, outcome },
      item: {
        interaction: { componentId, action, outcome },
        interactionValues: values,
        text: () => promptAndResponse(this.deps.conversationUpTo(messageId)),
      },
    });
  }

  /**
   * An answer that called tools is done: its trajectory (the calls, the user's decisions, the
   * results) with its outcome counts, for the Agent's training data.
   */
  trajectory(messageId: string): FeedbackRecord {
    return this.record({
      kind: "trajectory",
      messageId,
      payload: {},
      item: { text: () => promptAndResponse(this.deps.conversationUpTo(messageId)) },
    });
  }

  /**
   * The user wrote again after an answer that called tools: whether that message corrects it
   * (an outcome signal of the trajectory). The follow-up's own text is not sent with it.
   */
  followUp(messageId: string, followUpText: string): FeedbackRecord {
    check(typeof followUpText === "string", "The follow-up is a text.");
    const corrected = readsAsCorrection(followUpText);
    return this.record({
      kind: "follow_up",
      messageId,
      payload: { corrected },
      item: {
        interaction: { corrected },
        text: () => promptAndResponse(this.deps.conversationUpTo(messageId)),
      },
    });
  }

  /** The latest rating of an answer (for the thumbs in the UI), or null. */
  ratingFor(messageId: string): Rating | null {
    return this.events.latestRating(messageId);
  }

  /** Every recorded signal about an answer, oldest first (local data, unredacted). */
  eventsFor(messageId: string): FeedbackEvent[] {
    return this.events.forMessage(messageId);
  }

  close(): void {
    // Statements hold no resources beyond the database, which its owner closes.
  }

  /** The answer a signal is about; clear errors for unknown or non-assistant messages. */
  private answer(messageId: string): { conversationId: string } {
    check(isShortString(messageId, 200), "A message id is required.");
    const message = this.messages.placeOf(messageId);
    if (!message) throw new ApiError("not_found", "This message does not exist (it may have been deleted).");
    check(message.role === "assistant", "Feedback is about an answer; this message is not one.");
    return message;
  }

  /**
   * The outcome counts and (with text) the trajectory of an answer's steps. A regeneration's
   * text is about two answers: it gets the counts of the new one only.
   */
  private withTrajectory(signal: Signal, steps: ToolStep[]): Pick<ItemInput, "toolOutcome" | "text"> {
    const toolOutcome = toolOutcomeOf(steps);
    const text = signal.item.text;
    if (signal.kind === "regeneration" || !text) return { toolOutcome };
    const tools =
      this.deps.toolsFor?.(steps) ?? [...new Set(steps.map((s) => s.tool))].map((name) => ({ name }));
    return { toolOutcome, text: () => ({ ...text(), trajectory: { steps, tools } }) };
  }

  private record(signal: Signal): FeedbackRecord {
    return this.deps.db.transaction((): FeedbackRecord => {
      const { conversationId } = this.answer(signal.messageId);
      const known = this.deps.versionsFor(signal.messageId) ?? { versions: UNKNOWN_VERSIONS, domain: null };
      const steps = this.deps.stepsFor?.(signal.messageId) ?? [];
      // An answer that called tools is the Agent's, whatever else was applied with it.
      const target = steps.length > 0 ? { ...known, domain: AGENT_DOMAIN } : known;
      const consent = this.deps.getConsent();
      const event: FeedbackEvent = {
        id: this.newId(),
        kind: signal.kind,
        messageId: signal.messageId,
        conversationId,
        createdAt: this.now(),
        payload: signal.payload,
        versions: target,
      };
      this.events.insert(event);
      if (consent !== "off") {
        // The idempotency key is random and stored with the item: retries resend the same key.
        const item = buildItem({
          ...signal.item,
          ...(steps.length > 0 ? this.withTrajectory(signal, steps) : {}),
          key: this.newId(),
          kind: signal.kind,
          createdAt: event.createdAt,
          consent,
          target,
        });
        this.outbox.enqueue(event.id, item);
      }
      return {
        eventId: event.id,
        kind: event.kind,
        messageId: signal.messageId,
        createdAt: event.createdAt,
        queued: consent !== "off",
      };
    })();
  }
}
