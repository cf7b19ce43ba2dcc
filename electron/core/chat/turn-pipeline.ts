import {
  ApiError,
  type AdapterSelection,
  type Conversation,
  type Message,
  type SamplingSettings,
  type ToolDecision,
  type ToolStep,
} from "../../api";
import { DEFAULT_TITLE } from "../conversations/conversation-store";
import type { ConversationSettingsStore } from "../conversations/conversation-settings";
import { isDiskFull } from "../db/disk-full";
import type { ContextInfo } from "../conversations/message-store";
import type { ChatTurn, GenerateOptions } from "../engine/types";
import type { MessageInteraction } from "../../api/genui";
import type { AnswerFormat, GenuiTurns } from "../genui/genui-turns";
import { type AfterTurn, type TurnCommitted, notifyAll } from "./after-turn";
import { AnswerPrompts } from "./answer-prompt";
import { AnswerRecords } from "./answer-record";
import { AnswerStreamer } from "./answer-stream";
import { type Generation, Generations } from "./generations";
import { titleFromMessage } from "./title";
import { LoadedModelTokens } from "./token-estimate";
import { NO_MODEL_MESSAGE, type TurnPipelineDeps } from "./turn-deps";
import { type TurnPlan, TurnPlanner } from "./turn-plan";

// Kept here so that importers of the pipeline need not know its modules.
export {
  DEFAULT_SYSTEM_PROMPT,
  NO_MODEL_MESSAGE,
  UNVERSIONED_HARNESS,
  type ModelHashes,
  type TurnPipelineDeps,
} from "./turn-deps";

export interface SendInput {
  conversationId: string;
  text: string;
  /** This turn's adapters; default: the conversation's choice, else "auto". */
  adapters?: AdapterSelection;
  sampling?: SamplingSettings;
  /** "ui": answer with components; "text": never; absent: the UI adapter leading the routing decides. */
  format?: AnswerFormat;
  /** This user turn is the use of a component (GenUI), stored with the user message. */
  interaction?: MessageInteraction;
  /** chat.edit: this text is a new version of that user message (shown in its place). */
  editOf?: string;
}

export interface RegenerateInput {
  conversationId: string;
  adapters?: AdapterSelection;
  sampling?: SamplingSettings;
  /** A format asked for ("text": answer a failed UI answer as text); absent: see regenerate. */
  format?: AnswerFormat;
}

export interface SendResult {
  userMessage: Message;
  assistantMessage: Message;
}

/**
 * One chat turn: commit the user message, then stream the assistant's answer from the engine
 * into `chat.delta` events and the database. One generation per conversation at a time.
 *
 * The parts: the turn's plan (turn-plan.ts), its prompt and engine options (answer-prompt.ts),
 * the answer's rows (answer-record.ts), the streaming (answer-stream.ts) and the running
 * generations (generations.ts). This class orders them. What follows from a turn elsewhere
 * (memories, feedback, the router) is done by its after-turn observers (after-turn.ts).
 */
export class TurnPipeline {
  private readonly generations = new Generations();
  private readonly planner: TurnPlanner;
  private readonly prompts: AnswerPrompts;
  private readonly answers: AnswerRecords;
  private readonly streamer: AnswerStreamer;
  private readonly observers: readonly AfterTurn[];
  private readonly log: (message: string, err: unknown) => void;
  private readonly settings: ConversationSettingsStore;

  constructor(private readonly deps: TurnPipelineDeps) {
    const log = deps.log ?? console.error;
    this.log = log;
    this.observers = deps.afterTurn ?? [];
    const tokens = new LoadedModelTokens(deps.engine);
    this.planner = new TurnPlanner(deps, tokens, log);
    this.settings = deps.storage.settings;
    this.prompts = new AnswerPrompts(deps, tokens);
    this.answers = new AnswerRecords(deps, log);
    this.streamer = new AnswerStreamer({
      engine: deps.engine,
      events: deps.events,
      messages: deps.messages,
      agent: deps.agent,
      tokens,
      flushIntervalMs: deps.flushIntervalMs ?? 500,
      log,
    });
  }

