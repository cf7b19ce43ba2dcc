import type { AppSettings, Message } from "../../api";
import type { ChatTurn } from "../engine/types";
import { fitHistory, type FittedHistory } from "./context-window";

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
}

/**
 * The prompt of an answer: finished messages in order (complete or stopped: an errored or
 * interrupted answer is not something the model said), one system turn (the system prompt
 * and the memories), fitted into the context window (see fitHistory).
 */
export function buildPrompt(input: PromptInput): FittedHistory {
  const turns: ChatTurn[] = input.transcript
    .filter((m) => m.status === "complete" || m.status === "stopped")
    .map((m) => ({ role: m.role, text: m.content }));
  let system: string | null = input.systemPrompt || null;
  if (turns[0]?.role === "system") system = turns.shift()!.text;
  // One system turn, not two: many chat templates accept a single one, at the start.
  if (input.memoryBlock) system = system ? `${system}\n\n${input.memoryBlock}` : input.memoryBlock;
  return fitHistory({
    system,
    history: turns,
    contextSize: input.contextSize,
    answerTokens: input.answerTokens,
    strategy: input.strategy,
    estimate: input.estimate,
  });
}
