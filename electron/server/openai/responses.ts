/**
 * POST /v1/responses: OpenAI's Responses API, the subset Codex-style coding agents and the
 * `openai` SDK's `client.responses.create/stream` use, whole or as SSE events.
 *
 * The server is stateless: every request carries the whole conversation in `input`, which is
 * translated into the chat-shaped messages /v1/chat/completions reads (instructions → system,
 * function_call items → an assistant message's tool_calls, function_call_output → tool
 * messages), so that tool calls, results and their checks are the same code on both endpoints
 * (tool-calls.ts). Nothing is stored: `store` is accepted and `previous_response_id` refused.
 */
import { grammarConflictMessage } from "../../../common/generate-rules";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ResolvedSelection } from "../../core/core-types";
import type { ChatTurn, GenerateOptions, GenerateResult, TokenLogprob } from "../../core/engine/types";
import { OpenAiError, sendOpenAiError } from "./errors";
import {
  describeResponsesIssue,
  ResponsesRequest,
  unsupportedField,
  type ResponsesContentPart,
  type ResponsesRequest as Request,
} from "./responses-schemas";
import {
  responseFormatOptions,
  samplingOptions,
  sendSeed,
  structuredAnswerOk,
  type ResponseFormat,
  type StructuredCheck,
} from "./sampling";
import {
  historyTurns,
  responseToolCalls,
  toolRequest,
  type HistoryMessage,
  type OpenAiToolCall,
  type ToolRequest,
} from "./tool-calls";
import {
  abortOnClose,
  checkMaxTokens,
  newId,
  nowSeconds,
  resolveTurn,
  toOpenAiError,
  usageOf,
  withParam,
  type V1Context,
} from "./turn";
import { SseChannel, withBatchedDeltas } from "./sse";

function invalid(message: string, param: string | null): OpenAiError {
  return new OpenAiError(400, "invalid_request_error", "invalid_request", message, param);
}

/** Content parts as text; a refusal in an earlier answer is what the assistant said. */
function partsText(content: string | readonly ResponsesContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "refusal" ? p.refusal : p.text)).join("\n");
}

/** `input` as chat-shaped messages, and the text the router decides on (the last user message). */
interface Conversation {
  messages: HistoryMessage[];
  routeText: string;
}

/**
 * The request's instructions and input as chat messages. Consecutive function_call items (and
 * an assistant message just before them) become one assistant message with tool_calls, the
 * function_call_output items after them its tool messages, in any order. Each call must get exactly one
 * output before the next message, as OpenAI requires; the checks name `input[i]`, since the
 * client never sent the messages historyTurns would name.
 */
export function conversationOf(body: Pick<Request, "input" | "instructions">): Conversation {
  const messages: HistoryMessage[] = [];
  if (body.instructions) messages.push({ role: "system", content: body.instructions });
  const items =
    typeof body.input === "string"
      ? [{ type: "message" as const, role: "user" as const, content: body.input }]
      : body.input;
  /** The assistant message that function_call items join, until a result or a message comes. */
  let calling: Extract<HistoryMessage, { role: "assistant" }> | null = null;
  /** Calls still waiting for their output: call_id → input index. */
  const open = new Map<string, number>();
  /** The call_ids already answered, for a second output's message. */
  const answered = new Set<string>();
  let routeText = "";
  let last: { role: string; at: number } | null = null;

  const closeCalls = (at: number) => {
    const [first] = open;
    if (!first) return;
    const [callId, callAt] = first;
    throw invalid(
      `No function_call_output for the function_call '${callId}' at input[${callAt}] before input[${at}]; every call needs its output.`,
      `input[${callAt}]`,
    );
  };

  for (const [i, item] of items.entries()) {
    switch (item.type) {
      case "reasoning":
        // A reasoning item from another model's earlier turn: this model has nothing to do with it.
        continue;
      case "function_call": {
        if (open.has(item.call_id) || answered.has(item.call_id)) {
          throw invalid(`Two function_call items have the call_id '${item.call_id}'.`, `input[${i}].call_id`);
        }
        if (!calling) {
          calling = { role: "assistant", content: "", tool_calls: [] };
          messages.push(calling);
        }
        calling.tool_calls = [
          ...(calling.tool_calls ?? []),
          { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } },
        ];
        open.set(item.call_id, i);
        last = { role: "function_call", at: i };
        continue;
      }
      case "function_call_output": {
        if (!open.has(item.call_id)) {
          throw invalid(
            answered.has(item.call_id)
              ? `input[${i}] is a second output for the call '${item.call_id}'.`
              : `input[${i}] is the output of '${item.call_id}', but no function_call item before it has that call_id.`,
            `input[${i}].call_id`,
          );
        }
        open.delete(item.call_id);
        answered.add(item.call_id);
        // Once every call has its output, a call after them is the model's next step. While some
        // still wait, a call joins them: the engine's history has no place for a call between
        // the outputs of one step.
        if (open.size === 0) calling = null;
        messages.push({
          role: "tool",
          tool_call_id: item.call_id,
          content: partsText(item.output),
        });
        last = { role: "function_call_output", at: i };
        continue;
      }
      default: {
        closeCalls(i);
        const text = partsText(item.content);
        if (item.role === "assistant") {
          calling = { role: "assistant", content: text };
          messages.push(calling);
        } else {
          calling = null;
          messages.push({ role: item.role, content: text });
          if (item.role === "user") routeText = text;
        }
        last = { role: item.role, at: i };
      }
    }
  }
  closeCalls(items.length);
  if (last?.role !== "user" && last?.role !== "function_call_output") {
    throw invalid(
      "The input must end with a user message, or with function_call_output items to answer.",
      last ? `input[${last.at}]` : "input",
    );
  }
  return { messages, routeText };
}

