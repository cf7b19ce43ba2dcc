import type { Database } from "better-sqlite3";
import {
  ApiError,
  type AdapterSelection,
  type AppSettings,
  type Conversation,
  type Memory,
  type Message,
  type SamplingSettings,
} from "../../api";
import type { AdapterRouting, ResolvedAdapters } from "../adapters/adapter-routing";
import { type ConversationStore, DEFAULT_TITLE } from "../conversations/conversation-store";
import type { ContextInfo, MessageFinal, MessageStore } from "../conversations/message-store";
import type { EngineClient, ChatTurn, GenerateOptions, GenerateResult, KvPolicy } from "../engine/types";
import type { EventBus } from "../events/event-bus";
import type { MessageInteraction } from "../../api/genui";
import type { AnswerFormat, GenuiTurns } from "../genui/genui-turns";
import type { MemoryService } from "../memory/memory-service";
import { buildPrompt } from "./prompt";
import { statsFromResult } from "./stats";
import { titleFromMessage } from "./title";
import { TokenEstimator, utf8Length } from "./token-estimate";
import { TurnStore, type TurnTimings } from "./turn-store";

export const DEFAULT_SYSTEM_PROMPT = "You are Macaron, a helpful local assistant.";
export const NO_MODEL_MESSAGE = "No model is loaded. Open a .gguf model or try the demo model.";
/** Harness version when none is given (unit tests); core passes the real one (harness.ts). */
export const UNVERSIONED_HARNESS = "0.0.0+unversioned";

/** The model file's sha256 for the turn record: known now, or later (hashing in the background). */
export interface ModelHashes {
  knownSha256(path: string): string | null;
  sha256(path: string): Promise<string>;
}

export interface TurnPipelineDeps {
  db: Database;
  conversations: ConversationStore;
  messages: MessageStore;
  engine: EngineClient;
  events: EventBus;
  /** Replaces DEFAULT_SYSTEM_PROMPT; "" sends no system turn. */
  systemPrompt?: string;
  defaultTemperature?: number;
  defaultMaxTokens?: number;
  /** How often a streaming answer's partial text is saved (ms). */
  flushIntervalMs?: number;
  /** Chooses the adapters of each turn; without it every turn uses the base model alone. */
  routing?: AdapterRouting;
  /** Stamped on every turn record (see harness.ts). */
  harnessVersion?: string;
  /** The KV policy passed to the engine (from the settings). */
  kvPolicy?: () => KvPolicy;
  modelHashes?: ModelHashes;
  /** Long-term memories: retrieved into prompts, proposed after answers. */
  memory?: MemoryService;
  /** What to do when a conversation outgrows the context (default sliding-window). */
  contextStrategy?: () => AppSettings["contextStrategy"];
  log?: (message: string, err: unknown) => void;
  /** GenUI: UI-mode turns (format, prompt, grammar, validated document). Without it, text only. */
  genui?: GenuiTurns;
}

/** Context size assumed when the engine reports none (the engine's default). */
const FALLBACK_CONTEXT_SIZE = 4096;

/** The user turn an answer replies to, for facts proposed after it. */
interface AnswerSource {
  userMessageId: string;
  userText: string;
}

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
}

export interface RegenerateInput {
  conversationId: string;
  adapters?: AdapterSelection;
  sampling?: SamplingSettings;
}

export interface SendResult {
  userMessage: Message;
  assistantMessage: Message;
}

interface Generation {
  readonly controller: AbortController;
  /** Set when core shuts down: the answer ends "interrupted", not "stopped". */
  shutdown: boolean;
  done: Promise<void>;
}

/**
 * One chat turn: commit the user message, then stream the assistant's answer from the engine
 * into `chat.delta` events and the database. One generation per conversation at a time.
 */
export class TurnPipeline {
  private readonly running = new Map<string, Generation>();
  private closed = false;
  private readonly flushIntervalMs: number;
  private readonly log: (message: string, err: unknown) => void;
  private readonly turns: TurnStore;
  private readonly tokens = new TokenEstimator();

  constructor(private readonly deps: TurnPipelineDeps) {
    this.turns = new TurnStore(deps.db);
    this.flushIntervalMs = deps.flushIntervalMs ?? 500;
    this.log = deps.log ?? console.error;
  }

