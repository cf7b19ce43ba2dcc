/**
 * POST /v1/messages: Anthropic's Messages API on the local model, whole or as Anthropic's SSE
 * events, for Claude Code–style clients. The request is mapped onto the OpenAI-shaped internal
 * form (translate.ts) and runs like /v1/chat/completions: the same model ids, the same queue,
 * the same errors (re-shaped into Anthropic's `{type:"error", error:{type, message}}`).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ResolvedSelection } from "../../core/core-types";
import type { GenerateOptions, GenerateResult } from "../../core/engine/types";
import { OpenAiError } from "../openai/errors";
import { responseToolCalls, type ToolRequest } from "../openai/tool-calls";
import {
  abortOnClose,
  checkMaxTokens,
  newId,
  resolveTurn,
  toOpenAiError,
  usageOf,
  type V1Context,
} from "../openai/turn";
import { anthropicErrorBody, sendAnthropicError } from "./errors";
import { CountTokensRequest, describeIssue, MessagesRequest } from "./schemas";
import { engineTurn, routeText, type EngineTurn } from "./translate";
import { requestSeed, sendSeed } from "../openai/sampling";
import { SseChannel, withBatchedDeltas } from "../openai/sse";

/** Anthropic's default temperature. */
const DEFAULT_TEMPERATURE = 1;

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

export interface TextContent {
  type: "text";
  text: string;
}
export interface ToolUseContent {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}
export type ResponseContent = TextContent | ToolUseContent;

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** The calls the model made as tool_use blocks, checked against the request's tools. */
function toolUses(result: GenerateResult, tools: ToolRequest): ToolUseContent[] {
  if (result.stopReason !== "toolCalls" || !result.toolCalls?.length) return [];
  return responseToolCalls(result.toolCalls, tools).map((call) => ({
    type: "tool_use",
    id: newId("toolu_"),
    name: call.function.name,
    input: JSON.parse(call.function.arguments) as unknown,
  }));
}

function stopReason(result: GenerateResult, uses: readonly ToolUseContent[]): StopReason {
  if (uses.length > 0) return "tool_use";
  if (result.stopReason === "maxTokens") return "max_tokens";
  return result.stopReason === "stop" ? "stop_sequence" : "end_turn";
}

/**
 * Which of `stop_sequences` ended the answer: the engine reports the one that matched; an
 * engine that does not (fakes) leaves it known only when there was one.
 */
function stopSequence(
  reason: StopReason,
  result: GenerateResult,
  sequences: readonly string[] | undefined,
): string | null {
  if (reason !== "stop_sequence") return null;
  if (result.stopSequence) return result.stopSequence;
  return sequences?.length === 1 ? sequences[0]! : null;
}

/** Anthropic's names for the counts every /v1 endpoint reports (usageOf: the engine's exact prompt). */
function usage(result: GenerateResult): Usage {
  const counts = usageOf(result);
  return { input_tokens: counts.prompt_tokens, output_tokens: counts.completion_tokens };
}

function samplers(body: MessagesRequest): Pick<GenerateOptions, "temperature" | "topP" | "topK" | "seed"> {
  return {
    temperature: body.temperature ?? DEFAULT_TEMPERATURE,
    // Anthropic's API has no seed: a fresh one, said in the x-macaron-seed header.
    seed: requestSeed(undefined),
    ...(body.top_p != null ? { topP: body.top_p } : {}),
    ...(body.top_k != null ? { topK: body.top_k } : {}),
  };
}

export function createMessagesHandler({ core }: V1Context) {
  return async function messages(request: FastifyRequest, reply: FastifyReply) {
    const parsed = MessagesRequest.safeParse(request.body);
    if (!parsed.success) {
      return sendAnthropicError(
        reply,
        new OpenAiError(400, "invalid_request_error", "invalid_request", describeIssue(parsed.error)),
      );
    }
    const body = parsed.data;
    // Uses matched to results and the tools' schemas checked, before anything is generated.
    let turn: EngineTurn;
    let resolved: ResolvedSelection;
    try {
      turn = engineTurn(body);
      const target = await resolveTurn(core, { model: body.model, routeText: routeText(body.messages) });
      checkMaxTokens(body.max_tokens, target.loaded, "max_tokens");
      resolved = target.resolved;
    } catch (error) {
      return sendAnthropicError(reply, toOpenAiError(error));
    }

    const { history, tools } = turn;
    const toolFormat = tools.tools ? resolved.toolFormat : undefined;
    const options: GenerateOptions = {
      ...samplers(body),
      maxTokens: body.max_tokens,
      ...(body.stop_sequences?.length ? { stop: body.stop_sequences } : {}),
      ...(resolved.adapters.length > 0 ? { adapters: resolved.adapters } : {}),
      kvPolicy: resolved.kvPolicy,
      ...tools,
      // An adapter trained on its own call syntax (the demo's Agent) calls tools in that syntax.
      ...(toolFormat ? { toolFormat } : {}),
    };
    sendSeed(reply, options);
    const meta = { id: newId("msg_"), model: body.model };

    // A client that goes away must not keep the engine busy (nor wait in the queue).
    const signal = abortOnClose(reply);
    const generate = (onToken?: (text: string) => void) =>
      core.generation.generate(history, options, onToken, signal);

    if (!body.stream) {
      try {
        // No token listener: the engine sends no tokens, only the result with the whole text.
        const result = await generate();
        const uses = toolUses(result, tools);
        // With calls, the result's text is what came before them (never the call's own syntax).
        const text = result.text;
        const reason = stopReason(result, uses);
        const content: ResponseContent[] = [...(text ? [{ type: "text" as const, text }] : []), ...uses];
        return reply.send({
          ...meta,
          type: "message",
          role: "assistant",
          content,
          stop_reason: reason,
          stop_sequence: stopSequence(reason, result, body.stop_sequences),
          usage: usage(result),
          // Non-standard: which adapters answered and why (clients ignore unknown fields).
          routing: resolved.routing,
        });
      } catch (error) {
        return sendAnthropicError(reply, toOpenAiError(error));
      }
    }

    const stream = new MessageStream(reply, meta);
    try {
      const result = await withBatchedDeltas((t) => stream.text(t), generate);
      const uses = toolUses(result, tools);
      stream.toolUses(uses);
      const reason = stopReason(result, uses);
      stream.finish(reason, stopSequence(reason, result, body.stop_sequences), usage(result));
    } catch (error) {
      const failure = toOpenAiError(error);
      // Before the first byte the client still gets a proper status; afterwards only an error event.
      if (!stream.started) return sendAnthropicError(reply, failure);
      stream.fail(failure);
    }
    return reply;
  };
}

