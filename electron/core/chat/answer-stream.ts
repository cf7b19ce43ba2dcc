/**
 * Streaming one answer from the engine: each piece as a `chat.delta` event, the partial text
 * saved at most once per interval (so a killed process leaves it for the next start), Stop
 * honoured at once, and how the answer ended (complete, stopped, interrupted or error). A write
 * that fails because the disk is full ends the answer "interrupted" at once: generating more
 * of what cannot be saved would only make the user wait for text that is lost.
 */
import { ApiError } from "../../api";
import type { MessageFinal, MessageStore } from "../conversations/message-store";
import { DISK_FULL_ANSWER_MESSAGE, isDiskFull } from "../db/disk-full";
import type { ChatTurn, EngineClient, GenerateOptions, GenerateResult } from "../engine/types";
import type { EventBus } from "../events/event-bus";
import type { AgentPlan, AgentTurns } from "../tools/agent-loop";
import type { Generation } from "./generations";
import { statsFromResult } from "./stats";
import type { LoadedModelTokens } from "./token-estimate";
import type { TurnTimings } from "./turn-store";

/** How a streamed answer ended, to be saved. */
export interface StreamedAnswer {
  final: MessageFinal;
  /** Null when the generation failed or was stopped before producing a result. */
  timings: TurnTimings | null;
}

export interface AnswerStreamDeps {
  engine: EngineClient;
  events: EventBus;
  messages: MessageStore;
  /** Runs Agent turns (rounds of generation and tool calls). */
  agent?: AgentTurns;
  tokens: LoadedModelTokens;
  /** How often the partial text is saved (ms). */
  flushIntervalMs: number;
  log: (message: string, err: unknown) => void;
}

export class AnswerStreamer {
  constructor(private readonly deps: AnswerStreamDeps) {}

  /**
   * Generate the answer `messageId` (with tools when `agent` is given); engine failures end up
   * in the result, not thrown.
   */
  async stream(
    gen: Generation,
    conversationId: string,
    messageId: string,
    history: ChatTurn[],
    options: GenerateOptions,
    agent: AgentPlan | null = null,
  ): Promise<StreamedAnswer> {
    const { messages, engine, events, log } = this.deps;
    const signal = gen.controller.signal;
    let content = "";
    let saved = "";
    let flushTimer: NodeJS.Timeout | null = null;
    let diskFull = false;
    const flush = (): void => {
      flushTimer = null;
      if (content === saved) return;
      try {
        messages.saveContent(messageId, content);
        saved = content;
      } catch (err) {
        log("saving a partial answer failed", err);
        if (isDiskFull(err) && !signal.aborted) {
          diskFull = true;
          gen.controller.abort();
        }
      }
    };
    const onToken = (text: string): void => {
      // After Stop the UI must not grow any more, even if the engine sends a last piece.
      if (signal.aborted || text.length === 0) return;
      content += text;
      events.emit("chat.delta", { conversationId, messageId, delta: text });
      // Throttled: at most one write per interval, never one per token.
      flushTimer ??= setTimeout(flush, this.deps.flushIntervalMs);
    };

    // Let send() return (and its caller answer) before the first event of this answer.
    await new Promise<void>((resolve) => setImmediate(resolve));
    let final: MessageFinal;
    let timings: TurnTimings | null = null;
    try {
      if (signal.aborted) throw new ApiError("aborted", "Stopped before it started.");
      const result: GenerateResult =
        agent && this.deps.agent
          ? await this.deps.agent.run({
              plan: agent,
              conversationId,
              messageId,
              history,
              options,
              engine,
              onToken,
              signal,
            })
          : await engine.generate(history, options, onToken, signal);
      this.deps.tokens.learn(history, result);
      timings = {
        ...statsFromResult(result),
        promptTokensEvaluated: result.promptTokensEvaluated,
        stopReason: result.stopReason,
      };
      const aborted = signal.aborted || result.stopReason === "abort";
      final = diskFull
        ? cutOffByDiskFull(content)
        : {
            // After an abort keep what the user saw; otherwise the engine's text is authoritative.
            content: aborted ? content : result.text,
            status: aborted ? (gen.shutdown ? "interrupted" : "stopped") : "complete",
            error: null,
            stats: statsFromResult(result),
          };
    } catch (err) {
      if (diskFull || isDiskFull(err)) {
        // A tool step's write (Agent turns) can meet the full disk too.
        if (!diskFull) log("an answer's write failed: the disk is full", err);
        final = cutOffByDiskFull(content);
      } else if (signal.aborted) {
        final = { content, status: gen.shutdown ? "interrupted" : "stopped", error: null, stats: null };
      } else {
        if (!(err instanceof ApiError)) log("generation failed", err);
        const message =
          err instanceof ApiError
            ? err.message
            : `Generation failed: ${err instanceof Error ? err.message : String(err)}`;
        final = { content, status: "error", error: message, stats: null };
      }
    } finally {
      if (flushTimer) clearTimeout(flushTimer);
    }
    return { final, timings };
  }
}

/** What the user saw, ended "interrupted" with a sentence saying the disk is full. */
function cutOffByDiskFull(content: string): MessageFinal {
  return { content, status: "interrupted", error: DISK_FULL_ANSWER_MESSAGE, stats: null };
}
