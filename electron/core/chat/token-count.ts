/**
 * chat.countTokens: how many tokens a text (a message with its attachments, before it is sent)
 * takes, and how many one message may take in the prompt. Counted by the loaded model's own
 * tokenizer; with no model loaded (or an engine that cannot count) by the byte estimate turns
 * use, said so in `source`.
 */
import { promptRoom, TOKENS_PER_MESSAGE } from "./context-window";
import type { EngineClient } from "../engine/types";
import { LoadedModelTokens } from "./token-estimate";
import { contextSizeOf } from "./turn-deps";

/** chat.countTokens's answer (see its schema in api/methods.ts). */
export interface ChatTokenCount {
  tokens: number;
  source: "tokenizer" | "estimate";
  room: number;
  contextSize: number;
}

export class TokenCounter {
  private readonly estimator: LoadedModelTokens;

  constructor(
    private readonly engine: EngineClient,
    /** The answer's room in the context (the turns' default maxTokens). */
    private readonly answerTokens: () => number,
    private readonly log: (message: string, err: unknown) => void = () => undefined,
  ) {
    this.estimator = new LoadedModelTokens(engine);
  }

  async count(text: string): Promise<ChatTokenCount> {
    const contextSize = contextSizeOf(this.engine);
    // What fitHistory fits the prompt into, less the chat template's tokens around the message.
    const room = Math.max(0, promptRoom(contextSize, this.answerTokens()) - TOKENS_PER_MESSAGE);
    if (this.engine.loaded && this.engine.countTokens) {
      try {
        const [tokens] = await this.engine.countTokens([text]);
        if (tokens !== undefined) return { tokens, source: "tokenizer", room, contextSize };
      } catch (err) {
        this.log("the engine could not count tokens; estimating", err);
      }
    }
    return { tokens: this.estimator.estimate(text), source: "estimate", room, contextSize };
  }
}
