/**
 * Streaming one answer from the engine: each piece as a `chat.delta` event, the partial text
 * saved at most once per interval (so a killed process leaves it for the next start), Stop
 * honoured at once, and how the answer ended (complete, stopped, interrupted or error). A write
 * that fails because the disk is full ends the answer "interrupted" at once: generating more
 * of what cannot be saved would only make the user wait for text that is lost.
 */
import { batchWindowFromEnv, DeltaBatcher } from "../../../common/delta-batcher";
import { ApiError } from "../../api";
import type { ConversationRepository, MessageFinal } from "../conversations/conversation-repository";
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
  messages: ConversationRepository;
  /** Runs Agent turns (rounds of generation and tool calls). */
  agent?: AgentTurns;
  tokens: LoadedModelTokens;
  /** How often the partial text is saved (ms). */
  flushIntervalMs: number;
  /**
   * Pieces within this many ms of the last `chat.delta` are merged into the next one (the first
   * at once; default DELTA_BATCH_MS, or MACARON_TOKEN_BATCH_MS; 0 = one event per piece).
   */
  deltaBatchMs?: number;
  log: (message: string, err: unknown) => void;
}

/**
 * Each `chat.delta` crosses the event bus, then Electron IPC or the app's WebSocket (a
 * serialization and a message each) and makes the renderer re-render: one per few ms instead of
 * one per token costs less at every hop and is invisible to a reader.
 */
export const DELTA_BATCH_MS = 8;

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
    // `content` is what the user was shown: the text of the deltas emitted so far.
    const deltas = new DeltaBatcher(
      (text) => {
        content += text;
        events.emit("chat.delta", { conversationId, messageId, delta: text });
        // Throttled: at most one write per interval, never one per token.
        flushTimer ??= setTimeout(flush, this.deps.flushIntervalMs);
      },
      {
        windowMs:
          this.deps.deltaBatchMs ?? batchWindowFromEnv(process.env.MACARON_TOKEN_BATCH_MS, DELTA_BATCH_MS),
      },
    );
    // After Stop the UI must not grow any more: what is still merged is dropped, not shown.
    const stopDeltas = (): void => deltas.cancel();
    signal.addEventListener("abort", stopDeltas, { once: true });
    const onToken = (text: string): void => {
      // Even if the engine sends a last piece after Stop.
      if (signal.aborted) return;
      deltas.push(text);
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
              // Each round's text is shown whole before the round's tool steps are emitted.
              engine: {
                generate: (...args) => engine.generate(...args).finally(() => deltas.flush()),
              },
              onToken,
              signal,
            })
          : await engine.generate(history, options, onToken, signal);
      // The last deltas before chat.done (unless stopped: then cancelled, nothing more shown).
      deltas.flush();
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
      // What was generated before the failure is shown, as it would be without batching.
      deltas.flush();
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
      deltas.cancel();
      signal.removeEventListener("abort", stopDeltas);
      if (flushTimer) clearTimeout(flushTimer);
    }
    return { final, timings };
  }
}

/** What the user saw, ended "interrupted" with a sentence saying the disk is full. */
function cutOffByDiskFull(content: string): MessageFinal {
  return { content, status: "interrupted", error: DISK_FULL_ANSWER_MESSAGE, stats: null };
}