  /**
   * Decide the adapters, commit the user message, an empty "streaming" assistant message and
   * its turn record, return both messages, and generate in the background. Throws ApiError
   * not_found / no_model / busy / invalid_input (a bad adapter choice) before anything is written.
   */
  async send(input: SendInput): Promise<SendResult> {
    const { conversations, messages, events, db } = this.deps;
    const conversation = this.checkCanStart(input.conversationId);
    // Hold the conversation while the router decides: a second send is "busy", a stop counts.
    const gen = this.reserve(conversation.id);
    try {
      const sampling = this.sampling(input.sampling);
      const [resolved, memories] = await Promise.all([
        this.route(input.adapters ?? conversation.adapters, input.text),
        this.retrieve(input.text),
      ]);
      this.checkStillOpen(conversation.id);
      const format = this.formatFor(input.format, resolved);
      const now = Date.now();
      const { userMessage, assistantMessage, updated, remembered } = db.transaction(() => {
        const isFirst = messages.countByRole(conversation.id, "user") === 0;
        if (isFirst && conversation.title === DEFAULT_TITLE) {
          conversations.rename(conversation.id, titleFromMessage(input.text) || DEFAULT_TITLE, now);
        } else {
          conversations.touch(conversation.id, now);
        }
        let user = messages.append(
          { conversationId: conversation.id, role: "user", content: input.text, status: "complete" },
          now,
        );
        if (input.interaction && this.deps.genui) {
          this.deps.genui.saveInteraction(user.id, input.interaction);
          user = { ...user, interaction: input.interaction };
        }
        // "remember that …": stored with the message that asked for it.
        const remembered =
          this.deps.memory?.rememberFromMessage(input.text, conversation.id, user.id) ?? null;
        const assistant = this.appendAnswer(conversation.id, resolved, sampling, now, memories, format);
        return {
          userMessage: user,
          assistantMessage: assistant,
          updated: conversations.get(conversation.id),
          remembered,
        };
      })();
      events.emit("conversations.changed", { conversation: updated, deletedId: null });
      if (remembered) this.deps.memory?.emitChanged();
      const context = this.start(
        gen,
        conversation.id,
        assistantMessage.id,
        resolved,
        sampling,
        memories,
        {
          userMessageId: userMessage.id,
          userText: input.text,
        },
        format,
      );
      return { userMessage, assistantMessage: { ...assistantMessage, context } };
    } catch (err) {
      this.release(conversation.id, gen);
      throw err;
    }
  }

  /**
   * Answer the last user message again, optionally with other adapters. Only the last answer
   * can be regenerated; it stays in the database (replaced_by = the new answer) but leaves the
   * transcript and the history. An explicit pin teaches the router. Throws like send().
   */
  async regenerate(input: RegenerateInput): Promise<{ assistantMessage: Message }> {
    const { conversations, messages, events, db } = this.deps;
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
    const gen = this.reserve(conversation.id);
    try {
      const sampling = this.sampling(input.sampling);
      const [resolved, memories] = await Promise.all([
        this.route(input.adapters ?? conversation.adapters, question.content),
        this.retrieve(question.content),
      ]);
      this.checkStillOpen(conversation.id);
      // "Answer again" keeps a UI answer a UI answer, unless other adapters were asked for.
      const format = this.formatFor(previous.format === "ui" && !input.adapters ? "ui" : undefined, resolved);
      const now = Date.now();
      const { assistantMessage, updated } = db.transaction(() => {
        conversations.touch(conversation.id, now);
        const assistant = this.appendAnswer(conversation.id, resolved, sampling, now, memories, format);
        messages.markReplaced(previous.id, assistant.id);
        return { assistantMessage: assistant, updated: conversations.get(conversation.id) };
      })();
      if (input.adapters && typeof input.adapters === "object" && "pinned" in input.adapters) {
        // "Answer again with Coding": the user says which adapter this text should have had.
        this.deps.routing?.recordOverride(question.content, input.adapters.pinned);
      }
      events.emit("conversations.changed", { conversation: updated, deletedId: null });
      // No facts are proposed again: the first answer to this message did that.
      const context = this.start(
        gen,
        conversation.id,
        assistantMessage.id,
        resolved,
        sampling,
        memories,
        null,
        format,
      );
      return { assistantMessage: { ...assistantMessage, context } };
    } catch (err) {
      this.release(conversation.id, gen);
      throw err;
    }
  }

