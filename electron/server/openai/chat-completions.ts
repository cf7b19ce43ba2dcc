/** POST /v1/chat/completions: stateless generation on the loaded model, whole or as SSE. */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ResolvedSelection } from "../../core/core-types";
import type { ChatTurn, GenerateOptions, GenerateResult } from "../../core/engine/types";
import { OpenAiError, sendOpenAiError } from "./errors";
import { ChatCompletionRequest, describeIssue, type ChatCompletionRequest as Request } from "./schemas";
import {
  contentText,
  historyTurns,
  responseToolCalls,
  toolRequest,
  type OpenAiToolCall,
  type ToolRequest,
} from "./tool-calls";
import { abortOnClose, newId, nowSeconds, resolveTurn, toOpenAiError, type V1Context } from "./turn";

/** The text the router decides on: the last user message (a tool result is answered for it). */
function lastUserText(messages: Request["messages"]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user") return contentText(m.content);
  }
  return "";
}

/** When the client gives no limit; the engine also stops when the context is full. */
export const DEFAULT_MAX_TOKENS = 1024;
/** OpenAI's default. */
const DEFAULT_TEMPERATURE = 1;

type FinishReason = "stop" | "length" | "tool_calls";

function finishReason(result: GenerateResult, calls: readonly OpenAiToolCall[]): FinishReason {
  if (calls.length > 0) return "tool_calls";
  return result.stopReason === "maxTokens" ? "length" : "stop";
}

/** The calls the model made, checked against the request's tools (none unless it stopped for them). */
function callsOf(result: GenerateResult, tools: ToolRequest): OpenAiToolCall[] {
  if (result.stopReason !== "toolCalls" || !result.toolCalls?.length) return [];
  return responseToolCalls(result.toolCalls, tools);
}

function usage(result: GenerateResult) {
  // Stateless: after the answer the context holds the prompt and the completion.
  const promptTokens = Math.max(result.contextTokens - result.tokens, result.promptTokensEvaluated, 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: result.tokens,
    total_tokens: promptTokens + result.tokens,
  };
}

type Usage = ReturnType<typeof usage>;

export function createChatCompletionHandler({ core, queue }: V1Context) {
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
    try {
      ({ resolved } = await resolveTurn(core, {
        model: body.model,
        adapters: body.adapters,
        routeText: lastUserText(body.messages),
      }));
    } catch (error) {
      return sendOpenAiError(reply, toOpenAiError(error));
    }

    const toolFormat = tools.tools ? resolved.toolFormat : undefined;
    const options: GenerateOptions = {
      temperature: body.temperature ?? DEFAULT_TEMPERATURE,
      maxTokens: body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS,
      ...(body.stop != null ? { stop: typeof body.stop === "string" ? [body.stop] : body.stop } : {}),
      ...(body.seed != null ? { seed: body.seed } : {}),
      ...(resolved.adapters.length > 0 ? { adapters: resolved.adapters } : {}),
      kvPolicy: resolved.kvPolicy,
      ...tools,
      // An adapter trained on its own call syntax (the demo's Agent) calls tools in that syntax.
      ...(toolFormat ? { toolFormat } : {}),
    };
    const meta = { id: newId("chatcmpl-"), created: nowSeconds(), model: body.model };

    // A client that goes away must not keep the engine busy (nor wait in the queue).
    const signal = abortOnClose(reply);
    const generate = (onToken: (text: string) => void) =>
      queue.run(signal, () => core.engine.generate(history, options, onToken, signal));

    if (!body.stream) {
      let text = "";
      try {
        const result = await generate((t) => (text += t));
        const calls = callsOf(result, tools);
        // With calls, the result's text is what came before them (never the call's own syntax).
        const content = calls.length > 0 ? result.text : result.text || text;
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
              logprobs: null,
              finish_reason: finishReason(result, calls),
            },
          ],
          usage: usage(result),
          // Non-standard: which adapters answered and why (clients ignore unknown fields).
          routing: resolved.routing,
        });
      } catch (error) {
        return sendOpenAiError(reply, toOpenAiError(error));
      }
    }

    const stream = new SseStream(reply, meta);
    try {
      const result = await generate((t) => stream.delta(t));
      const calls = callsOf(result, tools);
      stream.toolCalls(calls);
      stream.finish(finishReason(result, calls), body.stream_options?.include_usage ? usage(result) : null);
    } catch (error) {
      const failure = toOpenAiError(error);
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
  started = false;

  constructor(
    private readonly reply: FastifyReply,
    private readonly meta: { id: string; created: number; model: string },
  ) {}

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

  finish(reason: FinishReason, usage: Usage | null): void {
    this.start();
    this.chunk({}, reason);
    if (usage) this.write({ ...this.base(), choices: [], usage });
    this.end();
  }

  fail(error: OpenAiError): void {
    this.write(error.toBody());
    this.end();
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.reply.hijack();
    this.reply.raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-content-type-options": "nosniff",
      "x-accel-buffering": "no",
    });
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

  private chunk(delta: Record<string, unknown>, finishReason: FinishReason | null): void {
    this.write({
      ...this.base(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
  }

  private write(data: unknown): void {
    if (!this.reply.raw.writableEnded) this.reply.raw.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  private end(): void {
    if (this.reply.raw.writableEnded) return;
    this.reply.raw.write("data: [DONE]\n\n");
    this.reply.raw.end();
  }
}