/** The request's tools in the chat form toolRequest reads; its errors re-pointed at `tools[i].name`. */
function responsesToolRequest(body: Request): ToolRequest {
  const choice = body.tool_choice;
  try {
    return toolRequest({
      tools: (body.tools ?? []).map((t) => ({
        type: "function" as const,
        function: {
          name: t.name,
          ...(t.description != null ? { description: t.description } : {}),
          ...(t.parameters != null ? { parameters: t.parameters } : {}),
        },
      })),
      tool_choice:
        typeof choice === "object" && choice ? { type: "function", function: { name: choice.name } } : choice,
      parallel_tool_calls: body.parallel_tool_calls,
    });
  } catch (error) {
    if (!(error instanceof OpenAiError)) throw error;
    const flat = (s: string) => s.replace(/(tools\[\d+\])\.function\./g, "$1.");
    throw new OpenAiError(
      error.status,
      error.type,
      error.code,
      flat(error.message),
      error.param && flat(error.param),
    );
  }
}

/** `text.format` as the engine's json / jsonSchema options, its errors naming `text.format.schema`. */
function textFormatOptions(body: Request): ReturnType<typeof responseFormatOptions> {
  const format = body.text?.format;
  const chatShaped: ResponseFormat | null =
    format?.type === "json_schema"
      ? {
          type: "json_schema",
          json_schema: {
            name: format.name,
            schema: format.schema,
            ...(format.description != null ? { description: format.description } : {}),
            ...(format.strict != null ? { strict: format.strict } : {}),
          },
        }
      : (format ?? null);
  try {
    return responseFormatOptions(chatShaped, "text.format");
  } catch (error) {
    if (!(error instanceof OpenAiError)) throw error;
    const flat = (s: string) => s.replaceAll("text.format.json_schema.schema", "text.format.schema");
    throw new OpenAiError(
      error.status,
      error.type,
      error.code,
      flat(error.message),
      error.param && flat(error.param),
    );
  }
}

/** The include entry that asks for the answer's log-probabilities (OpenAI's name). */
const LOGPROBS_INCLUDE = "message.output_text.logprobs";

/**
 * Log-probabilities when the request asks for them (`top_logprobs` above 0, or the include).
 * The engine scores a plain-text answer only, so asking for them together with tools is a 400,
 * never an empty list.
 */
function logprobsOptions(body: Request, tools: ToolRequest): Pick<GenerateOptions, "logprobs"> {
  const top = body.top_logprobs ?? 0;
  if (top === 0 && !body.include?.includes(LOGPROBS_INCLUDE)) return {};
  if (tools.tools) {
    throw invalid(
      "Log-probabilities are reported for text answers only: send them without 'tools' (or with tool_choice 'none').",
      top > 0 ? "top_logprobs" : "include",
    );
  }
  return { logprobs: { top } };
}