  /** Stop the generation in a conversation; its partial answer is kept as "stopped". */
  stop(conversationId: string): boolean {
    const gen = this.running.get(conversationId);
    if (!gen || gen.controller.signal.aborted) return false;
    gen.controller.abort();
    return true;
  }

  isGenerating(conversationId: string): boolean {
    return this.running.has(conversationId);
  }

  /** Resolves when every generation running now has ended and been saved. */
  async settled(): Promise<void> {
    await Promise.all([...this.running.values()].map((g) => g.done));
  }

  /** Abort every generation (answers end "interrupted") and wait until they are saved. */
  async close(): Promise<void> {
    this.closed = true;
    for (const gen of this.running.values()) {
      gen.shutdown = true;
      gen.controller.abort();
    }
    await this.settled();
  }

  private checkCanStart(conversationId: string): Conversation {
    if (this.closed) throw new ApiError("aborted", "Macaron is shutting down.");
    const conversation = this.deps.conversations.get(conversationId);
    if (!conversation)
      throw new ApiError("not_found", "This conversation does not exist (it may have been deleted).");
    if (!this.deps.engine.loaded) throw new ApiError("no_model", NO_MODEL_MESSAGE);
    if (this.running.has(conversation.id)) {
      throw new ApiError(
        "busy",
        "An answer is still being generated in this conversation. Stop it or wait for it to finish.",
      );
    }
    return conversation;
  }

  /** After the (async) routing decision: the world may have changed meanwhile. */
  private checkStillOpen(conversationId: string): void {
    if (this.closed) throw new ApiError("aborted", "Macaron is shutting down.");
    if (!this.deps.conversations.get(conversationId))
      throw new ApiError("not_found", "This conversation does not exist (it may have been deleted).");
  }

  private reserve(conversationId: string): Generation {
    const gen: Generation = { controller: new AbortController(), shutdown: false, done: Promise.resolve() };
    this.running.set(conversationId, gen);
    return gen;
  }

  private release(conversationId: string, gen: Generation): void {
    if (this.running.get(conversationId) === gen) this.running.delete(conversationId);
  }

  private sampling(s: SamplingSettings | undefined): { temperature: number; maxTokens: number } {
    return {
      temperature: s?.temperature ?? this.deps.defaultTemperature ?? 0.7,
      maxTokens: s?.maxTokens ?? this.deps.defaultMaxTokens ?? 1024,
    };
  }

  private route(selection: AdapterSelection, text: string): Promise<ResolvedAdapters> {
    const routing = this.deps.routing;
    if (!routing) {
      return Promise.resolve({
        routing: { mode: "base", adapters: [], confidence: 1, reason: "no adapters installed", latencyMs: 0 },
        adapters: [],
        scores: {},
        skipped: [],
      });
    }
    return routing.resolve(selection, text);
  }

  /** Text unless GenUI is wired and the turn asks for (or is routed to) UI. */
  private formatFor(requested: AnswerFormat | undefined, resolved: ResolvedAdapters): AnswerFormat {
    return this.deps.genui?.formatFor(requested, resolved.routing) ?? "text";
  }

  /** The active memories for a prompt (none without memory, or when it is off). Never throws. */
  private async retrieve(text: string): Promise<Memory[]> {
    const memory = this.deps.memory;
    if (!memory) return [];
    const contextSize = this.deps.engine.loaded?.contextSize ?? FALLBACK_CONTEXT_SIZE;
    try {
      return await memory.retrieve(text, contextSize, (t) => this.estimate(t));
    } catch (err) {
      this.log("memory retrieval failed; answering without memories", err);
      return [];
    }
  }

  private estimate(text: string): number {
    return this.tokens.estimate(text, this.deps.engine.loaded?.path ?? null);
  }

