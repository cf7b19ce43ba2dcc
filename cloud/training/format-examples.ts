/**
 * Lays training examples out in tokens exactly as the app does at inference: the system turn
 * chosen by the app's buildPrompt (its default system prompt, GenUI's for the UI domain), the
 * turns converted by the engine's toChatHistory, the chat wrapper picked by the engine's
 * chooseChatWrapper, and the wrapper's context text tokenized by the base's tokenizer. So the
 * prompt an adapter is trained on is token for token the prompt it will be asked.
 *
 * Answers that called tools go through the engine's function calling too: the tools become
 * node-llama-cpp functions (toFunctions), the adapter's call syntax its wrapper settings
 * (toolChatWrapper), and the calls ChatTurn.calls rendered by toChatHistory, exactly as the
 * engine lays out an Agent turn that continues after its tool results. The loss covers the
 * calls and the answer, never the results (a tool's output is not the model's to predict).
 */
import { createHash } from "node:crypto";
import type { ChatModelFunctions, ChatWrapper, LlamaModel, Token } from "node-llama-cpp";
import { messageDefaults, type Message } from "../../electron/api";
import { buildPrompt } from "../../electron/core/chat/prompt";
import { DEFAULT_SYSTEM_PROMPT, uiSystemPrompt } from "../../common/prompts";
import { chooseChatWrapper } from "../../native/engine/chat-wrapper";
import { toChatHistory } from "../../native/engine/history";
import type { ChatTurn, ToolCallFormat, ToolDefinition } from "../../common/engine-protocol";
import { toFunctions, toolChatWrapper } from "../../native/engine/tool-calls";
import type { ChatMessage, ToolRound } from "./dataset-file";

/** The domain whose turns are answered in UI mode (GenUI's system prompt). */
export const UI_DOMAIN = "ui";

/** The system prompt the app uses for turns of `domain` (see AnswerPrompts.fit). */
export function systemPromptFor(domain: string): string {
  return domain === UI_DOMAIN ? uiSystemPrompt(DEFAULT_SYSTEM_PROMPT) : DEFAULT_SYSTEM_PROMPT;
}

/**
 * The system turns training examples are laid out under. "app": the app's prompt for every
 * example (what the app's own turns carry). "mixed": by a hash of each example's prompt, half
 * the app's prompt, a quarter none (what most API clients send) and a quarter one of
 * OTHER_SYSTEM_PROMPTS, so an adapter answers the same however a client asks. An example with
 * its own leading system message keeps it either way.
 */
export type SystemPromptMix = "app" | "mixed";

/** System prompts other clients send (SDK examples and frameworks' defaults), for "mixed". */
export const OTHER_SYSTEM_PROMPTS = [
  "You are a helpful assistant.",
  "You are a helpful, harmless and honest assistant. Answer the user's question.",
  "You are an AI assistant. Be accurate and concise.",
  "You are a coding and general knowledge assistant.",
] as const;

/** How `prompt` picks its system turn under "mixed" (see SystemPromptMix). */
export type SystemPromptChooser = (prompt: readonly ChatMessage[]) => string;

/** The "mixed" chooser around the app's prompt `app`: deterministic per prompt text. */
export function mixedSystemPrompt(app: string): SystemPromptChooser {
  return (prompt) => {
    const text = prompt.map((m) => `${m.role}\u0000${m.content}`).join("\u0001");
    const h = createHash("sha256").update(text).digest();
    const slot = h[0]! % 4;
    if (slot < 2) return app;
    if (slot === 2) return "";
    return OTHER_SYSTEM_PROMPTS[h[1]! % OTHER_SYSTEM_PROMPTS.length]!;
  };
}

/** A finished transcript message, the form buildPrompt takes. */
function asMessage(m: ChatMessage, i: number): Message {
  return {
    id: `m${i}`,
    conversationId: "training",
    role: m.role,
    content: m.content,
    status: "complete",
    error: null,
    createdAt: 0,
    stats: null,
    ...messageDefaults(),
  };
}

/**
 * The turns the engine gets for `prompt` (buildPrompt: a leading system message wins over
 * `systemPrompt`). The context is unbounded here: too-long examples are dropped or cut by the
 * caller, and counted, instead of silently losing their oldest messages.
 */
export function promptTurns(prompt: readonly ChatMessage[], systemPrompt: string): ChatTurn[] {
  return buildPrompt({
    transcript: prompt.map(asMessage),
    systemPrompt,
    memoryBlock: null,
    contextSize: Number.MAX_SAFE_INTEGER,
    answerTokens: 0,
    strategy: "sliding-window",
    estimate: (text) => text.length,
  }).turns;
}

export interface FormattedSft {
  ids: number[];
  /** Number of prompt tokens: ids[start:] is the answer and the end-of-turn token. */
  start: number;
  /** The answer's tokens in context did not follow the prompt's (see ChatFormatter.answer). */
  retokenized: boolean;
}