/** OpenAI's output_text.logprobs form. */
function responsesLogprobs(logprobs: readonly TokenLogprob[] | undefined) {
  return (logprobs ?? []).map((entry) => ({
    token: entry.token,
    bytes: entry.bytes,
    logprob: entry.logprob,
    top_logprobs: entry.top.map((alt) => ({ token: alt.token, bytes: alt.bytes, logprob: alt.logprob })),
  }));
}
type Logprobs = ReturnType<typeof responsesLogprobs>;

/** What one generation produced, as the Responses API reports it. */
interface Outcome {
  text: string;
  logprobs: Logprobs;
  calls: OpenAiToolCall[];
  /** "incomplete": cut at max_output_tokens (or the context), or a structured answer cut short. */
  status: "completed" | "incomplete";
  usage: ReturnType<typeof responsesUsage>;
}

/**
 * OpenAI's usage shape from the engine's counts. `cached_tokens`: the prompt tokens the engine
 * did not evaluate again because its KV cache held them.
 */
function responsesUsage(result: GenerateResult) {
  const counts = usageOf(result);
  return {
    input_tokens: counts.prompt_tokens,
    input_tokens_details: {
      cached_tokens: Math.max(0, counts.prompt_tokens - result.promptTokensEvaluated),
    },
    output_tokens: counts.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: counts.total_tokens,
  };
}

function outcomeOf(
  result: GenerateResult,
  streamed: string,
  tools: ToolRequest,
  structured: StructuredCheck,
): Outcome {
  const calls =
    result.stopReason === "toolCalls" && result.toolCalls?.length
      ? responseToolCalls(result.toolCalls, tools)
      : [];
  // With calls, the result's text is what came before them (never the call's own syntax).
  const text = calls.length > 0 ? result.text : result.text || streamed;
  // A structured answer that does not parse or validate was cut short: incomplete, never made up.
  const cut =
    result.stopReason === "maxTokens" || (calls.length === 0 && !structuredAnswerOk(text, structured));
  return {
    text,
    logprobs: responsesLogprobs(result.logprobs),
    calls,
    status: cut ? "incomplete" : "completed",
    usage: responsesUsage(result),
  };
}

type OutputItem = ReturnType<typeof messageItem> | ReturnType<typeof callItem>;

function messageItem(
  id: string,
  text: string,
  status: "in_progress" | "completed" | "incomplete",
  logprobs: Logprobs = [],
) {
  return {
    type: "message" as const,
    id,
    status,
    role: "assistant" as const,
    content: text === "" && status === "in_progress" ? [] : [textPart(text, logprobs)],
  };
}

function textPart(text: string, logprobs: Logprobs = []) {
  return { type: "output_text" as const, text, annotations: [] as never[], logprobs };
}

function callItem(id: string, call: OpenAiToolCall, status: "in_progress" | "completed") {
  return {
    type: "function_call" as const,
    id,
    call_id: call.id,
    name: call.function.name,
    arguments: status === "in_progress" ? "" : call.function.arguments,
    status,
  };
}

/** The response's items: the text (when there is any, or nothing else), then each call. */
function outputItems(outcome: Outcome, messageId: string, callIds: readonly string[]): OutputItem[] {
  const items: OutputItem[] = [];
  if (outcome.text !== "" || outcome.calls.length === 0) {
    items.push(messageItem(messageId, outcome.text, outcome.status, outcome.logprobs));
  }
  outcome.calls.forEach((call, i) => items.push(callItem(callIds[i] ?? newId("fc_"), call, "completed")));
  return items;
}

interface ResponseMeta {
  id: string;
  createdAt: number;
  body: Request;
  temperature: number;
  routing: ResolvedSelection["routing"];
}

/**
 * The Response object. The request's settings are echoed as OpenAI echoes them (the SDK's
 * types expect every field); `store` is false because nothing is ever stored.
 */
