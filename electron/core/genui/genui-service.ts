import { ApiError, type Message } from "../../api";
import {
  type InteractionOutcome,
  type InteractionValues,
  type MessageInteraction,
  checkInteraction,
  findNode,
  interactionText,
} from "../../api/genui";
import type { SendInput, SendResult } from "../chat/turn-pipeline";
import type { GenuiStore } from "./genui-store";

export interface InteractInput {
  conversationId: string;
  messageId: string;
  componentId: string;
  action: string;
  values?: InteractionValues;
}

export interface InteractResult {
  outcome: InteractionOutcome;
  userMessage: Message | null;
  assistantMessage: Message | null;
}

/** The implicit feedback signal of an interaction (FeedbackService.genuiInteraction). */
export interface GenuiSignal {
  componentId: string;
  action: string;
  values: InteractionValues;
  outcome: InteractionOutcome;
}

export interface GenuiServiceDeps {
  store: GenuiStore;
  getMessage: (id: string) => Message | null;
  /** Starts the turn the model answers (TurnPipeline.send). */
  send: (input: SendInput) => Promise<SendResult>;
  /** Records the implicit feedback signal; failures are logged, never fail the interaction. */
  recordSignal: (messageId: string, signal: GenuiSignal) => void;
  log?: (message: string, err: unknown) => void;
  now?: () => number;
}

const notFound = (): ApiError =>
  new ApiError("not_found", "This answer does not exist in this conversation (it may have been deleted).");

/**
 * Interactions with generated components, A2UI-style: each is checked against the component it
 * names, stored (genui_events), recorded as an implicit feedback signal, and, for a submit, a
 * click, a choice or a table sort, turned into a structured user turn the model answers in UI mode.
 *
 * Outcomes: "completed" the first time a component is used, "changed" when it is used again
 * (a form re-submitted, another choice, another sort), "abandoned"
 * when the user left a form they had started filling (the renderer reports that when the form
 * leaves the screen or the page is hidden with unsent edits).
 */
export class GenuiService {
  private readonly log: (message: string, err: unknown) => void;
  private readonly now: () => number;

  constructor(private readonly deps: GenuiServiceDeps) {
    this.log = deps.log ?? console.error;
    this.now = deps.now ?? Date.now;
  }

  /**
   * Check and apply one interaction. Throws ApiError not_found (no such answer), invalid_input
   * (no such component, an action it does not offer, values that break its definition), or
   * whatever starting the turn throws (busy, no_model); nothing is stored then.
   */
  async interact(input: InteractInput): Promise<InteractResult> {
    const message = this.deps.getMessage(input.messageId);
    if (!message || message.conversationId !== input.conversationId) throw notFound();
    if (message.role !== "assistant" || message.format !== "ui" || !message.ui)
      throw new ApiError("invalid_input", "This answer has no generated components.");
    if (message.status === "streaming")
      throw new ApiError("busy", "This answer is still being written; its components are not ready yet.");
    const node = findNode(message.ui, input.componentId);
    if (!node || node.type === "Invalid")
      throw new ApiError(
        "invalid_input",
        `This answer has no usable component "${input.componentId.slice(0, 64)}".`,
      );
    const checked = checkInteraction(node, input.action, input.values ?? {});
    if (!checked.ok)
      throw new ApiError("invalid_input", `This ${node.type} cannot take that: ${checked.reason}.`);

    const outcome: InteractionOutcome = checked.abandoned
      ? "abandoned"
      : checked.effect === "signal" || this.deps.store.usedBefore(message.id, node.id) > 0
        ? "changed"
        : "completed";
    let sent: { userMessage: Message; assistantMessage: Message } | null = null;
    if (checked.effect === "turn") {
      const interaction: MessageInteraction = {
        messageId: message.id,
        componentId: node.id,
        componentType: node.type,
        label: checked.label.slice(0, 300),
        action: input.action,
        values: checked.values,
        outcome,
      };
      sent = await this.deps.send({
        conversationId: input.conversationId,
        text: interactionText(interaction),
        format: "ui",
        interaction,
      });
    }
    this.deps.store.recordEvent({
      messageId: message.id,
      componentId: node.id,
      action: input.action,
      values: checked.values,
      outcome,
      userMessageId: sent?.userMessage.id ?? null,
      createdAt: this.now(),
    });
    try {
      this.deps.recordSignal(message.id, {
        componentId: node.id,
        action: input.action,
        values: checked.values,
        outcome,
      });
    } catch (err) {
      this.log("could not record the GenUI feedback signal", err);
    }
    return {
      outcome,
      userMessage: sent?.userMessage ?? null,
      assistantMessage: sent?.assistantMessage ?? null,
    };
  }
}
