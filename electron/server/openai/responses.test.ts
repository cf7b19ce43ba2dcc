/**
 * POST /v1/responses against the fake engine: validation and its 400s, the translation of
 * Responses input items into engine turns, the Response object, and the SSE events in the
 * order the `openai` SDK's stream accumulator needs (it throws on any other order).
 */
import OpenAI from "openai";
import type { Response as OpenAiResponse, ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api";
import type { GenerateOptions, GenerateResult } from "../../core/engine/types";
import { FakeCore, listenForTest, readJson, type OpenAiErrorReply } from "../../../testing/server/test-core";

let server: Awaited<ReturnType<typeof listenForTest>>;
let client: OpenAI;
const core = new FakeCore();

beforeAll(async () => {
  server = await listenForTest(core);
  client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  vi.restoreAllMocks();
  await core.engine.load("/models/Tiny-Demo.Q8.gguf");
  core.engine.tokens = ["Hel", "lo", "!"];
  core.engine.hang = false;
  core.engine.failWith = null;
});

function post(body: unknown, signal?: AbortSignal) {
  return fetch(`${server.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
}

/** The SSE events of a streamed response; each `event:` line must name its data's `type`. */
async function events(res: Response): Promise<ResponseStreamEvent[]> {
  const blocks = (await res.text()).split("\n\n").filter(Boolean);
  return blocks.map((block) => {
    const [eventLine, dataLine] = block.split("\n");
    const data = JSON.parse(dataLine!.replace(/^data: /, "")) as ResponseStreamEvent;
    expect(eventLine).toBe(`event: ${data.type}`);
    return data;
  });
}

const hi = { model: "auto", input: "Hi" };
const timer: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "set_timer",
  description: "Start a timer",
  parameters: { type: "object", properties: { minutes: { type: "integer" } }, required: ["minutes"] },
  strict: false,
};

/** The fake engine's next generation ends with these calls after `text` (streamed first). */
function callsNext(text: string, calls: Array<{ name: string; arguments: unknown }>) {
  vi.spyOn(core.engine, "generate").mockImplementationOnce(async (_history, _options, onToken) => {
    if (text) onToken(text);
    await Promise.resolve();
    const result: GenerateResult = {
      text,
      stopReason: "toolCalls",
      toolCalls: calls,
      tokens: 9,
      ttftMs: 1,
      durationMs: 1,
      promptTokensEvaluated: 20,
      promptTokens: 20,
      contextTokens: 29,
      contextSize: 512,
    };
    return result;
  });
}

describe("POST /v1/responses validation", () => {
  const called = [
    { role: "user", content: "Set a timer" },
    { type: "function_call", call_id: "call_1", name: "set_timer", arguments: '{"minutes":1}' },
  ];
  it.each([
    [{ input: "Hi" }, "model"],
    [{ model: "auto" }, "input"],
    [{ model: "auto", input: [] }, "input"],
    [{ ...hi, temperature: 3 }, "temperature"],
    [{ ...hi, top_p: 2 }, "top_p"],
    [{ ...hi, max_output_tokens: 0 }, "max_output_tokens"],
    [{ ...hi, stream: "yes" }, "stream"],
    [{ model: "auto", input: [{ role: "bot", content: "x" }] }, "input[0].role"],
    [{ model: "auto", input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].type"],
    [
      { model: "auto", input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] },
      "input[0].content[0].type",
    ],
    [{ model: "auto", input: [{ type: "function_call", name: "x", arguments: "{}" }] }, "input[0].call_id"],
    [{ ...hi, tools: [{ type: "web_search" }] }, "tools[0].type"],
    [{ ...hi, tools: [{ type: "function", name: "rm -rf" }] }, "tools[0].name"],
    [{ ...hi, tools: [{ ...timer, parameters: { type: "string" } }] }, "tools[0].parameters"],
    [{ ...hi, tools: [timer, timer] }, "tools[1].name"],
    [{ ...hi, tools: [timer], tool_choice: { type: "function", name: "other" } }, "tool_choice"],
    [{ ...hi, tool_choice: "required" }, "tool_choice"],
    [{ ...hi, tool_choice: { type: "file_search" } }, "tool_choice.type"],
    [{ ...hi, text: { format: { type: "grammar" } } }, "text.format.type"],
    [
      {
        ...hi,
        text: { format: { type: "json_schema", name: "x", schema: { type: "object", properties: 5 } } },
      },
      "text.format.schema",
    ],
    [{ ...hi, tools: [timer], text: { format: { type: "json_object" } } }, "text.format"],
    [{ ...hi, previous_response_id: "resp_1" }, "previous_response_id"],
    [{ ...hi, conversation: "conv_1" }, "conversation"],
    [{ ...hi, background: true }, "background"],
    [{ ...hi, truncation: "auto" }, "truncation"],
    [{ ...hi, top_logprobs: 21 }, "top_logprobs"],
    [{ ...hi, tools: [timer], top_logprobs: 2 }, "top_logprobs"],
    [{ ...hi, tools: [timer], include: ["message.output_text.logprobs"] }, "include"],
    [{ ...hi, max_output_tokens: 100_000 }, "max_output_tokens"],
    // A call must get its output before the conversation goes on, and only once.
    [{ model: "auto", input: [...called, { role: "user", content: "and?" }] }, "input[1]"],
    [{ model: "auto", input: called }, "input[1]"],
    [
      {
        model: "auto",
        input: [
          { role: "user", content: "x" },
          { type: "function_call_output", call_id: "call_9", output: "1" },
        ],
      },
      "input[1].call_id",
    ],
    [
      {
        model: "auto",
        input: [
          ...called,
          { type: "function_call_output", call_id: "call_1", output: "ok" },
          { type: "function_call_output", call_id: "call_1", output: "ok" },
        ],
      },
      "input[3].call_id",
    ],
    [{ model: "auto", input: [...called, { ...called[1], arguments: "{}" }] }, "input[2].call_id"],
    // Nothing to answer: the input ends with the assistant.
    [
      {
        model: "auto",
        input: [
          { role: "user", content: "x" },
          { role: "assistant", content: "y" },
        ],
      },
      "input[1]",
    ],
  ])("rejects %j naming param %s", async (body, param) => {
    const before = core.engine.calls.length;
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(await readJson<OpenAiErrorReply>(res)).toEqual({
      error: {
        message: expect.any(String) as unknown,
        type: "invalid_request_error",
        param,
        code: "invalid_request",
      },
    });
    expect(core.engine.calls.length).toBe(before);
  });

  it("names an unknown field as OpenAI does, and the SDK reports it as a 400 with param", async () => {
    const res = await post({ ...hi, frobnicate: true });
    expect(await readJson<OpenAiErrorReply>(res)).toMatchObject({
      error: { message: "Unrecognized request argument supplied: frobnicate", param: "frobnicate" },
    });
    const error = await client.responses
      .create({ model: "auto", input: "Hi", frobnicate: 1 } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 400, param: "frobnicate" });
  });

  it("says why previous_response_id is refused: the server is stateless", async () => {
    const res = await post({ ...hi, previous_response_id: "resp_1" });
    const body = await readJson<OpenAiErrorReply>(res);
    expect(body.error.message).toContain("send the whole conversation in input");
  });

  it("accepts the fields that have no effect here and echoes metadata", async () => {
    const res = await post({
      ...hi,
      store: true,
      reasoning: { effort: "high", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      metadata: { run: "7" },
      client_metadata: { session: "abc" },
      user: "u1",
      safety_identifier: "s1",
      prompt_cache_key: "k",
      prompt_cache_retention: "24h",
      service_tier: "auto",
      truncation: "disabled",
      background: false,
      top_logprobs: 0,
      stream_options: { include_obfuscation: false },
      text: { verbosity: "low" },
    });
    expect(res.status).toBe(200);
    const body = await readJson<OpenAiResponse>(res);
    expect(body).toMatchObject({ status: "completed", metadata: { run: "7" }, store: false });
  });

  it("accepts a request shaped as Codex sends one, and streams the answer", async () => {
    const shell = {
      type: "function",
      name: "shell",
      description: "Runs a shell command and returns its output.",
      strict: false,
      parameters: {
        type: "object",
        properties: {
          command: { type: "array", items: { type: "string" } },
          workdir: { type: "string" },
          timeout_ms: { type: "number" },
        },
        required: ["command"],
        additionalProperties: false,
      },
    };
    const res = await post({
      model: "auto",
      instructions: "You are a coding agent.",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "<permissions>" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "List the files." }] },
        {
          type: "reasoning",
          summary: [{ type: "summary_text", text: "I should run ls." }],
          content: null,
          encrypted_content: null,
        },
        { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "call_a" },
        { type: "function_call_output", call_id: "call_a", output: "README.md\nsrc" },
      ],
      tools: [shell],
      tool_choice: "auto",
      parallel_tool_calls: false,
      reasoning: null,
      store: false,
      stream: true,
      include: [],
      prompt_cache_key: "0f7c3c1e-2b1a-4c55-9d7e-5d3c2b1a0f7c",
      text: { verbosity: "medium" },
      client_metadata: { originator: "codex_cli_rs" },
    });
    expect(res.status).toBe(200);
    const list = await events(res);
    expect(list.at(-1)?.type).toBe("response.completed");
    expect(core.engine.calls.at(-1)?.history.at(-1)).toEqual({
      role: "assistant",
      text: "",
      calls: [{ name: "shell", arguments: { command: ["ls"] }, result: "README.md\nsrc" }],
    });
  });

  it("answers 503 when no model is loaded", async () => {
    core.engine.loaded = null;
    const res = await post(hi);
    expect(res.status).toBe(503);
    expect(await readJson<OpenAiErrorReply>(res)).toMatchObject({ error: { code: "model_not_loaded" } });
  });
});

describe("POST /v1/responses answers", () => {
  it("returns a Response object the SDK reads, with exact usage", async () => {
    const response = await client.responses.create({ model: "auto", input: "Hi" });
    expect(response.output_text).toBe("Hello!");
    expect(response).toMatchObject({
      id: expect.stringMatching(/^resp_/) as unknown,
      object: "response",
      status: "completed",
      error: null,
      incomplete_details: null,
      model: "auto",
      temperature: 1,
      tools: [],
      tool_choice: "auto",
      output: [
        {
          type: "message",
          id: expect.stringMatching(/^msg_/) as unknown,
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Hello!", annotations: [] }],
        },
      ],
      // The fake's prompt is 7 tokens and its answer 3.
      usage: {
        input_tokens: 7,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 3,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 10,
      },
    });
    expect(response.created_at).toBeCloseTo(Date.now() / 1000, -1);
  });

  it("translates instructions and input items into the engine's turns", async () => {
    const res = await post({
      model: "auto",
      instructions: "Be brief.",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "Use minutes." }] },
        { role: "user", content: "Set a timer for 15 minutes" },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "opaque" },
        {
          type: "message",
          id: "msg_0",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Setting it.", annotations: [] }],
        },
        {
          type: "function_call",
          id: "fc_1",
          call_id: "call_1",
          name: "set_timer",
          arguments: '{"minutes":15}',
        },
        { type: "function_call", call_id: "call_2", name: "set_timer", arguments: '{"minutes":5}' },
        { type: "function_call_output", call_id: "call_2", output: "started 5" },
        { type: "function_call_output", call_id: "call_1", output: '{"ok":true}' },
      ],
      tools: [timer],
    });
    expect(res.status).toBe(200);
    expect(core.engine.calls.at(-1)?.history).toEqual([
      { role: "system", text: "Be brief." },
      { role: "system", text: "Use minutes." },
      { role: "user", text: "Set a timer for 15 minutes" },
      {
        role: "assistant",
        text: "Setting it.",
        calls: [
          { name: "set_timer", arguments: { minutes: 15 }, result: { ok: true } },
          { name: "set_timer", arguments: { minutes: 5 }, result: "started 5" },
        ],
      },
    ]);
    // The router decides on the last user message.
    expect(core.adapters.resolved.at(-1)?.text).toBe("Set a timer for 15 minutes");
  });

  it("keeps steps apart: calls after all outputs are the next step, a call among open ones joins them", async () => {
    const call = (id: string) => ({ type: "function_call", call_id: id, name: "set_timer", arguments: "{}" });
    const output = (id: string) => ({ type: "function_call_output", call_id: id, output: id });
    await post({
      model: "auto",
      input: [{ role: "user", content: "go" }, call("a"), output("a"), call("b"), output("b")],
    });
    expect(core.engine.calls.at(-1)?.history.slice(1)).toEqual([
      { role: "assistant", text: "", calls: [{ name: "set_timer", arguments: {}, result: "a" }] },
      { role: "assistant", text: "", calls: [{ name: "set_timer", arguments: {}, result: "b" }] },
    ]);
    const res = await post({
      model: "auto",
      input: [
        { role: "user", content: "go" },
        call("a"),
        call("b"),
        output("a"),
        call("c"),
        output("c"),
        output("b"),
      ],
    });
    expect(res.status).toBe(200);
    expect(core.engine.calls.at(-1)?.history[1]?.calls?.map((c) => c.result)).toEqual(["a", "b", "c"]);
  });

  it("passes samplers, the length, the text format and tools to the engine", async () => {
    await post({ ...hi, temperature: 0.5, top_p: 0.9, max_output_tokens: 12 });
    expect(core.engine.calls.at(-1)?.options).toMatchObject({ temperature: 0.5, topP: 0.9, maxTokens: 12 });
    core.engine.tokens = ["{}"];
    await post({ ...hi, text: { format: { type: "json_object" } } });
    expect(core.engine.calls.at(-1)?.options).toMatchObject({ json: true });
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    await post({ ...hi, text: { format: { type: "json_schema", name: "n", schema, strict: true } } });
    expect(core.engine.calls.at(-1)?.options.jsonSchema).toBeDefined();
    await post({
      ...hi,
      tools: [timer],
      tool_choice: { type: "function", name: "set_timer" },
      parallel_tool_calls: false,
    });
    expect(core.engine.calls.at(-1)?.options).toMatchObject({
      tools: [{ name: "set_timer", description: "Start a timer", parameters: timer.parameters }],
      toolChoice: { name: "set_timer" },
      parallelToolCalls: false,
    });
    await post({ ...hi, tools: [timer], tool_choice: "none" });
    expect(core.engine.calls.at(-1)?.options).not.toHaveProperty("tools");
  });

  it("reports log-probabilities in output_text when asked for", async () => {
    let asked: GenerateOptions["logprobs"];
    vi.spyOn(core.engine, "generate").mockImplementationOnce(async (_h, options, onToken) => {
      asked = options.logprobs;
      onToken("Hi");
      await Promise.resolve();
      return {
        text: "Hi",
        stopReason: "eos",
        tokens: 1,
        ttftMs: 1,
        durationMs: 1,
        promptTokensEvaluated: 7,
        promptTokens: 7,
        contextTokens: 8,
        contextSize: 512,
        logprobs: [
          {
            token: "Hi",
            logprob: -0.5,
            bytes: [72, 105],
            top: [{ token: "Ho", logprob: -1, bytes: [72, 111] }],
          },
        ],
      } satisfies GenerateResult;
    });
    const response = await client.responses.create({
      model: "auto",
      input: "Hi",
      include: ["message.output_text.logprobs"],
      top_logprobs: 1,
    });
    expect(asked).toEqual({ top: 1 });
    const message = response.output[0];
    if (message?.type !== "message") throw new Error("no message");
    expect(message.content[0]).toMatchObject({
      logprobs: [
        {
          token: "Hi",
          bytes: [72, 105],
          logprob: -0.5,
          top_logprobs: [{ token: "Ho", bytes: [72, 111], logprob: -1 }],
        },
      ],
    });
    await post({ ...hi, include: ["message.output_text.logprobs"] });
    expect(core.engine.calls.at(-1)?.options.logprobs).toEqual({ top: 0 });
    await post({ ...hi, include: ["reasoning.encrypted_content"] });
    expect(core.engine.calls.at(-1)?.options).not.toHaveProperty("logprobs");
  });

  it("is incomplete when max_output_tokens cut the answer", async () => {
    const response = await client.responses.create({ model: "auto", input: "Hi", max_output_tokens: 2 });
    expect(response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [{ type: "message", status: "incomplete" }],
      max_output_tokens: 2,
    });
    expect(response.output_text).toBe("Hello");
  });

  it("is incomplete when a JSON answer does not validate against the schema", async () => {
    core.engine.tokens = ['{"n":', '"x"}'];
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    const res = await post({ ...hi, text: { format: { type: "json_schema", name: "n", schema } } });
    expect(await readJson<OpenAiResponse>(res)).toMatchObject({ status: "incomplete" });
  });

  it("returns the model's calls as function_call items after its text", async () => {
    callsNext("On it.", [{ name: "set_timer", arguments: { minutes: 5 } }]);
    const response = await client.responses.create({
      model: "auto",
      input: "Set a timer for 5 minutes",
      tools: [timer],
    });
    expect(response.status).toBe("completed");
    expect(response.output).toEqual([
      expect.objectContaining({ type: "message", content: [expect.objectContaining({ text: "On it." })] }),
      {
        type: "function_call",
        id: expect.stringMatching(/^fc_/) as unknown,
        call_id: expect.stringMatching(/^call_/) as unknown,
        name: "set_timer",
        arguments: '{"minutes":5}',
        status: "completed",
      },
    ]);
    expect(response.usage).toMatchObject({ input_tokens: 20, output_tokens: 9, total_tokens: 29 });
  });

  it("has only function_call items when the model only calls", async () => {
    callsNext("", [
      { name: "set_timer", arguments: { minutes: 5 } },
      { name: "set_timer", arguments: { minutes: 6 } },
    ]);
    const res = await post({ ...hi, tools: [timer] });
    const body = await readJson<OpenAiResponse>(res);
    expect(body.output.map((o) => o.type)).toEqual(["function_call", "function_call"]);
  });

  it("is a 500, never a call handed on, when the model's call breaks its tool's schema", async () => {
    callsNext("", [{ name: "set_timer", arguments: { minutes: "soon" } }]);
    const res = await post({ ...hi, tools: [timer] });
    expect(res.status).toBe(500);
    expect(await readJson<OpenAiErrorReply>(res)).toMatchObject({ error: { code: "invalid_tool_call" } });
  });

  it("maps engine errors to OpenAI statuses", async () => {
    core.engine.failWith = new ApiError("context_length_exceeded", "The prompt does not fit.");
    const res = await post(hi);
    expect(res.status).toBe(400);
    expect(await readJson<OpenAiErrorReply>(res)).toMatchObject({
      error: { code: "context_length_exceeded", param: "input" },
    });
  });
});

describe("POST /v1/responses streaming", () => {
  it("sends the events in the Responses order, numbered, with the deltas adding up", async () => {
    const res = await post({ ...hi, stream: true });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const list = await events(res);
    // The text deltas, however the pieces were merged (withBatchedDeltas).
    const deltas = list.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(list.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...deltas.map(() => "response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(list.map((e) => e.sequence_number)).toEqual(list.map((_, i) => i));
    expect(deltas[0]).toBe("Hel"); // the first piece at once, then the rest in order
    expect(deltas.join("")).toBe("Hello!");
    expect(list[0]).toMatchObject({ response: { status: "in_progress", output: [] } });
    expect(list.at(-1)).toMatchObject({
      response: {
        status: "completed",
        output: [{ type: "message", content: [{ type: "output_text", text: "Hello!" }] }],
        usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 },
      },
    });
    const ids = new Set(list.flatMap((e) => ("item_id" in e ? [e.item_id] : [])));
    expect(ids.size).toBe(1);
  });

  it("ends with response.incomplete when the answer was cut", async () => {
    const list = await events(await post({ ...hi, stream: true, max_output_tokens: 1 }));
    expect(list.at(-1)).toMatchObject({
      type: "response.incomplete",
      response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } },
    });
  });

  it("streams a call as its own item with its arguments", async () => {
    callsNext("", [{ name: "set_timer", arguments: { minutes: 5 } }]);
    const list = await events(await post({ ...hi, stream: true, tools: [timer] }));
    expect(list.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(list[2]).toMatchObject({
      output_index: 0,
      item: { type: "function_call", arguments: "", status: "in_progress" },
    });
    expect(list[4]).toMatchObject({ name: "set_timer", arguments: '{"minutes":5}' });
    expect(list.at(-1)).toMatchObject({
      response: { output: [{ type: "function_call", name: "set_timer", arguments: '{"minutes":5}' }] },
    });
  });

  it("is what the SDK's responses.stream accumulates, text then call", async () => {
    callsNext("On it.", [{ name: "set_timer", arguments: { minutes: 5 } }]);
    const stream = client.responses.stream({
      model: "auto",
      input: "Hi",
      tools: [timer],
    });
    const types: string[] = [];
    stream.on("event", (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("On it.");
    expect(final.output.map((o) => o.type)).toEqual(["message", "function_call"]);
    expect(final.output[1]).toMatchObject({ call_id: expect.stringMatching(/^call_/) as unknown });
    expect(types).toContain("response.function_call_arguments.done");
    expect(types.at(-1)).toBe("response.completed");
  });

  it("answers with a real status when the engine fails before the first token", async () => {
    core.engine.failWith = new ApiError("busy", "A generation is running");
    const res = await post({ ...hi, stream: true });
    expect(res.status).toBe(429);
    expect(await readJson<OpenAiErrorReply>(res)).toMatchObject({ error: { type: "rate_limit_error" } });
  });

  it("ends with an error event and response.failed when the engine fails mid-answer", async () => {
    vi.spyOn(core.engine, "generate").mockImplementationOnce(async (_h, _o, onToken) => {
      onToken("Hel");
      await Promise.resolve();
      throw new ApiError("engine_crashed", "The engine stopped.");
    });
    const list = await events(await post({ ...hi, stream: true }));
    expect(list.slice(-2)).toMatchObject([
      { type: "error", code: "engine_crashed", message: "The engine stopped." },
      { type: "response.failed", response: { status: "failed", error: { code: "server_error" } } },
    ]);
    vi.spyOn(core.engine, "generate").mockImplementationOnce(async (_h, _o, onToken) => {
      onToken("Hel");
      await Promise.resolve();
      throw new ApiError("engine_crashed", "The engine stopped.");
    });
    await expect(client.responses.stream({ model: "auto", input: "Hi" }).finalResponse()).rejects.toThrow();
  });

  it("aborts the generation when the client disconnects mid-stream", async () => {
    core.engine.hang = true;
    const controller = new AbortController();
    const res = await post({ ...hi, stream: true }, controller.signal);
    const reader = res.body!.getReader();
    await reader.read(); // the first events: the stream is live
    const signal = core.engine.calls.at(-1)?.signal;
    expect(signal?.aborted).toBe(false);
    controller.abort();
    await vi.waitFor(() => expect(signal?.aborted).toBe(true));
  });
});
