import type { AppSettings, Message } from "../../api";
import type { ChatTurn, ToolCallRecord } from "../engine/types";
import { modelResultOf } from "../tools/tool-results";
import { fitHistory, type FittedHistory } from "./context-window";

/**
 * An earlier answer's tool results are replayed cut to this many characters: the model sees what
 * it called and what came back, without one long result crowding a small context.
 */
export const REPLAYED_RESULT_MAX_CHARS = 2000;

export interface PromptInput {
  /** The transcript (the answer being generated is not part of it). */
  transcript: readonly Message[];
  /** The app's system prompt; "" for none. A leading system message of the transcript wins. */
  systemPrompt: string;
  /** "Things you know about the user: …" or null. */
  memoryBlock: string | null;
  contextSize: number;
  answerTokens: number;
  strategy: AppSettings["contextStrategy"];
  estimate: (text: string) => number;
  /** The tools an agent turn offers (their documentation takes room in the prompt). */
  tools?: readonly unknown[];
  /** How the turn's leading adapter documents them (its manifest); default node-llama-cpp's. */
  toolFormat?: { documented: boolean | "compact" };
}

/**
 * Room for the documentation of an agent turn's tools, which the chat template lays out in the
 * system turn: none when the leading adapter learned its tools (`documented: false`), the JSON's
 * estimate for an adapter's compact lines (one short line per tool, shorter than their JSON),
 * else twice it for node-llama-cpp's documentation with its instructions (on the demo model 4
 * tools of 1,180 bytes of JSON took ~1,650 tokens). Left out, a long conversation routed to the
 * agent was refused as longer than the context instead of having its oldest messages left out.
 */
function toolDocsTokens(input: PromptInput): number {
  if (!input.tools || input.tools.length === 0) return 0;
  const documented = input.toolFormat?.documented ?? true;
  if (documented === false) return 0;
  const json = input.estimate(JSON.stringify(input.tools));
  return documented === "compact" ? json : 2 * json;
}

/**
 * The prompt of an answer: finished messages in order (complete or stopped: an errored or
 * interrupted answer is not something the model said), one system turn (the system prompt
 * and the memories), fitted into the context window (see fitHistory). An earlier answer that
 * called tools is replayed as its calls with their results, then its text (the text is stored as
 * one piece, so text written between calls comes after them); its calls count towards its size.
 */
export function buildPrompt(input: PromptInput): FittedHistory {
  const callsOf = new Map<ChatTurn, ToolCallRecord[]>();
  const turns: ChatTurn[] = input.transcript
    .filter((m) => m.status === "complete" || m.status === "stopped")
    .map((m) => {
      const turn: ChatTurn = { role: m.role, text: m.content };
      const calls = m.role === "assistant" ? replayedCalls(m) : [];
      if (calls.length > 0) callsOf.set(turn, calls);
      return turn;
    });
  let system: string | null = input.systemPrompt || null;
  if (turns[0]?.role === "system") system = turns.shift()!.text;
  // One system turn, not two: many chat templates accept a single one, at the start.
  if (input.memoryBlock) system = system ? `${system}\n\n${input.memoryBlock}` : input.memoryBlock;
  const fitted = fitHistory({
    system,
    history: turns,
    contextSize: input.contextSize,
    answerTokens: input.answerTokens,
    strategy: input.strategy,
    estimate: input.estimate,
    fixedTokens: toolDocsTokens(input),
    extraTokens: (turn) => {
      const calls = callsOf.get(turn);
      return calls ? input.estimate(JSON.stringify(calls)) : 0;
    },
  });
  if (callsOf.size === 0) return fitted;
  // Consecutive assistant turns are one model response: its calls, then its text.
  const expanded = fitted.turns.flatMap((turn): ChatTurn[] => {
    const calls = callsOf.get(turn);
    return calls ? [{ role: "assistant", text: "", calls }, turn] : [turn];
  });
  return { ...fitted, turns: expanded };
}

/** The calls of an answer that gave the model a result, in order, results cut for replay. */
function replayedCalls(message: Message): ToolCallRecord[] {
  const calls: ToolCallRecord[] = [];
  for (const step of [...message.steps].sort((a, b) => a.index - b.index)) {
    const result = modelResultOf(step);
    if (result === null) continue;
    const cut =
      result.length > REPLAYED_RESULT_MAX_CHARS
        ? `${result.slice(0, REPLAYED_RESULT_MAX_CHARS)}… (cut)`
        : result;
    calls.push({ name: step.tool, arguments: step.arguments, result: cut });
  }
  return calls;
}
