import type { Database } from "better-sqlite3";
import { ApiError, type Message, type SamplingSettings } from "../../api";
import { type ConversationStore, DEFAULT_TITLE } from "../conversations/conversation-store";
import type { MessageFinal, MessageStore } from "../conversations/message-store";
import type { EngineClient, ChatTurn, GenerateOptions } from "../engine/types";
import type { EventBus } from "../events/event-bus";
import { statsFromResult } from "./stats";
import { titleFromMessage } from "./title";

export const DEFAULT_SYSTEM_PROMPT = "You are Macaron, a helpful local assistant.";
export const NO_MODEL_MESSAGE = "No model is loaded. Open a .gguf model or try the demo model.";

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
  log?: (message: string, err: unknown) => void;
}

export interface SendInput {
  conversationId: string;
  text: string;
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

  constructor(private readonly deps: TurnPipelineDeps) {
    this.flushIntervalMs = deps.flushIntervalMs ?? 500;
    this.log = deps.log ?? console.error;
  }

  /**
   * Commit the user message and an empty "streaming" assistant message, return both at once,
   * and generate in the background. Throws ApiError not_found / no_model / busy before
   * anything is written.
   */
  send(input: SendInput): SendResult {
    const { conversations, messages, engine, events, db } = this.deps;
    if (this.closed) throw new ApiError("aborted", "Macaron is shutting down.");
    const conversation = conversations.get(input.conversationId);
    if (!conversation)
      throw new ApiError("not_found", "This conversation does not exist (it may have been deleted).");
    if (!engine.loaded) throw new ApiError("no_model", NO_MODEL_MESSAGE);
    if (this.running.has(conversation.id)) {
      throw new ApiError(
        "busy",
        "An answer is still being generated in this conversation. Stop it or wait for it to finish.",
      );
    }

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
      const assistant = messages.append(
        { conversationId: conversation.id, role: "assistant", content: "", status: "streaming" },
        now,
      );
      return { userMessage: user, assistantMessage: assistant, updated: conversations.get(conversation.id) };
    })();
    events.emit("conversations.changed", { conversation: updated, deletedId: null });

    const history = this.history(conversation.id);
    const options: GenerateOptions = {
      temperature: input.sampling?.temperature ?? this.deps.defaultTemperature ?? 0.7,
      maxTokens: input.sampling?.maxTokens ?? this.deps.defaultMaxTokens ?? 1024,
    };
    const gen: Generation = { controller: new AbortController(), shutdown: false, done: Promise.resolve() };
    this.running.set(conversation.id, gen);
    gen.done = this.generate(gen, conversation.id, assistantMessage.id, history, options);
    return { userMessage, assistantMessage };
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
    try {
      if (signal.aborted) throw new ApiError("aborted", "Stopped before it started.");
      const result = await engine.generate(history, options, onToken, signal);
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
      if (messages.finish(messageId, final)) message = messages.get(messageId);
    } catch (err) {
      this.log("saving the final answer failed", err);
    }
    // Free the conversation before chat.done, so a listener may send the next turn at once.
    this.running.delete(conversationId);
    if (message) events.emit("chat.done", { conversationId, message });
  }
}