  /**
   * Decide the adapters, commit the user message, an empty "streaming" assistant message and
   * its turn record, return both messages, and generate in the background. Throws ApiError
   * not_found / no_model / busy / invalid_input (a bad adapter choice) before anything is written.
   */
  async send(input: SendInput): Promise<SendResult> {
    const { conversations, messages, events, storage, memory, genui } = this.deps;
    const conversation = this.checkCanStart(input.conversationId);
    if (input.editOf !== undefined) editedIndex(messages.list(conversation.id), input.editOf);
    return this.reserved(conversation.id, async (gen) => {
      const selection = input.adapters ?? conversation.adapters;
      const plan = await this.plan(conversation.id, selection, input.text, input.sampling, input.format);
      this.answers.saveUnsaved();
      const now = Date.now();
      const { userMessage, assistantMessage, updated, remembered, previous } = storage.atomically(() => {
        const transcript = messages.list(conversation.id);
        // An edit follows what the edited message followed (checked again: routing was async).
        const previous =
          (input.editOf === undefined
            ? transcript.at(-1)
            : transcript[editedIndex(transcript, input.editOf) - 1]) ?? null;
        const isFirst = messages.countByRole(conversation.id, "user") === 0;
        if (isFirst && conversation.title === DEFAULT_TITLE) {
          conversations.rename(conversation.id, titleFromMessage(input.text) || DEFAULT_TITLE, now);
        } else {
          conversations.touch(conversation.id, now);
        }
        let user = messages.append(
          { conversationId: conversation.id, role: "user", content: input.text, status: "complete" },
          now,
          input.editOf === undefined ? {} : { versionOf: input.editOf },
        );
        if (input.interaction && genui) {
          genui.saveInteraction(user.id, input.interaction);
          user = { ...user, interaction: input.interaction };
        }
        // "remember that …": stored with the message that asked for it.
        const remembered = memory?.rememberFromMessage(input.text, conversation.id, user.id) ?? null;
        const assistant = this.answers.append(conversation.id, plan, now);
        return {
          userMessage: user,
          assistantMessage: assistant,
          updated: conversations.get(conversation.id),
          remembered,
          previous,
        };
      });
      events.emit("conversations.changed", { conversation: updated, deletedId: null });
      if (remembered) memory?.emitChanged();
      const turn: TurnCommitted = {
        kind: "send",
        conversationId: conversation.id,
        userMessageId: userMessage.id,
        userText: input.text,
        answerId: assistantMessage.id,
        previous,
        selection,
        pinned: null,
        interaction: input.interaction !== undefined,
      };
      const context = this.start(gen, plan, turn);
      return { userMessage, assistantMessage: { ...assistantMessage, context } };
    });
  }

  /**
   * Answer the last user message again, optionally with other adapters. Only the last answer
   * can be regenerated; it stays as an earlier version (a sibling of the new answer, see
   * MessageStore) and leaves the transcript and the history until it is shown again. An explicit
   * pin teaches the router. Throws like send().
   */
  async regenerate(input: RegenerateInput): Promise<{ assistantMessage: Message }> {
    const { conversations, messages, events, storage } = this.deps;
    const conversation = this.checkCanStart(input.conversationId);
    const transcript = messages.list(conversation.id);
    const previous = transcript.at(-1);
    const question = transcript.at(-2);
    if (previous?.role !== "assistant" || question?.role !== "user") {
      throw new ApiError(
        "invalid_input",
        "Only the last answer can be regenerated, and this conversation does not end with one.",
      );
    }
    return this.reserved(conversation.id, async (gen) => {
      const selection = input.adapters ?? conversation.adapters;
      // "Answer again" keeps a UI answer a UI answer, unless other adapters were asked for.
      const format = input.format ?? (previous.format === "ui" && !input.adapters ? "ui" : undefined);
      const plan = await this.plan(conversation.id, selection, question.content, input.sampling, format);
      this.answers.saveUnsaved();
      const now = Date.now();
      const { assistantMessage, updated } = storage.atomically(() => {
        conversations.touch(conversation.id, now);
        // The old answer stays as an earlier version, with whatever followed it.
        const assistant = this.answers.append(conversation.id, plan, now, { versionOf: previous.id });
        return { assistantMessage: assistant, updated: conversations.get(conversation.id) };
      });
      events.emit("conversations.changed", { conversation: updated, deletedId: null });
      // "Answer again with Coding": the user says which adapter this text should have had.
      const pinned =
        input.adapters && typeof input.adapters === "object" && "pinned" in input.adapters
          ? input.adapters.pinned
          : null;
      const context = this.start(gen, plan, {
        kind: "regenerate",
        conversationId: conversation.id,
        userMessageId: question.id,
        userText: question.content,
        answerId: assistantMessage.id,
        previous,
        selection,
        pinned,
        interaction: false,
      });
      return { assistantMessage: { ...assistantMessage, context } };
    });
  }

  /**
   * Show the branch through message `messageId` (one of its versions); returns the transcript
   * as it is now. Throws not_found, or busy while the conversation is generating (the answer
   * being written is on the shown branch).
   */
  showVersion(messageId: string): Message[] {
    const { messages } = this.deps;
    const message = messages.get(messageId);
    if (!message) throw new ApiError("not_found", "This message does not exist (it may have been deleted).");
    if (this.generations.has(message.conversationId)) {
      throw new ApiError(
        "busy",
        "An answer is still being generated in this conversation. Stop it or wait for it to finish.",
      );
    }
    messages.showVersion(messageId);
    return messages.list(message.conversationId);
  }

  /** The user's decision on a tool call waiting in a conversation (chat.decideTool). */
  decideTool(conversationId: string, stepId: string, decision: ToolDecision): ToolStep {
    if (!this.deps.agent) throw new ApiError("not_found", "No tool call is waiting for a decision.");
    return this.deps.agent.decide(conversationId, stepId, decision);
  }

