/**
 * The engine request of an answer: the conversation's history fitted into the context (with
 * the system prompt, GenUI's instructions and the recalled memories), and the generate options
 * (sampling, KV cache key, adapters, KV policy, GenUI's grammar).
 */
import type { GenerateOptions } from "../engine/types";
import type { GenuiTurns } from "../genui/genui-turns";
import type { FittedHistory } from "./context-window";
import { buildPrompt } from "./prompt";
import type { LoadedModelTokens } from "./token-estimate";
import { contextSizeOf, DEFAULT_SYSTEM_PROMPT, kvPolicyOf, type TurnPipelineDeps } from "./turn-deps";
import type { TurnPlan } from "./turn-plan";

export class AnswerPrompts {
  constructor(
    private readonly deps: TurnPipelineDeps,
    private readonly tokens: LoadedModelTokens,
  ) {}

  /** GenUI's turns when the answer is a UI answer. */
  uiFor(plan: TurnPlan): GenuiTurns | undefined {
    return plan.format === "ui" ? this.deps.genui : undefined;
  }

  /** The prompt of an answer to the conversation as it stands now, and how it was fitted. */
  fit(conversationId: string, plan: TurnPlan): FittedHistory {
    const { messages, memory } = this.deps;
    // A conversation's own system prompt takes the app's place; GenUI's instructions and the
    // memories are still added to it, as to the app's.
    const systemPrompt = plan.systemPrompt ?? this.deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
    const ui = this.uiFor(plan);
    return buildPrompt({
      transcript: messages.list(conversationId),
      systemPrompt: ui ? ui.systemPrompt(systemPrompt) : systemPrompt,
      memoryBlock: memory && plan.memories.length > 0 ? memory.block(plan.memories) : null,
      contextSize: contextSizeOf(this.deps.engine),
      answerTokens: plan.sampling.maxTokens,
      strategy: this.deps.contextStrategy?.() ?? "sliding-window",
      estimate: (text) => this.tokens.estimate(text),
      tools: plan.agent?.toolset.definitions,
      toolFormat: plan.agent?.toolFormat,
    });
  }

  options(conversationId: string, plan: TurnPlan): GenerateOptions {
    // The conversation id keys the engine's KV cache: a reopened conversation skips its history.
    const options: GenerateOptions = { ...engineSampling(plan.sampling), sessionKey: conversationId };
    if (plan.resolved.adapters.length > 0) options.adapters = plan.resolved.adapters;
    if (this.deps.routing) options.kvPolicy = kvPolicyOf(this.deps);
    // UI mode: the grammar keeps the answer valid JSON of the catalog's shape (not its meaning).
    const ui = this.uiFor(plan);
    if (ui) options.jsonSchema = ui.jsonSchema;
    return options;
  }
}

/**
 * A turn's sampling as the engine's options: the same fields /v1 fills in
 * (electron/server/openai/sampling.ts), so chat and the API reach node-llama-cpp one way.
 */
export function engineSampling(
  s: TurnPlan["sampling"],
): Pick<GenerateOptions, "temperature" | "maxTokens" | "seed" | "topP" | "topK" | "minP" | "repeatPenalty"> {
  return {
    temperature: s.temperature,
    maxTokens: s.maxTokens,
    ...(s.seed !== undefined ? { seed: s.seed } : {}),
    ...(s.topP !== undefined ? { topP: s.topP } : {}),
    ...(s.topK !== undefined ? { topK: s.topK } : {}),
    ...(s.minP !== undefined ? { minP: s.minP } : {}),
    ...(s.repeatPenalty !== undefined ? { repeatPenalty: { penalty: s.repeatPenalty } } : {}),
  };
}
