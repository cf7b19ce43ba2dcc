import type { Database } from "better-sqlite3";
import { ApiError, type AdapterSelection, type Conversation, type Message, type SamplingSettings } from "../../api";
import type { AdapterRouting, ResolvedAdapters } from "../adapters/adapter-routing";
import { type ConversationStore, DEFAULT_TITLE } from "../conversations/conversation-store";
import type { MessageFinal, MessageStore } from "../conversations/message-store";
import type { EngineClient, ChatTurn, GenerateOptions, GenerateResult, KvPolicy } from "../engine/types";
import type { EventBus } from "../events/event-bus";
import { statsFromResult } from "./stats";
import { titleFromMessage } from "./title";
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
  log?: (message: string, err: unknown) => void;
}

export interface SendInput {
  conversationId: string;
  text: string;
  /** This turn's adapters; default: the conversation's choice, else "auto". */
  adapters?: AdapterSelection;
  sampling?: SamplingSettings;
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
      const resolved = await this.route(input.adapters ?? conversation.adapters, input.text);
      this.checkStillOpen(conversation.id);
      const now = Date.now();
      const { userMessage, assistantMessage, updated } = db.transaction(() => {
        const isFirst = messages.countByRole(conversation.id, "user") === 0;
        if (isFirst && conversation.title === DEFAULT_TITLE) {
          conversations.rename(conversation.id, titleFromMessage(input.text) || DEFAULT_TITLE, now);
        } else {
          conversations.touch(conversation.id, now);
        }
        const user = messages.append(
          { conversationId: conversation.id, role: "user", content: input.text, status: "complete" },
          now,
        );
        const assistant = this.appendAnswer(conversation.id, resolved, sampling, now);
        return { userMessage: user, assistantMessage: assistant, updated: conversations.get(conversation.id) };
      })();
      events.emit("conversations.changed", { conversation: updated, deletedId: null });
      this.start(gen, conversation.id, assistantMessage.id, resolved, sampling);
      return { userMessage, assistantMessage };
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
      const resolved = await this.route(input.adapters ?? conversation.adapters, question.content);
      this.checkStillOpen(conversation.id);
      const now = Date.now();
      const { assistantMessage, updated } = db.transaction(() => {
        conversations.touch(conversation.id, now);
        const assistant = this.appendAnswer(conversation.id, resolved, sampling, now);
        messages.markReplaced(previous.id, assistant.id);
        return { assistantMessage: assistant, updated: conversations.get(conversation.id) };
      })();
      if (input.adapters && typeof input.adapters === "object" && "pinned" in input.adapters) {
        // "Answer again with Coding": the user says which adapter this text should have had.
        this.deps.routing?.recordOverride(question.content, input.adapters.pinned);
      }
      events.emit("conversations.changed", { conversation: updated, deletedId: null });
      this.start(gen, conversation.id, assistantMessage.id, resolved, sampling);
      return { assistantMessage };
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

  /** The streaming assistant message and its turn record; inside the caller's transaction. */
  private appendAnswer(
    conversationId: string,
    resolved: ResolvedAdapters,
    sampling: { temperature: number; maxTokens: number },
    now: number,
  ): Message {
    const { messages } = this.deps;
    const assistant = messages.append({ conversationId, role: "assistant", content: "", status: "streaming" }, now);
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
    return { ...assistant, routing };
  }

  private kvPolicy(): KvPolicy {
    return this.deps.kvPolicy?.() ?? "reevaluate";
  }

  /** Begin generating the committed answer in the background. */
  private start(
    gen: Generation,
    conversationId: string,
    messageId: string,
    resolved: ResolvedAdapters,
    sampling: { temperature: number; maxTokens: number },
  ): void {
    const history = this.history(conversationId);
    const options: GenerateOptions = { ...sampling };
    if (resolved.adapters.length > 0) options.adapters = resolved.adapters;
    if (this.deps.routing) options.kvPolicy = this.kvPolicy();
    gen.done = this.generate(gen, conversationId, messageId, history, options);
    this.backfillModelHash(messageId);
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

  /** The conversation so far as the engine sees it: finished messages in order, after the system prompt. */
  private history(conversationId: string): ChatTurn[] {
    const turns: ChatTurn[] = this.deps.messages
      .list(conversationId)
      .filter((m) => m.status === "complete" || m.status === "stopped")
      .map((m) => ({ role: m.role, text: m.content }));
    const system = this.deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
    if (system && turns[0]?.role !== "system") turns.unshift({ role: "system", text: system });
    return turns;
  }

  private async generate(
    gen: Generation,
    conversationId: string,
    messageId: string,
    history: ChatTurn[],
    options: GenerateOptions,
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
  }
}