function responseObject(
  meta: ResponseMeta,
  state: {
    status: "in_progress" | "completed" | "incomplete" | "failed";
    output: OutputItem[];
    usage: Outcome["usage"] | null;
    error: { code: string; message: string } | null;
  },
) {
  const { body } = meta;
  return {
    id: meta.id,
    object: "response" as const,
    created_at: meta.createdAt,
    status: state.status,
    background: false,
    completed_at: state.status === "completed" ? nowSeconds() : null,
    error: state.error,
    incomplete_details: state.status === "incomplete" ? { reason: "max_output_tokens" as const } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: body.model,
    output: state.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: false,
    temperature: meta.temperature,
    text: { format: body.text?.format ?? { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: (body.tools ?? []).map((t) => ({
      type: "function" as const,
      name: t.name,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: t.strict ?? true,
    })),
    top_p: body.top_p ?? 1,
    truncation: "disabled" as const,
    usage: state.usage,
    user: body.user ?? null,
    // Non-standard: which adapters answered and why (clients ignore unknown fields).
    routing: meta.routing,
  };
}

export function createResponsesHandler({ core }: V1Context) {
  return async function responses(request: FastifyRequest, reply: FastifyReply) {
    const parsed = ResponsesRequest.safeParse(request.body);
    if (!parsed.success) {
      const { message, param } = describeResponsesIssue(parsed.error);
      return sendOpenAiError(reply, invalid(message, param));
    }
    const body = parsed.data;
    const unsupported = unsupportedField(body);
    if (unsupported) return sendOpenAiError(reply, invalid(unsupported.message, unsupported.param));

    // Everything is checked before anything is generated: calls matched to outputs, tools'
    // schemas, the text format, the model and the length.
    let history: ChatTurn[];
    let tools: ToolRequest;
    let options: GenerateOptions;
    let structured: StructuredCheck;
    let resolved: ResolvedSelection;
    try {
      const conversation = conversationOf(body);
      history = historyTurns(conversation.messages);
      tools = responsesToolRequest(body);
      const format = textFormatOptions(body);
      structured = format.check;
      const conflict = grammarConflictMessage(
        { ...format.options, tools: tools.tools },
        { tools: "tools", json: "text.format", jsonSchema: "text.format" },
      );
      if (conflict) throw invalid(conflict.message, conflict.field);
      const turn = await resolveTurn(core, {
        model: body.model,
        adapters: body.adapters,
        routeText: conversation.routeText,
      });
      resolved = turn.resolved;
      checkMaxTokens(body.max_output_tokens, turn.loaded, "max_output_tokens");
      const toolFormat = tools.tools ? resolved.toolFormat : undefined;
      const logprobs = logprobsOptions(body, tools);
      options = {
        ...samplingOptions(
          { temperature: body.temperature, top_p: body.top_p, max_tokens: body.max_output_tokens },
          turn.loaded,
        ),
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
    const meta: ResponseMeta = {
      id: newId("resp_"),
      createdAt: nowSeconds(),
      body,
      temperature: options.temperature,
      routing: resolved.routing,
    };
    const messageId = newId("msg_");

    // A client that goes away must not keep the engine busy (nor wait in the queue).
    const signal = abortOnClose(reply);
    const generate = (onToken?: (text: string) => void) =>
      core.generation.generate(history, options, onToken, signal);

    if (!body.stream) {
      try {
        // No token listener: the engine sends no tokens, only the result with the whole text.
        const result = await generate();
        const outcome = outcomeOf(result, result.text, tools, structured);
        const callIds = outcome.calls.map(() => newId("fc_"));
        return reply.send(
          responseObject(meta, {
            status: outcome.status,
            output: outputItems(outcome, messageId, callIds),
            usage: outcome.usage,
            error: null,
          }),
        );
      } catch (error) {
        return sendOpenAiError(reply, withParam(toOpenAiError(error), "input"));
      }
    }

    const stream = new ResponsesSse(reply, meta, messageId);
    try {
      const result = await withBatchedDeltas((t) => stream.delta(t), generate);
      // The client went away mid-answer: nobody is left to read the rest.
      if (signal.aborted && stream.started) {
        stream.close();
        return reply;
      }
      stream.finish(outcomeOf(result, stream.text, tools, structured));
    } catch (error) {
      const failure = withParam(toOpenAiError(error), "input");
      // Before the first byte the client still gets a proper status; afterwards only an error event.
      if (!stream.started) return sendOpenAiError(reply, failure);
      stream.fail(failure);
    }
    return reply;
  };
}

/**
 * Writes the Responses API's SSE events (`event: <type>` and `data:` with `type` and
 * `sequence_number`), in the order the SDK's accumulator expects: created, in_progress, then per
 * output item added → (content part added → text deltas → text done → part done | arguments
 * delta → arguments done) → item done, then completed or incomplete. Headers go out with the
 * first token, so a request that fails at once (busy, crashed) still gets a real HTTP status.
 */
class ResponsesSse {
  private readonly sse: SseChannel;
  /** The text streamed so far (the message item's text). */
  text = "";
  private sequence = 0;
  private messageOpen = false;
  private readonly output: OutputItem[] = [];

  constructor(
    reply: FastifyReply,
    private readonly meta: ResponseMeta,
    private readonly messageId: string,
  ) {
    this.sse = new SseChannel(reply);
  }

  get started(): boolean {
    return this.sse.started;
  }

  delta(text: string): void {
    if (text === "") return;
    this.start();
    this.openMessage();
    this.text += text;
    this.event("response.output_text.delta", {
      item_id: this.messageId,
      output_index: 0,
      content_index: 0,
      delta: text,
      logprobs: [],
    });
  }

  finish(outcome: Outcome): void {
    this.start();
    // A message item when text was streamed, or when there is nothing else to show.
    if (this.messageOpen || outcome.calls.length === 0) {
      this.openMessage();
      // The engine scores the answer once it is whole: the log-probabilities come with the done events.
      const part = textPart(this.text, outcome.logprobs);
      const item = messageItem(this.messageId, this.text, outcome.status, outcome.logprobs);
      this.event("response.output_text.done", {
        item_id: this.messageId,
        output_index: 0,
        content_index: 0,
        text: this.text,
        logprobs: outcome.logprobs,
      });
      this.event("response.content_part.done", {
        item_id: this.messageId,
        output_index: 0,
        content_index: 0,
        part,
      });
      this.event("response.output_item.done", { output_index: 0, item });
      this.output[0] = item;
    }
    // The engine parses a call whole, so its arguments come in one delta.
    for (const call of outcome.calls) {
      const id = newId("fc_");
      const outputIndex = this.output.length;
      this.event("response.output_item.added", {
        output_index: outputIndex,
        item: callItem(id, call, "in_progress"),
      });
      this.event("response.function_call_arguments.delta", {
        item_id: id,
        output_index: outputIndex,
        delta: call.function.arguments,
      });
      this.event("response.function_call_arguments.done", {
        item_id: id,
        output_index: outputIndex,
        name: call.function.name,
        arguments: call.function.arguments,
      });
      const item = callItem(id, call, "completed");
      this.event("response.output_item.done", { output_index: outputIndex, item });
      this.output.push(item);
    }
    const type = outcome.status === "completed" ? "response.completed" : "response.incomplete";
    this.event(type, {
      response: responseObject(this.meta, {
        status: outcome.status,
        output: this.output,
        usage: outcome.usage,
        error: null,
      }),
    });
    this.close();
  }

  /** An `error` event in OpenAI's shape, then response.failed, so the SDK's stream ends with the reason. */
  fail(error: OpenAiError): void {
    this.event("error", { code: error.code, message: error.message, param: error.param });
    this.event("response.failed", {
      response: responseObject(this.meta, {
        status: "failed",
        output: this.output,
        usage: null,
        error: {
          code: error.status === 429 ? "rate_limit_exceeded" : "server_error",
          message: error.message,
        },
      }),
    });
    this.close();
  }

  close(): void {
    this.sse.end();
  }

  private start(): void {
    if (!this.sse.open()) return;
    const response = responseObject(this.meta, {
      status: "in_progress",
      output: [],
      usage: null,
      error: null,
    });
    this.event("response.created", { response });
    this.event("response.in_progress", { response });
  }

  private openMessage(): void {
    if (this.messageOpen) return;
    this.messageOpen = true;
    this.event("response.output_item.added", {
      output_index: 0,
      item: messageItem(this.messageId, "", "in_progress"),
    });
    this.event("response.content_part.added", {
      item_id: this.messageId,
      output_index: 0,
      content_index: 0,
      part: textPart(""),
    });
    this.output[0] = messageItem(this.messageId, "", "in_progress");
  }

  private event(type: string, data: Record<string, unknown>): void {
    this.sse.send({ type, sequence_number: this.sequence++, ...data }, type);
  }
}
