/** POST /v1/chat/completions: stateless generation on the loaded model, whole or as SSE. */
import { grammarConflictMessage } from "../../../common/generate-rules";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ResolvedSelection } from "../../core/core-types";
import type { ChatTurn, GenerateOptions, GenerateResult } from "../../core/engine/types";
import { OpenAiError, sendOpenAiError } from "./errors";
import { ChatCompletionRequest, describeIssue, type ChatCompletionRequest as Request } from "./schemas";
import {
  contentText,
  historyTurns,
  newCallId,
  responseToolCalls,
  toolRequest,
  type OpenAiToolCall,
  type ToolRequest,
} from "./tool-calls";
import {
  chatLogprobs,
  logprobsOption,
  responseFormatOptions,
  samplingOptions,
  sendSeed,
  structuredAnswerOk,
  withEngineParam,
  type StructuredCheck,
} from "./sampling";
import { abortOnClose, newId, nowSeconds, resolveTurn, toOpenAiError, usageOf, type V1Context } from "./turn";
import { SseChannel, withBatchedDeltas } from "./sse";

/** The text the router decides on: the last user message (a tool result is answered for it). */
function lastUserText(messages: Request["messages"]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user") return contentText(m.content);
  }
  return "";
}

type FinishReason = "stop" | "length" | "tool_calls";

/**
 * A structured answer (response_format) that does not parse or validate was cut short (by
 * max_tokens or the context): "length", with the text as it is, never a made-up object. One
 * that the request's own `stop` string ended is "stop", as asked.
 */
function finishReason(
  result: GenerateResult,
  calls: readonly OpenAiToolCall[],
  structured: StructuredCheck,
): FinishReason {
  if (result.stopReason === "maxTokens") return "length";
  if (calls.length > 0) return "tool_calls";
  if (result.stopReason === "stop") return "stop";
  return structuredAnswerOk(result.text, structured) ? "stop" : "length";
}

/**
 * The calls the model made, checked against the request's tools (none unless it stopped for
 * them). A call that max_tokens cut off is returned as far as it was written (its arguments
 * not yet whole JSON) with finish_reason "length", as OpenAI does, rather than dropped.
 */
function callsOf(result: GenerateResult, tools: ToolRequest): OpenAiToolCall[] {
  if (result.stopReason === "maxTokens" && result.cutOffCall)
    return [
      {
        id: newCallId(),
        type: "function",
        function: { name: result.cutOffCall.name, arguments: result.cutOffCall.arguments },
      },
    ];
  if (result.stopReason !== "toolCalls" || !result.toolCalls?.length) return [];
  return responseToolCalls(result.toolCalls, tools);
}

const usage = usageOf;
type ChatLogprobs = ReturnType<typeof chatLogprobs>;
type Usage = ReturnType<typeof usage>;