/**
 * Writes Anthropic's stream: message_start, then per content block content_block_start, its
 * deltas and content_block_stop (a ping after the first start, as Anthropic sends one), then
 * message_delta (stop reason, usage) and message_stop. Headers go out with the first token, so
 * a request that fails at once (busy, crashed) still gets a real HTTP error status.
 *
 * The prompt's token count is known only when the answer ends: message_start carries 0 and
 * message_delta the exact `input_tokens` (the SDK's stream helper takes it from there).
 */
class MessageStream {
  private readonly sse: SseChannel;
  private blocks = 0;
  private openText: number | null = null;
  private pinged = false;

  constructor(
    reply: FastifyReply,
    private readonly meta: { id: string; model: string },
  ) {
    this.sse = new SseChannel(reply);
  }

  get started(): boolean {
    return this.sse.started;
  }

  text(text: string): void {
    if (!text) return;
    this.start();
    if (this.openText === null) {
      this.openText = this.blockStart({ type: "text", text: "" });
    }
    this.event("content_block_delta", { index: this.openText, delta: { type: "text_delta", text } });
  }

  /** Each use as Anthropic streams one: the block with empty input, then its input as JSON. */
  toolUses(uses: readonly ToolUseContent[]): void {
    if (uses.length === 0) return;
    this.start();
    this.closeText();
    for (const use of uses) {
      const index = this.blockStart({ ...use, input: {} });
      this.event("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(use.input) },
      });
      this.event("content_block_stop", { index });
    }
  }

  finish(reason: StopReason, sequence: string | null, usage: Usage): void {
    this.start();
    this.closeText();
    this.ping();
    this.event("message_delta", {
      delta: { stop_reason: reason, stop_sequence: sequence },
      usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens },
    });
    this.event("message_stop", {});
    this.end();
  }

  fail(error: OpenAiError): void {
    this.write("error", anthropicErrorBody(error.status, error.message));
    this.end();
  }

  private start(): void {
    if (!this.sse.open()) return;
    this.event("message_start", {
      message: {
        id: this.meta.id,
        type: "message",
        role: "assistant",
        model: this.meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
  }

  private blockStart(block: ResponseContent): number {
    const index = this.blocks++;
    this.event("content_block_start", { index, content_block: block });
    this.ping();
    return index;
  }

  private closeText(): void {
    if (this.openText === null) return;
    this.event("content_block_stop", { index: this.openText });
    this.openText = null;
  }

  private ping(): void {
    if (this.pinged) return;
    this.pinged = true;
    this.event("ping", {});
  }

  private event(type: string, data: Record<string, unknown>): void {
    this.write(type, { type, ...data });
  }

  private write(event: string, data: unknown): void {
    this.sse.send(data, event);
  }

  private end(): void {
    this.sse.end();
  }
}

/**
 * POST /v1/messages/count_tokens: `{input_tokens}` for a message request, exact. The prompt is
 * counted as the engine lays it out (chat template, system, tools), which only the engine knows:
 * it runs the request with a one-token answer, greedy, and reports its prompt length. That
 * evaluates the prompt once, and leaves it in the KV cache, so the request a client sends
 * after counting reuses it.
 */
export function createCountTokensHandler({ core }: V1Context) {
  return async function countTokens(request: FastifyRequest, reply: FastifyReply) {
    const parsed = CountTokensRequest.safeParse(request.body);
    if (!parsed.success) {
      return sendAnthropicError(
        reply,
        new OpenAiError(400, "invalid_request_error", "invalid_request", describeIssue(parsed.error)),
      );
    }
    const body: MessagesRequest = { ...parsed.data, max_tokens: 1 };
    try {
      const { history, tools } = engineTurn(body);
      const { resolved } = await resolveTurn(core, {
        model: body.model,
        routeText: routeText(body.messages),
      });
      const toolFormat = tools.tools ? resolved.toolFormat : undefined;
      const result = await core.generation.generate(
        history,
        {
          temperature: 0,
          maxTokens: 1,
          ...(resolved.adapters.length > 0 ? { adapters: resolved.adapters } : {}),
          kvPolicy: resolved.kvPolicy,
          ...tools,
          ...(toolFormat ? { toolFormat } : {}),
        },
        undefined,
        abortOnClose(reply),
      );
      return reply.send({ input_tokens: usage(result).input_tokens });
    } catch (error) {
      return sendAnthropicError(reply, toOpenAiError(error));
    }
  };
}