  /** The streaming assistant message and its turn record; inside the caller's transaction. */
  private appendAnswer(
    conversationId: string,
    resolved: ResolvedAdapters,
    sampling: { temperature: number; maxTokens: number },
    now: number,
    memories: readonly Memory[],
    format: AnswerFormat = "text",
  ): Message {
    const { messages } = this.deps;
    const assistant = messages.append(
      { conversationId, role: "assistant", content: "", status: "streaming" },
      now,
    );
    const modelPath = this.deps.engine.loaded?.path ?? null;
    const { routing } = resolved;
    this.turns.start(
      {
        messageId: assistant.id,
        modelSha256: modelPath ? (this.deps.modelHashes?.knownSha256(modelPath) ?? null) : null,
        harnessVersion: this.deps.harnessVersion ?? UNVERSIONED_HARNESS,
        adapters: routing.adapters,
        router: {
          mode: routing.mode,
          confidence: routing.confidence,
          reason: routing.reason,
          latencyMs: routing.latencyMs,
          scores: resolved.scores,
          skipped: resolved.skipped,
        },
        sampling,
        kvPolicy: this.kvPolicy(),
      },
      now,
    );
    this.deps.routing?.countUsage(routing.adapters.map((a) => a.id));
    this.deps.memory?.linkToMessage(assistant.id, memories);
    const ui = format === "ui" && this.deps.genui ? { format, ui: null } : {};
    if (ui.format) this.deps.genui?.markAnswer(assistant.id);
    return { ...assistant, routing, memoriesUsed: memories.map((m) => ({ id: m.id, text: m.text })), ...ui };
  }

  private kvPolicy(): KvPolicy {
    return this.deps.kvPolicy?.() ?? "reevaluate";
  }

  /**
   * Fit the prompt into the context (recorded on the answer), then begin generating the
   * committed answer in the background. Returns how the history was fitted.
   */
  private start(
    gen: Generation,
    conversationId: string,
    messageId: string,
    resolved: ResolvedAdapters,
    sampling: { temperature: number; maxTokens: number },
    memories: readonly Memory[],
    source: AnswerSource | null,
    format: AnswerFormat = "text",
  ): ContextInfo {
    const { messages, memory, genui } = this.deps;
    const systemPrompt = this.deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
    const ui = format === "ui" ? genui : undefined;
    const fitted = buildPrompt({
      transcript: messages.list(conversationId),
      systemPrompt: ui ? ui.systemPrompt(systemPrompt) : systemPrompt,
      memoryBlock: memory && memories.length > 0 ? memory.block(memories) : null,
      contextSize: this.deps.engine.loaded?.contextSize ?? FALLBACK_CONTEXT_SIZE,
      answerTokens: sampling.maxTokens,
      strategy: this.deps.contextStrategy?.() ?? "sliding-window",
      estimate: (text) => this.estimate(text),
    });
    messages.saveContext(messageId, fitted.context);
    // The conversation id keys the engine's KV cache: a reopened conversation skips its history.
    const options: GenerateOptions = { ...sampling, sessionKey: conversationId };
    if (resolved.adapters.length > 0) options.adapters = resolved.adapters;
    if (this.deps.routing) options.kvPolicy = this.kvPolicy();
    // UI mode: the grammar keeps the answer valid JSON of the catalog's shape (not its meaning).
    if (ui) options.jsonSchema = ui.jsonSchema;
    gen.done = this.generate(gen, conversationId, messageId, fitted.turns, options, source, ui);
    this.backfillModelHash(messageId);
    return fitted.context;
  }

  /** A turn that ran before the model's hash was known gets it when hashing ends. */
  private backfillModelHash(messageId: string): void {
    const path = this.deps.engine.loaded?.path;
    const hashes = this.deps.modelHashes;
    if (!path || !hashes || hashes.knownSha256(path)) return;
    hashes.sha256(path).then(
      (sha) => {
        try {
          this.turns.setModelSha256(messageId, sha);
        } catch {
          // Closed database (shutdown): the turn keeps a null hash.
        }
      },
      (err: unknown) => this.log("could not hash the model file", err),
    );
  }