export function createChatCompletionHandler({ core }: V1Context) {
  return async function chatCompletion(request: FastifyRequest, reply: FastifyReply) {
    const parsed = ChatCompletionRequest.safeParse(request.body);
    if (!parsed.success) {
      const { message, param } = describeIssue(parsed.error);
      return sendOpenAiError(
        reply,
        new OpenAiError(400, "invalid_request_error", "invalid_request", message, param),
      );
    }
    const body = parsed.data;
    const last = body.messages[body.messages.length - 1];
    if (last?.role !== "user" && last?.role !== "tool") {
      return sendOpenAiError(
        reply,
        new OpenAiError(
          400,
          "invalid_request_error",
          "invalid_request",
          "The last message must come from the user, or be a tool result to answer.",
          "messages",
        ),
      );
    }
    // Calls matched to their results and the tools' schemas, before anything is generated.
    let history: ChatTurn[];
    let tools: ToolRequest;
    try {
      history = historyTurns(body.messages);
      tools = toolRequest(body);
    } catch (error) {
      return sendOpenAiError(reply, toOpenAiError(error));
    }
    // The router decides on the last user turn; an explicit `adapters` blend overrides the model's choice.
    let resolved: ResolvedSelection;
    let options: GenerateOptions;
    let structured: StructuredCheck;
    try {
      // What needs no model first: a bad format is refused before the router runs.
      const format = responseFormatOptions(body.response_format);
      structured = format.check;
      const conflict = grammarConflictMessage(
        { ...format.options, tools: tools.tools },
        { tools: "tools", json: "response_format", jsonSchema: "response_format" },
      );
      if (conflict)
        throw new OpenAiError(
          400,
          "invalid_request_error",
          "invalid_request",
          conflict.message,
          conflict.field,
        );
      const logprobs = logprobsOption(body.logprobs, body.top_logprobs);
      const turn = await resolveTurn(core, {
        model: body.model,
        adapters: body.adapters,
        routeText: lastUserText(body.messages),
      });
      resolved = turn.resolved;
      const toolFormat = tools.tools ? resolved.toolFormat : undefined;
      options = {
        ...samplingOptions(body, turn.loaded),
        ...format.options,
        ...logprobs,
        ...(resolved.adapters.length > 0 ? { adapters: resolved.adapters } : {}),
        kvPolicy: resolved.kvPolicy,
        ...tools,
        // An adapter trained on its own call syntax (the demo's Agent) calls tools in that syntax.
        ...(toolFormat ? { toolFormat } : {}),
      };
    } catch (error) {
      return sendOpenAiError(reply, toOpenAiError(error));
    }
    sendSeed(reply, options);
    const logprobsOf = (result: GenerateResult) => (options.logprobs ? chatLogprobs(result.logprobs) : null);
    const meta = { id: newId("chatcmpl-"), created: nowSeconds(), model: body.model };

    // A client that goes away must not keep the engine busy (nor wait in the queue).
    const signal = abortOnClose(reply);
    const generate = (onToken?: (text: string) => void) =>
      core.generation.generate(history, options, onToken, signal);

    if (!body.stream) {
      try {
        // No token listener: the engine sends no tokens, only the result with the whole text.
        const result = await generate();
        const calls = callsOf(result, tools);
        // With calls, the result's text is what came before them (never the call's own syntax).
        const content = result.text;
        return reply.send({
          ...meta,
          object: "chat.completion",
          choices: [
            {
              index: 0,
              // OpenAI's content is null when the answer is only calls.
              message:
                calls.length > 0
                  ? { role: "assistant", content: content || null, tool_calls: calls }
                  : { role: "assistant", content },
              logprobs: logprobsOf(result),
              finish_reason: finishReason(result, calls, structured),
            },
          ],
          usage: usage(result),
          // Non-standard: which adapters answered and why (clients ignore unknown fields).
          routing: resolved.routing,
        });
      } catch (error) {
        return sendOpenAiError(reply, withEngineParam(toOpenAiError(error), options));
      }
    }

    const stream = new SseStream(reply, meta);
    try {
      const result = await withBatchedDeltas((t) => stream.delta(t), generate);
      const calls = callsOf(result, tools);
      stream.toolCalls(calls);
      stream.finish(
        finishReason(result, calls, structured),
        body.stream_options?.include_usage ? usage(result) : null,
        logprobsOf(result),
      );
    } catch (error) {
      const failure = withEngineParam(toOpenAiError(error), options);
      // Before the first byte the client still gets a proper status; afterwards only an error event.
      if (!stream.started) return sendOpenAiError(reply, failure);
      stream.fail(failure);
    }
    return reply;
  };
}

/**
 * Writes chat.completion.chunk events. Headers go out with the first token, so a request
 * that fails at once (busy, crashed) still gets a real HTTP error status.
 */
class SseStream {
  private readonly sse: SseChannel;

  constructor(
    reply: FastifyReply,
    private readonly meta: { id: string; created: number; model: string },
  ) {
    this.sse = new SseChannel(reply);
  }

  get started(): boolean {
    return this.sse.started;
  }

  delta(content: string): void {
    this.start();
    this.chunk({ content }, null);
  }

  /**
   * Each call as OpenAI streams one: a chunk with its index, id, type and name (arguments
   * empty), then its arguments. The engine parses a call whole, so they come in one piece.
   */
  toolCalls(calls: readonly OpenAiToolCall[]): void {
    if (calls.length === 0) return;
    this.start();
    calls.forEach((call, index) => {
      const { name, arguments: args } = call.function;
      this.chunk(
        { tool_calls: [{ index, id: call.id, type: "function", function: { name, arguments: "" } }] },
        null,
      );
      this.chunk({ tool_calls: [{ index, function: { arguments: args } }] }, null);
    });
  }

  /**
   * The last choice chunk. Token log-probabilities come whole in it: the engine reports them
   * with the result, not per streamed piece (OpenAI clients concatenate `logprobs.content`
   * across chunks, so the sum is the same).
   */
  finish(reason: FinishReason, usage: Usage | null, logprobs: ChatLogprobs | null): void {
    this.start();
    this.chunk({}, reason, logprobs);
    if (usage) this.write({ ...this.base(), choices: [], usage });
    this.end();
  }

  fail(error: OpenAiError): void {
    this.write(error.toBody());
    this.end();
  }

  private start(): void {
    if (!this.sse.open()) return;
    this.chunk({ role: "assistant", content: "" }, null);
  }

  private base() {
    return {
      id: this.meta.id,
      object: "chat.completion.chunk",
      created: this.meta.created,
      model: this.meta.model,
    };
  }

  private chunk(
    delta: Record<string, unknown>,
    finishReason: FinishReason | null,
    logprobs: ChatLogprobs | null = null,
  ): void {
    this.write({
      ...this.base(),
      choices: [{ index: 0, delta, logprobs, finish_reason: finishReason }],
    });
  }

  private write(data: unknown): void {
    this.sse.send(data);
  }

  private end(): void {
    this.sse.end(true);
  }
}
