/**
 * POST /v1/completions: a raw prompt continued without the chat template (the legacy OpenAI
 * API that code-completion plugins and benchmarks still speak), whole or as SSE
 * `text_completion` chunks. The same samplers as chat; one choice; no suffix (fill-in-the-middle)
 * and no echo, refused by name rather than ignored.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { GenerateOptions, GenerateResult } from "../../core/engine/types";
import { OpenAiError, sendOpenAiError } from "./errors";
import { legacyLogprobs, samplingOptions, sendSeed, withEngineParam } from "./sampling";
import { CompletionRequest, describeIssue } from "./schemas";
import {
  abortOnClose,
  newId,
  nowSeconds,
  resolveTurn,
  toOpenAiError,
  usageOf,
  withParam,
  type V1Context,
} from "./turn";
import { SseChannel, withBatchedDeltas } from "./sse";

function invalid(message: string, param: string): OpenAiError {
  return new OpenAiError(400, "invalid_request_error", "invalid_request", message, param);
}

/** The one prompt of a request, or a 400 naming what cannot be served. */
function promptOf(body: CompletionRequest): string {
  if (Array.isArray(body.prompt)) {
    if (body.prompt.length > 1)
      throw invalid(
        `'prompt' has ${body.prompt.length} texts; send one per request (one choice per request here).`,
        "prompt",
      );
    return body.prompt[0]!;
  }
  return body.prompt;
}

function refuseUnsupported(body: CompletionRequest): void {
  if (body.suffix != null)
    throw invalid("'suffix' (fill-in-the-middle) is not supported: send the prompt alone.", "suffix");
  if (body.echo) throw invalid("'echo' is not supported: the prompt is not repeated in the answer.", "echo");
  if (body.best_of != null && body.best_of > 1)
    throw invalid("'best_of' above 1 is not supported: one completion is generated per request.", "best_of");
}

const finishReason = (result: GenerateResult): "stop" | "length" =>
  result.stopReason === "maxTokens" ? "length" : "stop";

export function createCompletionHandler({ core }: V1Context) {
  return async function completion(request: FastifyRequest, reply: FastifyReply) {
    const parsed = CompletionRequest.safeParse(request.body);
    if (!parsed.success) {
      const { message, param } = describeIssue(parsed.error);
      return sendOpenAiError(reply, invalid(message, param ?? ""));
    }
    const body = parsed.data;
    let prompt: string;
    let options: GenerateOptions;
    try {
      refuseUnsupported(body);
      prompt = promptOf(body);
      if (!core.generation.canComplete)
        throw new OpenAiError(
          501,
          "server_error",
          "not_implemented",
          "This engine cannot continue raw prompts; use /v1/chat/completions.",
        );
      const { loaded, resolved } = await resolveTurn(core, {
        model: body.model,
        adapters: body.adapters,
        routeText: prompt,
      });
      options = {
        ...samplingOptions(body, loaded),
        ...(body.logprobs != null ? { logprobs: { top: body.logprobs } } : {}),
        ...(resolved.adapters.length > 0 ? { adapters: resolved.adapters } : {}),
        kvPolicy: resolved.kvPolicy,
      };
    } catch (error) {
      return sendOpenAiError(reply, withParam(toOpenAiError(error), "prompt"));
    }
    sendSeed(reply, options);
    const meta = { id: newId("cmpl-"), created: nowSeconds(), model: body.model };
    const logprobsOf = (result: GenerateResult) =>
      options.logprobs ? legacyLogprobs(result.logprobs, prompt.length) : null;
    const signal = abortOnClose(reply);
    const run = (onToken?: (text: string) => void) =>
      core.generation.complete(prompt, options, onToken, signal);

    if (!body.stream) {
      try {
        // No token listener: the engine sends no tokens, only the result with the whole text.
        const result = await run();
        return reply.send({
          ...meta,
          object: "text_completion",
          choices: [
            {
              index: 0,
              text: result.text,
              logprobs: logprobsOf(result),
              finish_reason: finishReason(result),
            },
          ],
          usage: usageOf(result),
        });
      } catch (error) {
        return sendOpenAiError(reply, withEngineParam(withParam(toOpenAiError(error), "prompt"), options));
      }
    }

    const stream = new CompletionStream(reply, meta);
    try {
      const result = await withBatchedDeltas((t) => stream.text(t), run);
      stream.finish(
        finishReason(result),
        logprobsOf(result),
        body.stream_options?.include_usage ? usageOf(result) : null,
      );
    } catch (error) {
      const failure = withEngineParam(withParam(toOpenAiError(error), "prompt"), options);
      if (!stream.started) return sendOpenAiError(reply, failure);
      stream.fail(failure);
    }
    return reply;
  };
}

/**
 * `text_completion` chunks as OpenAI streams them: `choices[0].text` per piece, then one with
 * the finish reason (and the log-probabilities, which the engine reports with the result), an
 * optional usage chunk, `[DONE]`. Headers go out with the first piece, so an early failure
 * still gets its HTTP status.
 */
class CompletionStream {
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

  text(text: string): void {
    this.start();
    this.choice(text, null, null);
  }

  finish(
    reason: "stop" | "length",
    logprobs: ReturnType<typeof legacyLogprobs> | null,
    usage: ReturnType<typeof usageOf> | null,
  ): void {
    this.start();
    this.choice("", logprobs, reason);
    if (usage) this.write({ ...this.base(), choices: [], usage });
    this.end();
  }

  fail(error: OpenAiError): void {
    this.write(error.toBody());
    this.end();
  }

  private start(): void {
    if (!this.sse.open()) return;
  }

  private base() {
    return {
      id: this.meta.id,
      object: "text_completion",
      created: this.meta.created,
      model: this.meta.model,
    };
  }

  private choice(text: string, logprobs: unknown, finishReason: "stop" | "length" | null): void {
    this.write({ ...this.base(), choices: [{ index: 0, text, logprobs, finish_reason: finishReason }] });
  }

  private write(data: unknown): void {
    this.sse.send(data);
  }

  private end(): void {
    this.sse.end(true);
  }
}
