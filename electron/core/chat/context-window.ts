import type { AppSettings } from "../../api";
import type { ContextInfo } from "../conversations/message-store";
import type { ChatTurn } from "../engine/types";

/** Chat-template tokens around each message (role markers, separators), a generous guess. */
export const TOKENS_PER_MESSAGE = 8;
/** Kept free for estimation errors: token counts are approximate (see TokenEstimator). */
export const SAFETY_MARGIN = 0.1;
/** Share of the room for history that a summary of the dropped messages may take. */
const SUMMARY_SHARE = 0.15;
const SUMMARY_LINE_CHARS = 120;
export const SUMMARY_HEADER = "Earlier in this conversation (older messages left out), the user said:";

export interface FitInput {
  /** The system text (prompt, memories) or null; always kept. */
  system: string | null;
  /** The messages after it, oldest first; the last one is the turn being answered. */
  history: readonly ChatTurn[];
  contextSize: number;
  /** Tokens the answer may take (maxTokens); at most half the context is reserved for it. */
  answerTokens: number;
  strategy: AppSettings["contextStrategy"];
  estimate: (text: string) => number;
  /** Tokens a turn takes besides its text (an earlier answer's replayed tool calls). */
  extraTokens?: (turn: ChatTurn) => number;
  /**
   * Tokens the engine adds to the prompt besides the turns: the documentation of the tools an
   * agent turn offers, which the chat template lays out in the system turn. Always kept.
   */
  fixedTokens?: number;
}

export interface FittedHistory {
  /** What the engine gets: the system turn (if any) then the kept messages. */
  turns: ChatTurn[];
  context: ContextInfo;
}

/**
 * Tokens the prompt may take: the context minus the answer's room (at most half the context)
 * and the safety margin. What fitHistory fits into, and what one new message must fit in.
 */
export function promptRoom(contextSize: number, answerTokens: number): number {
  const answer = Math.min(answerTokens, Math.floor(contextSize / 2));
  return contextSize - answer - Math.ceil(contextSize * SAFETY_MARGIN);
}

/**
 * Fit a conversation into the context window minus the answer's room and a safety margin.
 * When it does not fit, whole messages are dropped from the oldest on, the system text and
 * the latest turn are always kept, and the window never starts with an assistant message.
 * "summary" then adds an extractive summary of what was dropped: the first line of each
 * dropped user message (capped), newest kept when even that is too long. Extractive on purpose:
 * it costs no generation, cannot hallucinate, and works the same with every model.
 */
export function fitHistory(input: FitInput): FittedHistory {
  const { history, contextSize, estimate } = input;
  const cost = (text: string): number => estimate(text) + TOKENS_PER_MESSAGE;
  const room = promptRoom(contextSize, input.answerTokens);
  const systemCost = (input.system ? cost(input.system) : 0) + (input.fixedTokens ?? 0);
  const costs = history.map((t) => cost(t.text) + (input.extraTokens?.(t) ?? 0));
  const total = costs.reduce((a, b) => a + b, systemCost);

  const withSystem = (system: string | null, turns: readonly ChatTurn[]): ChatTurn[] =>
    system ? [{ role: "system", text: system }, ...turns] : [...turns];

  if (total <= room) {
    return {
      turns: withSystem(input.system, history),
      context: { strategy: "full", includedMessages: history.length, droppedMessages: 0 },
    };
  }

  const forHistory = room - systemCost;
  const summaryRoom = input.strategy === "summary" ? Math.floor(Math.max(0, forHistory) * SUMMARY_SHARE) : 0;
  let used = 0;
  let first = history.length;
  // Newest first; the latest turn is kept even when it alone is too long.
  while (first > 0) {
    const next = costs[first - 1]!;
    if (first < history.length && used + next > forHistory - summaryRoom) break;
    used += next;
    first--;
  }
  while (first < history.length - 1 && history[first]!.role === "assistant") {
    used -= costs[first]!;
    first++;
  }
  const kept = history.slice(first);
  const dropped = history.slice(0, first);

  let system = input.system;
  let strategy: ContextInfo["strategy"] = "sliding-window";
  if (input.strategy === "summary" && dropped.length > 0) {
    const summary = summarize(dropped, forHistory - used, estimate);
    if (summary) {
      system = system ? `${system}\n\n${summary}` : summary;
      strategy = "summary";
    }
  }
  return {
    turns: withSystem(system, kept),
    context: { strategy, includedMessages: kept.length, droppedMessages: dropped.length },
  };
}

/** The extractive summary within `budget` tokens, or null when not even one line fits. */
function summarize(
  dropped: readonly ChatTurn[],
  budget: number,
  estimate: (text: string) => number,
): string | null {
  const lines = dropped
    .filter((t) => t.role === "user")
    .map((t) => firstLine(t.text))
    .filter((line) => line.length > 0)
    .map((line) => `- ${line}`);
  // Newest lines are the most relevant: take them from the newest back while they fit.
  let used = estimate(SUMMARY_HEADER) + TOKENS_PER_MESSAGE;
  let start = lines.length;
  while (start > 0) {
    const next = estimate(lines[start - 1]!) + 1; // +1: the newline
    if (used + next > budget) break;
    used += next;
    start--;
  }
  if (start === lines.length) return null;
  return [SUMMARY_HEADER, ...lines.slice(start)].join("\n");
}

function firstLine(text: string): string {
  const line = (text.split("\n").find((l) => l.trim().length > 0) ?? "").replace(/\s+/g, " ").trim();
  return line.length > SUMMARY_LINE_CHARS ? `${line.slice(0, SUMMARY_LINE_CHARS - 1)}…` : line;
}
