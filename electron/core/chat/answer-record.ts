/**
 * The assistant answer in the database: committed empty and "streaming" together with its turn
 * record (model, harness, adapters, router decision, sampling and system prompt, KV policy), the model's hash
 * filled in once known, and finished with its outcome and timings. An answer whose end cannot
 * be saved because the disk is full still ends: "interrupted" in chat.done at once, and in the
 * database as soon as a write fits again (saveUnsaved, before the next turn).
 */
import type { Message } from "../../api";
import type { AppendPlace, MessageFinal } from "../conversations/message-store";
import { DISK_FULL_ANSWER_MESSAGE, isDiskFull } from "../db/disk-full";
import type { GenuiTurns } from "../genui/genui-turns";
import type { StreamedAnswer } from "./answer-stream";
import { kvPolicyOf, type TurnPipelineDeps, UNVERSIONED_HARNESS } from "./turn-deps";
import type { TurnPlan } from "./turn-plan";
import type { TurnStore } from "./turn-store";

export class AnswerRecords {
  private readonly turns: TurnStore;

  constructor(
    private readonly deps: TurnPipelineDeps,
    private readonly log: (message: string, err: unknown) => void,
  ) {
    this.turns = deps.storage.turns;
  }

  /** The streaming assistant message and its turn record; inside the caller's transaction. */
  append(conversationId: string, plan: TurnPlan, now: number, place: AppendPlace = {}): Message {
    const { messages } = this.deps;
    const { resolved, sampling, memories, format } = plan;
    const assistant = messages.append(
      { conversationId, role: "assistant", content: "", status: "streaming" },
      now,
      place,
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
        systemPrompt: plan.systemPrompt,
        kvPolicy: kvPolicyOf(this.deps),
      },
      now,
    );
    this.deps.routing?.countUsage(routing.adapters.map((a) => a.id));
    this.deps.memory?.linkToMessage(assistant.id, memories);
    const ui = format === "ui" && this.deps.genui ? { format, ui: null } : {};
    if (ui.format) this.deps.genui?.markAnswer(assistant.id);
    return {
      ...assistant,
      routing,
      // What it is generated with, shown on the answer's record (the turn row holds the same).
      generation: { sampling, systemPrompt: plan.systemPrompt },
      memoriesUsed: memories.map((m) => ({ id: m.id, text: m.text })),
      ...ui,
    };
  }

  /** A turn that ran before the model's hash was known gets it when hashing ends. */
  backfillModelHash(messageId: string): void {
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

  /**
   * Save how the answer ended (a UI answer becomes its validated document) with its timings.
   * Returns the saved message; null when the conversation was deleted meanwhile or saving
   * failed (logged).
   */
  finish(messageId: string, answer: StreamedAnswer, ui: GenuiTurns | undefined): Message | null {
    const { messages } = this.deps;
    const { timings } = answer;
    let final = answer.final;
    try {
      // false when the conversation was deleted meanwhile: then there is nothing to report.
      const finished = this.deps.storage.atomically(() => {
        if (ui && final.status !== "error") {
          // The streamed JSON becomes a validated document; content keeps a text rendition.
          const cutOff = final.status !== "complete" || timings?.stopReason === "maxTokens";
          final = { ...final, content: ui.finishAnswer(messageId, final.content, cutOff).content };
        }
        if (!messages.finish(messageId, final)) return false;
        this.turns.finish(messageId, timings);
        return true;
      });
      if (finished) return messages.get(messageId);
    } catch (err) {
      this.log("saving the final answer failed", err);
      if (isDiskFull(err)) return this.endOnFullDisk(messageId, final);
    }
    return null;
  }

  /**
   * Retry saving the answers that ended on a full disk (space may have come back). Never
   * throws: one that still does not fit stays for the next try.
   */
  saveUnsaved(): void {
    const { messages } = this.deps;
    for (const [messageId, final] of messages.unwrittenFinals()) {
      try {
        messages.finish(messageId, final);
      } catch (err) {
        if (isDiskFull(err)) return;
        this.log("saving an answer cut off by a full disk failed", err);
      }
    }
  }

  /**
   * The disk is full: the answer ends "interrupted" with the reason (its text as far as it
   * went), saved now if that smaller write fits, else kept by the message store (reads show it
   * ended) until saveUnsaved writes it. The message the UI gets either way.
   */
  private endOnFullDisk(messageId: string, final: MessageFinal): Message | null {
    const { messages } = this.deps;
    const ended: MessageFinal = { ...final, status: "interrupted", error: DISK_FULL_ANSWER_MESSAGE };
    try {
      if (!messages.finish(messageId, ended)) return null;
      return messages.get(messageId);
    } catch (err) {
      if (!isDiskFull(err)) {
        this.log("saving an answer cut off by a full disk failed", err);
        return null;
      }
    }
    // Reads (a reopened conversation) show it ended, not "streaming", until it is written.
    messages.keepUnwritten(messageId, ended);
    return messages.get(messageId);
  }
}