/** An SFT example whose answer called tools: the loss covers `spans` only (not the results). */
export interface FormattedToolSft {
  ids: number[];
  start: number;
  /** [from, to) token ranges the model learns: its calls, its texts and the end of turn. */
  spans: [number, number][];
  /** Tokens of tool results inside the answer (given, not learned). */
  resultTokens: number;
  /** Results whose tokens could not be found in the layout (then learned like the rest). */
  unmaskedResults: number;
  calls: number;
}

/** A tool turn's functions and wrapper, as the engine sets them up (ModelSession.toolSetup). */
interface ToolLayout {
  functions: ChatModelFunctions;
  wrapper: ChatWrapper;
}

/** Where `needle` first occurs in `hay` at or after `from`, or -1. */
function indexOfTokens(hay: readonly Token[], needle: readonly Token[], from: number): number {
  if (needle.length === 0) return -1;
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Formats conversations for one base model (one wrapper, one tokenizer). */
export class ChatFormatter {
  /** The token that closes a model turn (what the model must learn to emit after an answer). */
  readonly endOfTurn: Token;

  /**
   * `wrapper` defaults to what the engine picks for `model` (costs ~0.5–1 s: once per model).
   * `toolFormat`: the adapter's own call syntax (its manifest's toolCallFormat), as the engine
   * is given it for the adapter's turns.
   */
  constructor(
    private readonly model: LlamaModel,
    private readonly systemPrompt: string | SystemPromptChooser,
    private readonly wrapper: ChatWrapper = chooseChatWrapper(model),
    private readonly toolFormat?: ToolCallFormat,
  ) {
    this.endOfTurn = this.findEndOfTurn();
  }

  /** The same layout (model, wrapper, tool syntax) under other system turns. */
  withSystemPrompt(systemPrompt: string | SystemPromptChooser): ChatFormatter {
    return new ChatFormatter(this.model, systemPrompt, this.wrapper, this.toolFormat);
  }

  /** The system prompt `prompt` is laid out under ("" for none). */
  private systemFor(prompt: readonly ChatMessage[]): string {
    return typeof this.systemPrompt === "string" ? this.systemPrompt : this.systemPrompt(prompt);
  }

  /** The tokens of `turns` as LlamaChat evaluates them: history ending in an empty model turn. */
  tokens(turns: readonly ChatTurn[], tools?: ToolLayout): Token[] {
    const wrapper = tools?.wrapper ?? this.wrapper;
    const { contextText } = wrapper.generateContextState({
      // Past calls in the adapter's own syntax, as the engine writes them (ModelSession.generate).
      chatHistory: toChatHistory(turns, this.toolFormat),
      ...(tools ? { availableFunctions: tools.functions } : {}),
    });
    return contextText.tokenize(this.model.tokenizer);
  }

  /**
   * The engine's layout of a tool turn offering `tools` ("auto", as the agent loop asks).
   * Throws ToolRequestError for a schema the grammar cannot express (the engine refuses it too).
   */
  toolLayout(tools: readonly ToolDefinition[]): ToolLayout {
    return {
      functions: toFunctions(tools, "auto"),
      wrapper: toolChatWrapper(this.wrapper, { format: this.toolFormat, forced: false }),
    };
  }

  /**
   * An SFT example whose answer made `rounds` of tool calls before `answer`: the whole answer is
   * laid out as the engine lays out the last round (the rounds' assistant turns with their calls
   * and results, continued by the answer), then the end-of-turn token. Each result's tokens, as
   * the wrapper renders a result, are found after the call and left out of the loss.
   */
  toolSft(
    prompt: readonly ChatMessage[],
    rounds: readonly ToolRound[],
    answer: string,
    tools: readonly ToolDefinition[],
  ): FormattedToolSft {
    const p = this.toolPrompt(prompt, tools);
    const c = this.toolCompletion(p, rounds, answer);
    const spans = c.spans.map(([a, b]): [number, number] => [a + p.ids.length, b + p.ids.length]);
    return { ...c, ids: [...p.ids, ...c.ids], start: p.ids.length, spans };
  }

  /**
   * A preference pair of answers that called tools, on one prompt offering `tools` (the tools of
   * both sides): each side's completion with its loss spans, relative to the completion.
   */
  toolPair(
    prompt: readonly ChatMessage[],
    chosen: { rounds: readonly ToolRound[]; answer: string },
    rejected: { rounds: readonly ToolRound[]; answer: string },
    tools: readonly ToolDefinition[],
  ) {
    const p = this.toolPrompt(prompt, tools);
    return {
      prompt: p.ids as number[],
      chosen: this.toolCompletion(p, chosen.rounds, chosen.answer),
      rejected: this.toolCompletion(p, rejected.rounds, rejected.answer),
    };
  }

  /**
   * A GRPO group of answers that called tools (agent episodes), on one prompt offering `tools`:
   * each completion with its loss spans, relative to the completion, as a pair's sides are.
   */
  toolGroup(
    prompt: readonly ChatMessage[],
    completions: ReadonlyArray<{ rounds: readonly ToolRound[]; answer: string }>,
    tools: readonly ToolDefinition[],
  ) {
    const p = this.toolPrompt(prompt, tools);
    return {
      prompt: p.ids as number[],
      completions: completions.map((c) => this.toolCompletion(p, c.rounds, c.answer)),
    };
  }

  private toolPrompt(prompt: readonly ChatMessage[], tools: readonly ToolDefinition[]) {
    const layout = this.toolLayout(tools);
    const turns = promptTurns(prompt, this.systemFor(prompt));
    return { layout, turns, ids: this.tokens(turns, layout) };
  }

  /**
   * The completion of a tool prompt by `rounds` then `answer`, and the end-of-turn token; spans
   * (relative to the completion) cover everything but the tool results.
   */
  private toolCompletion(
    p: { layout: ToolLayout; turns: ChatTurn[]; ids: Token[] },
    rounds: readonly ToolRound[],
    answer: string,
  ): Omit<FormattedToolSft, "start"> {
    const { layout, turns, ids: promptIds } = p;
    const answerTurns: ChatTurn[] = [
      ...rounds.map((r): ChatTurn => ({ role: "assistant", text: r.text, calls: r.calls })),
      { role: "assistant", text: answer },
    ];
    const full = this.tokens([...turns, ...answerTurns], layout);
    if (!promptIds.every((t, i) => full[i] === t))
      throw new Error("The chat template lays the prompt out differently once the answer follows it.");
    const ids = [...full.slice(promptIds.length), this.endOfTurn] as number[];
    const spans: [number, number][] = [];
    let cursor = 0;
    let resultTokens = 0;
    let unmaskedResults = 0;
    let calls = 0;
    for (const round of rounds) {
      for (const call of round.calls) {
        calls++;
        const rendered = layout.wrapper
          .generateFunctionCallResult(call.name, call.arguments, call.result)
          .tokenize(this.model.tokenizer);
        const at = indexOfTokens(ids as Token[], rendered, cursor);
        if (at < 0) {
          unmaskedResults++;
          continue;
        }
        if (at > cursor) spans.push([cursor, at]);
        resultTokens += rendered.length;
        cursor = at + rendered.length;
      }
    }
    spans.push([cursor, ids.length]);
    return { ids, spans, resultTokens, unmaskedResults, calls };
  }

  /** The prompt tokens of `prompt` (the app's system turn added as buildPrompt does). */
  prompt(prompt: readonly ChatMessage[]): { turns: ChatTurn[]; ids: Token[] } {
    const turns = promptTurns(prompt, this.systemFor(prompt));
    return { turns, ids: this.tokens(turns) };
  }

  /**
   * The completion of `turns` by `answer`: the answer's tokens then the end-of-turn token. They
   * are read from the layout of the conversation with the answer in its model turn, after
   * checking that the prompt's tokens are a prefix of it; a template that lays the answer out
   * otherwise gets the answer tokenized on its own (`retokenized`), which is what generation
   * appends to the prompt.
   */
  answer(turns: readonly ChatTurn[], promptIds: readonly Token[], answer: string) {
    const full = this.tokens([...turns, { role: "assistant", text: answer }]);
    const isPrefix = full.length > promptIds.length && promptIds.every((t, i) => full[i] === t);
    const tokens = isPrefix ? full.slice(promptIds.length) : this.model.tokenize(answer);
    return { ids: [...tokens, this.endOfTurn] as number[], retokenized: !isPrefix };
  }

  /** An SFT example: prompt tokens + answer tokens + end of turn. */
  sft(prompt: readonly ChatMessage[], answer: string): FormattedSft {
    const p = this.prompt(prompt);
    const completion = this.answer(p.turns, p.ids, answer);
    return { ids: [...p.ids, ...completion.ids], start: p.ids.length, retokenized: completion.retokenized };
  }

  /**
   * The token the template closes a finished model turn with (ChatML: `<|im_end|>`), when it
   * is the model's EOS or EOT token; otherwise the EOS token, which ends generation too.
   */
  private findEndOfTurn(): Token {
    const user: ChatTurn = { role: "user", text: "a" };
    const open = this.tokens([user, { role: "assistant", text: "b" }]);
    const closed = this.tokens([user, { role: "assistant", text: "b" }, { role: "user", text: "c" }]);
    const next = open.every((t, i) => closed[i] === t) ? closed[open.length] : undefined;
    const { eos, eot } = this.model.tokens;
    if (next !== undefined && (next === eos || next === eot)) return next;
    const fallback = eos ?? eot;
    if (fallback === null)
      throw new Error("The base model has no end-of-sequence token to end answers with.");
    return fallback;
  }
}