  private async generate(
    gen: Generation,
    conversationId: string,
    messageId: string,
    history: ChatTurn[],
    options: GenerateOptions,
    source: AnswerSource | null,
    ui?: GenuiTurns,
  ): Promise<void> {
    const { messages, engine, events } = this.deps;
    const signal = gen.controller.signal;
    let content = "";
    let saved = "";
    let flushTimer: NodeJS.Timeout | null = null;
    const flush = (): void => {
      flushTimer = null;
      if (content === saved) return;
      try {
        messages.saveContent(messageId, content);
        saved = content;
      } catch (err) {
        this.log("saving a partial answer failed", err);
      }
    };
    const onToken = (text: string): void => {
      // After Stop the UI must not grow any more, even if the engine sends a last piece.
      if (signal.aborted || text.length === 0) return;
      content += text;
      events.emit("chat.delta", { conversationId, messageId, delta: text });
      // Throttled: at most one write per interval, never one per token.
      flushTimer ??= setTimeout(flush, this.flushIntervalMs);
    };

    // Let send() return (and its caller answer) before the first event of this answer.
    await new Promise<void>((resolve) => setImmediate(resolve));
    let final: MessageFinal;
    let timings: TurnTimings | null = null;
    try {
      if (signal.aborted) throw new ApiError("aborted", "Stopped before it started.");
      const result: GenerateResult = await engine.generate(history, options, onToken, signal);
      this.learnTokenRatio(history, result);
      timings = {
        ...statsFromResult(result),
        promptTokensEvaluated: result.promptTokensEvaluated,
        stopReason: result.stopReason,
      };
      const aborted = signal.aborted || result.stopReason === "abort";
      final = {
        // After an abort keep what the user saw; otherwise the engine's text is authoritative.
        content: aborted ? content : result.text,
        status: aborted ? (gen.shutdown ? "interrupted" : "stopped") : "complete",
        error: null,
        stats: statsFromResult(result),
      };
    } catch (err) {
      if (signal.aborted) {
        final = { content, status: gen.shutdown ? "interrupted" : "stopped", error: null, stats: null };
      } else {
        if (!(err instanceof ApiError)) this.log("generation failed", err);
        const message =
          err instanceof ApiError
            ? err.message
            : `Generation failed: ${err instanceof Error ? err.message : String(err)}`;
        final = { content, status: "error", error: message, stats: null };
      }
    } finally {
      if (flushTimer) clearTimeout(flushTimer);
    }

    let message: Message | null = null;
    try {
      // false when the conversation was deleted meanwhile: then there is nothing to report.
      const finished = this.deps.db.transaction(() => {
        if (ui && final.status !== "error") {
          // The streamed JSON becomes a validated document; content keeps a text rendition.
          const cutOff = final.status !== "complete" || timings?.stopReason === "maxTokens";
          final = { ...final, content: ui.finishAnswer(messageId, final.content, cutOff).content };
        }
        if (!messages.finish(messageId, final)) return false;
        this.turns.finish(messageId, timings);
        return true;
      })();
      if (finished) message = messages.get(messageId);
    } catch (err) {
      this.log("saving the final answer failed", err);
    }
    // Free the conversation before chat.done, so a listener may send the next turn at once.
    this.running.delete(conversationId);
    if (message) events.emit("chat.done", { conversationId, message });
    if (message?.status === "complete" && source) {
      // After chat.done, never before it; the engine queue runs it when nothing else waits.
      this.deps.memory?.proposeAfterAnswer({
        conversationId,
        userMessageId: source.userMessageId,
        userText: source.userText,
        prompt: history,
        answer: message.content,
        adapters: options.adapters,
        kvPolicy: options.kvPolicy,
      });
    }
  }

  /** Calibrate token estimates on what the prompt and answer really took in the context. */
  private learnTokenRatio(history: readonly ChatTurn[], result: GenerateResult): void {
    const path = this.deps.engine.loaded?.path;
    // A full context may have been shifted by the engine: its count says nothing about the text.
    if (!path || result.stopReason === "abort" || result.contextTokens >= result.contextSize) return;
    const bytes = history.reduce((sum, t) => sum + utf8Length(t.text), utf8Length(result.text));
    this.tokens.observe(path, bytes, result.contextTokens);
  }
}