  /** Stop the generation in a conversation; its partial answer is kept as "stopped". */
  stop(conversationId: string): boolean {
    return this.generations.stop(conversationId);
  }

  isGenerating(conversationId: string): boolean {
    return this.generations.has(conversationId);
  }

  /** Resolves when every generation running now has ended and been saved. */
  async settled(): Promise<void> {
    await this.generations.settled();
  }

  /** Abort every generation (answers end "interrupted") and wait until they are saved. */
  async close(): Promise<void> {
    // Calls waiting for the user end "stopped" with their answers.
    this.deps.agent?.close();
    await this.generations.close();
  }

  private checkCanStart(conversationId: string): Conversation {
    const conversation = this.checkStillOpen(conversationId);
    if (!this.deps.engine.loaded) throw new ApiError("no_model", NO_MODEL_MESSAGE);
    if (this.generations.has(conversation.id)) {
      throw new ApiError(
        "busy",
        "An answer is still being generated in this conversation. Stop it or wait for it to finish.",
      );
    }
    return conversation;
  }

  /** Core is not shutting down and the conversation exists (again after the async routing). */
  private checkStillOpen(conversationId: string): Conversation {
    if (this.generations.closed) throw new ApiError("aborted", "Macaron is shutting down.");
    const conversation = this.deps.conversations.get(conversationId);
    if (!conversation)
      throw new ApiError("not_found", "This conversation does not exist (it may have been deleted).");
    return conversation;
  }

  /**
   * Hold the conversation while the turn is decided and committed (a second turn is "busy", a
   * stop counts); give it back if that fails.
   */
  private async reserved<T>(conversationId: string, body: (gen: Generation) => Promise<T>): Promise<T> {
    const gen = this.generations.reserve(conversationId);
    try {
      return await body(gen);
    } catch (err) {
      this.generations.release(conversationId, gen);
      throw err;
    }
  }

  /** The sampling, adapters, memories and format of a turn; the world may change meanwhile. */
  private async plan(
    conversationId: string,
    selection: AdapterSelection,
    text: string,
    sampling: SamplingSettings | undefined,
    requested: AnswerFormat | undefined,
  ): Promise<TurnPlan> {
    // The conversation's settings, read on every turn: a change applies from the next turn on.
    const own = this.settings.get(conversationId);
    const turnSampling = this.planner.sampling(sampling, own.sampling);
    const [resolved, memories] = await Promise.all([
      this.planner.route(selection, text),
      this.planner.retrieve(text),
    ]);
    this.checkStillOpen(conversationId);
    const format = this.planner.formatFor(requested, resolved);
    const agent = this.planner.agentFor(format, resolved);
    return { sampling: turnSampling, systemPrompt: own.systemPrompt, resolved, memories, format, agent };
  }

  /**
   * Fit the prompt into the context (recorded on the answer), then begin generating the
   * committed answer in the background. Returns how the history was fitted.
   */
  private start(gen: Generation, plan: TurnPlan, turn: TurnCommitted): ContextInfo {
    const { conversationId, answerId: messageId } = turn;
    const fitted = this.prompts.fit(conversationId, plan);
    try {
      this.deps.messages.saveContext(messageId, fitted.context);
    } catch (err) {
      // The answer is committed: it must still end. A full disk ends it "interrupted" at its first write.
      if (!isDiskFull(err)) throw err;
      (this.deps.log ?? console.error)("saving how the prompt was fitted failed", err);
    }
    const options = this.prompts.options(conversationId, plan);
    const ui = this.prompts.uiFor(plan);
    gen.done = this.generate(gen, turn, fitted.turns, options, ui, plan);
    this.answers.backfillModelHash(messageId);
    notifyAll(this.observers, "committed", turn, this.log);
    return fitted.context;
  }

  private async generate(
    gen: Generation,
    turn: TurnCommitted,
    history: ChatTurn[],
    options: GenerateOptions,
    ui: GenuiTurns | undefined,
    plan: TurnPlan,
  ): Promise<void> {
    const { conversationId, answerId: messageId } = turn;
    const answer = await this.streamer.stream(gen, conversationId, messageId, history, options, plan.agent);
    const message = this.answers.finish(messageId, answer, ui);
    // Free the conversation before chat.done, so a listener may send the next turn at once.
    this.generations.end(conversationId);
    if (!message) return;
    this.deps.events.emit("chat.done", { conversationId, message });
    // After chat.done, never before it.
    notifyAll(
      this.observers,
      "answered",
      { ...turn, message, prompt: history, adapters: options.adapters, kvPolicy: options.kvPolicy },
      this.log,
    );
  }
}

/** Where the user message `id` is in the transcript; invalid_input unless it is shown there. */
function editedIndex(transcript: readonly Message[], id: string): number {
  const index = transcript.findIndex((m) => m.id === id);
  if (index < 0 || transcript[index]!.role !== "user") {
    throw new ApiError("invalid_input", "Only a message of yours that is shown can be edited.");
  }
  return index;
}
