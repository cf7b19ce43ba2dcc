/**
 * POST /v1/messages with the scripted engine: Anthropic's validation, the request mapped onto
 * the engine, the response and stream shapes, errors in Anthropic's shape.
 */
import type { Message, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages/messages";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api";
import type { GenerateResult } from "../../core/engine/types";
import { FakeCore, listenForTest, readJson } from "../../../testing/server/test-core";
import type { AnthropicErrorBody } from "./errors";

let server: Awaited<ReturnType<typeof listenForTest>>;
const core = new FakeCore();

beforeAll(async () => {
  server = await listenForTest(core);
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

function post(body: unknown, init: { signal?: AbortSignal; headers?: Record<string, string> } = {}) {
  return fetch(`${server.url}/v1/messages`, {
    method: "POST",
    headers: {
      "x-api-key": server.apiKey,
      "anthropic-version": "2023-06-01",
      "content-type": "application/json",
      ...init.headers,
    },
    body: JSON.stringify(body),
    signal: init.signal,
  });
}

const hello = { model: "auto", max_tokens: 16, messages: [{ role: "user", content: "Hi" }] };

const timer = {
  name: "set_timer",
  description: "Start a timer",
  input_schema: { type: "object", properties: { minutes: { type: "integer" } }, required: ["minutes"] },
};

/** An SSE body as (event name, data) pairs, checking each data's `type` is its event's name. */
function events(text: string): RawMessageStreamEvent[] {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((frame) => {
      const [eventLine, dataLine, ...rest] = frame.split("\n");
      expect(rest).toEqual([]);
      const name = eventLine!.replace(/^event: /, "");
      const data = JSON.parse(dataLine!.replace(/^data: /, "")) as RawMessageStreamEvent;
      expect(data.type).toBe(name);
      return data;
    });
}

/** The engine's next answer is these calls (after `text`), as the real engine reports them. */
function nextAnswerCalls(calls: GenerateResult["toolCalls"], text = "") {
  vi.spyOn(core.engine, "generate").mockImplementationOnce((history, options, onToken) => {
    core.engine.calls.push({ history, options });
    if (text) onToken(text);
    return Promise.resolve({
      text,
      stopReason: "toolCalls",
      toolCalls: calls,
      tokens: 9,
      ttftMs: 1,
      durationMs: 1,
      promptTokensEvaluated: 30,
      promptTokens: 30,
      contextTokens: 39,
      contextSize: 512,
    });
  });
}

async function expectInvalid(res: Response, pattern: RegExp) {
  expect(res.status).toBe(400);
  const body = await readJson<AnthropicErrorBody>(res);
  expect(body).toEqual({
    type: "error",
    error: { type: "invalid_request_error", message: expect.any(String) as unknown },
  });
  expect(body.error.message).toMatch(pattern);
}

describe("POST /v1/messages validation", () => {
  const user = (content: unknown) => ({ ...hello, messages: [{ role: "user", content }] });
  it.each([
    ["no max_tokens", { model: "auto", messages: hello.messages }, /^max_tokens: /],
    ["no model", { max_tokens: 5, messages: hello.messages }, /^model: /],
    ["no messages", { ...hello, messages: [] }, /^messages: /],
    ["max_tokens 0", { ...hello, max_tokens: 0 }, /^max_tokens: /],
    ["an unknown field", { ...hello, frequency_penalty: 1 }, /Unknown field 'frequency_penalty'/],
    [
      "an unknown field in a block",
      user([{ type: "text", text: "x", colour: "red" }]),
      /Unknown field 'messages\.0\.content\.0\.colour'/,
    ],
    [
      "a system role message",
      { ...hello, messages: [{ role: "system", content: "x" }] },
      /^messages\.0\.role: /,
    ],
    ["temperature above 1", { ...hello, temperature: 1.5 }, /^temperature: /],
    ["top_p above 1", { ...hello, top_p: 2 }, /^top_p: /],
    ["top_k 0", { ...hello, top_k: 0 }, /^top_k: /],
    ["stream not a boolean", { ...hello, stream: "yes" }, /^stream: /],
    ["stop_sequences a string", { ...hello, stop_sequences: "\n" }, /^stop_sequences: /],
    [
      "an image block",
      user([{ type: "image", source: { type: "base64", media_type: "image/png", data: "" } }]),
      /'image' content blocks are not supported/,
    ],
    [
      "a document block",
      user([{ type: "document", source: { type: "text", data: "x" } }]),
      /'document' content blocks are not supported/,
    ],
    ["an unknown block type", user([{ type: "video" }]), /^messages\.0\.content\.0\.type: /],
    [
      "a server tool",
      { ...hello, tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }] },
      /^tools\.0\.type: only custom tools/,
    ],
    ["a tool name with spaces", { ...hello, tools: [{ ...timer, name: "set timer" }] }, /^tools\.0\.name: /],
    [
      "an input_schema not of type object",
      { ...hello, tools: [{ ...timer, input_schema: { type: "array" } }] },
      /^tools\.0\.input_schema\.type: /,
    ],
    [
      "an input_schema ajv refuses",
      { ...hello, tools: [{ ...timer, input_schema: { type: "object", required: 5 } }] },
      /^tools\.0\.input_schema: .*invalid/,
    ],
    [
      "two tools of one name",
      { ...hello, tools: [timer, timer] },
      /^tools\.1\.name: two tools are named "set_timer"/,
    ],
    [
      "an unknown tool_choice type",
      { ...hello, tools: [timer], tool_choice: { type: "some" } },
      /^tool_choice\.type: /,
    ],
    [
      "a tool_choice naming a missing tool",
      { ...hello, tools: [timer], tool_choice: { type: "tool", name: "nope" } },
      /^tool_choice: tool_choice names "nope", which is not among the tools/,
    ],
    [
      "tool_choice any without tools",
      { ...hello, tool_choice: { type: "any" } },
      /^tool_choice: tool_choice "any" needs at least one tool in tools/,
    ],
    // Anthropic's API refuses any tool_choice but none without tools, auto too (OpenAI's allows it).
    [
      "tool_choice auto without tools",
      { ...hello, tool_choice: { type: "auto" } },
      /^tool_choice: tool_choice "auto" needs at least one tool in tools/,
    ],
    [
      "thinking enabled",
      { ...hello, thinking: { type: "enabled", budget_tokens: 1024 } },
      /^thinking\.type: extended thinking is not supported/,
    ],
    [
      "an assistant message last",
      { ...hello, messages: [{ role: "assistant", content: "Hi" }] },
      /last message/,
    ],
  ])("refuses %s with 400 naming the field, before any generation", async (_, body, pattern) => {
    const before = core.engine.calls.length;
    await expectInvalid(await post(body), pattern);
    expect(core.engine.calls.length).toBe(before);
  });

  const used = {
    role: "assistant",
    content: [
      { type: "text", text: "Setting it." },
      { type: "tool_use", id: "toolu_1", name: "set_timer", input: { minutes: 15 } },
    ],
  };
  it.each([
    [
      "a tool_use without its result",
      [hello.messages[0], used, { role: "user", content: "Well?" }],
      /^messages\.1: tool_use ids were found without tool_result blocks .*toolu_1/,
    ],
    [
      "a tool_result for an unknown id",
      [hello.messages[0], used, { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9" }] }],
      /^messages\.2\.content\.0\.tool_use_id: 'toolu_9' answers no tool_use of messages\.1/,
    ],
    [
      "a tool_result with no tool_use before it",
      [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "x" }] }],
      /^messages\.0\.content\.0\.tool_use_id: /,
    ],
    [
      "a tool_result after text",
      [
        hello.messages[0],
        used,
        {
          role: "user",
          content: [
            { type: "text", text: "Here:" },
            { type: "tool_result", tool_use_id: "toolu_1", content: "done" },
          ],
        },
      ],
      /^messages\.2\.content\.1: tool_result blocks must come before/,
    ],
    [
      "a tool_use in a user message",
      [{ role: "user", content: [{ type: "tool_use", id: "t", name: "set_timer", input: {} }] }],
      /^messages\.0\.content\.0: tool_use blocks belong in assistant messages/,
    ],
  ])("refuses %s in the history", async (_, messages, pattern) => {
    await expectInvalid(await post({ ...hello, tools: [timer], messages }), pattern);
  });

  it("refuses max_tokens beyond the loaded context", async () => {
    await expectInvalid(await post({ ...hello, max_tokens: 100_000 }), /'max_tokens' is 100000.*512 tokens/);
  });

  it("answers an unknown model with 404 not_found_error", async () => {
    const res = await post({ ...hello, model: "claude-sonnet-5-5" });
    expect(res.status).toBe(404);
    expect(await readJson<AnthropicErrorBody>(res)).toEqual({
      type: "error",
      error: { type: "not_found_error", message: expect.stringMatching(/claude-sonnet-5-5/) as unknown },
    });
  });

  it("answers 503 overloaded_error when no model is loaded", async () => {
    core.engine.loaded = null;
    const res = await post(hello);
    expect(res.status).toBe(503);
    expect((await readJson<AnthropicErrorBody>(res)).error.type).toBe("overloaded_error");
  });

  it.each([false, true])("answers a busy engine with 429 rate_limit_error (stream %s)", async (stream) => {
    core.engine.failWith = new ApiError("busy", "A generation is running");
    const res = await post({ ...hello, stream });
    expect(res.status).toBe(429);
    expect(await readJson<AnthropicErrorBody>(res)).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "A generation is running" },
    });
  });

  it("count_tokens answers an unknown model with a 404 in Anthropic's shape (counted: corners.test.ts)", async () => {
    const res = await fetch(`${server.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "x-api-key": server.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-x", messages: hello.messages }),
    });
    expect(res.status).toBe(404);
    expect((await readJson<AnthropicErrorBody>(res)).error.type).toBe("not_found_error");
  });

  it("wants the API key (x-api-key) and answers 401 in Anthropic's shape", async () => {
    const res = await post(hello, { headers: { "x-api-key": "wrong" } });
    expect(res.status).toBe(401);
    expect((await readJson<AnthropicErrorBody>(res)).error.type).toBe("authentication_error");
  });
});

describe("POST /v1/messages generation", () => {
  it("returns a message with usage, passing system, samplers and stop sequences to the engine", async () => {
    const res = await post({
      model: "Tiny-Demo.Q8",
      max_tokens: 20,
      system: [
        { type: "text", text: "Be brief", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Be kind" },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Hi" },
            { type: "text", text: "there" },
          ],
        },
      ],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ["\n\n"],
      metadata: { user_id: "u1" },
      thinking: { type: "disabled" },
    });
    expect(res.status).toBe(200);
    const body = await readJson<Message>(res);
    expect(body).toEqual({
      id: expect.stringMatching(/^msg_/) as unknown,
      type: "message",
      role: "assistant",
      model: "Tiny-Demo.Q8",
      content: [{ type: "text", text: "Hello!" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 7, output_tokens: 3 },
      routing: expect.anything() as unknown,
    });
    expect(core.engine.calls.at(-1)).toMatchObject({
      history: [
        { role: "system", text: "Be brief\nBe kind" },
        { role: "user", text: "Hi\nthere" },
      ],
      options: { temperature: 0.5, topP: 0.9, topK: 40, stop: ["\n\n"], maxTokens: 20 },
    });
    expect(core.engine.calls.at(-1)?.options).not.toHaveProperty("tools");
  });

  it("takes a Claude Code–shaped request: cached system blocks, metadata, draft-07 tool schemas", async () => {
    const res = await post({
      model: "auto",
      max_tokens: 32,
      stream: true,
      metadata: { user_id: "user_abc_session_1" },
      system: [
        { type: "text", text: "You are a coding agent.", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Be careful.", cache_control: { type: "ephemeral", ttl: "1h" } },
      ],
      tools: [
        {
          name: "Bash",
          description: "Run a command",
          input_schema: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            properties: { command: { type: "string" }, timeout: { type: "number" } },
            required: ["command"],
            additionalProperties: false,
          },
          cache_control: { type: "ephemeral" },
        },
      ],
      messages: [
        {
          role: "user",
          content: [{ type: "text", text: "List the files", cache_control: { type: "ephemeral" } }],
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(events(await res.text()).at(-1)?.type).toBe("message_stop");
    expect(core.engine.calls.at(-1)?.options.tools?.[0]?.name).toBe("Bash");
  });

  it("defaults to Anthropic's temperature 1 and reports max_tokens when the limit cut the answer", async () => {
    const body = await readJson<Message>(await post({ ...hello, max_tokens: 2 }));
    expect(body).toMatchObject({ content: [{ type: "text", text: "Hello" }], stop_reason: "max_tokens" });
    expect(core.engine.calls.at(-1)?.options).toMatchObject({ temperature: 1, maxTokens: 2 });
  });

  it("streams Anthropic's events in order, the text as text_delta, usage at the end", async () => {
    const res = await post({ ...hello, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const all = events(await res.text());
    // The text deltas of one block, however the pieces were merged (withBatchedDeltas).
    const deltas = all.filter((e) => e.type === "content_block_delta");
    const types = all.map((e) => e.type);
    expect(types).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      ...deltas.map(() => "content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(all[0]).toMatchObject({
      message: {
        id: expect.stringMatching(/^msg_/) as unknown,
        role: "assistant",
        content: [],
        model: "auto",
      },
    });
    expect(all[1]).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });
    for (const delta of deltas)
      expect(delta).toEqual({
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: expect.any(String) as unknown },
      });
    // The first piece at once, then the rest (merged or not) in order.
    expect(deltas[0]).toMatchObject({ delta: { text: "Hel" } });
    expect(deltas.map((e) => (e as { delta: { text: string } }).delta.text).join("")).toBe("Hello!");
    expect(all.at(-3)).toEqual({ type: "content_block_stop", index: 0 });
    expect(all.at(-2)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { input_tokens: 7, output_tokens: 3 },
    });
  });

  it("aborts the generation when the client disconnects mid-stream", async () => {
    core.engine.hang = true;
    const controller = new AbortController();
    const res = await post({ ...hello, stream: true }, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read(); // the first events: the stream is live
    const signal = core.engine.calls.at(-1)?.signal;
    expect(signal?.aborted).toBe(false);
    controller.abort();
    await vi.waitFor(() => expect(signal?.aborted).toBe(true));
  });

  it("ends a stream that fails after it started with an error event", async () => {
    vi.spyOn(core.engine, "generate").mockImplementationOnce((_history, _options, onToken) => {
      onToken("Hel");
      return Promise.reject(new ApiError("engine_crashed", "The engine stopped"));
    });
    const all = events(await (await post({ ...hello, stream: true })).text());
    expect(all.at(-1)).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "The engine stopped" },
    });
    expect(all.map((e) => e.type)).not.toContain("message_stop");
  });
});

describe("POST /v1/messages tool use", () => {
  it("passes tools and tool_choice to the engine, mapped onto OpenAI's choices", async () => {
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [undefined, { toolChoice: "auto", parallelToolCalls: true }],
      [
        { type: "auto", disable_parallel_tool_use: true },
        { toolChoice: "auto", parallelToolCalls: false },
      ],
      [{ type: "any" }, { toolChoice: "required", parallelToolCalls: true }],
      [{ type: "tool", name: "set_timer" }, { toolChoice: { name: "set_timer" } }],
    ];
    for (const [choice, expected] of cases) {
      const res = await post({ ...hello, tools: [timer], ...(choice ? { tool_choice: choice } : {}) });
      expect(res.status).toBe(200);
      expect(core.engine.calls.at(-1)?.options).toMatchObject({
        tools: [{ name: "set_timer", description: "Start a timer", parameters: timer.input_schema }],
        ...expected,
      });
    }
    await post({ ...hello, tools: [timer], tool_choice: { type: "none" } });
    expect(core.engine.calls.at(-1)?.options).not.toHaveProperty("tools");
  });

  it("returns the engine's calls as tool_use blocks with stop_reason tool_use", async () => {
    nextAnswerCalls([{ name: "set_timer", arguments: { minutes: 15 } }], "Sure.");
    const body = await readJson<Message>(await post({ ...hello, tools: [timer] }));
    expect(body).toMatchObject({
      content: [
        { type: "text", text: "Sure." },
        {
          type: "tool_use",
          id: expect.stringMatching(/^toolu_/) as unknown,
          name: "set_timer",
          input: { minutes: 15 },
        },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 30, output_tokens: 9 },
    });
  });

  it("keeps only the first call with disable_parallel_tool_use", async () => {
    nextAnswerCalls([
      { name: "set_timer", arguments: { minutes: 1 } },
      { name: "set_timer", arguments: { minutes: 2 } },
    ]);
    const body = await readJson<Message>(
      await post({ ...hello, tools: [timer], tool_choice: { type: "any", disable_parallel_tool_use: true } }),
    );
    expect(body.content).toEqual([
      { type: "tool_use", id: expect.any(String) as unknown, name: "set_timer", input: { minutes: 1 } },
    ]);
  });

  it("refuses a call that breaks its tool's schema as a server error", async () => {
    nextAnswerCalls([{ name: "set_timer", arguments: { minutes: "soon" } }]);
    const res = await post({ ...hello, tools: [timer] });
    expect(res.status).toBe(500);
    expect((await readJson<AnthropicErrorBody>(res)).error.type).toBe("api_error");
  });

  it("streams a text block, then each tool_use with its input as input_json_delta", async () => {
    nextAnswerCalls([{ name: "set_timer", arguments: { minutes: 15 } }], "Sure.");
    const all = events(await (await post({ ...hello, tools: [timer], stream: true })).text());
    expect(all.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(all[5]).toEqual({
      type: "content_block_start",
      index: 1,
      content_block: {
        type: "tool_use",
        id: expect.stringMatching(/^toolu_/) as unknown,
        name: "set_timer",
        input: {},
      },
    });
    expect(all[6]).toEqual({
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"minutes":15}' },
    });
    expect(all[8]).toMatchObject({ delta: { stop_reason: "tool_use" } });
  });

  it("answers a tool_result: the history carries the call with its result, the router the user's text", async () => {
    const res = await post({
      ...hello,
      tools: [timer],
      messages: [
        { role: "user", content: "Set a timer for 15 minutes" },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "set_timer", input: { minutes: 15 } }],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "Timer set." }] },
            { type: "text", text: "Thanks" },
          ],
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(core.engine.calls.at(-1)?.history).toEqual([
      { role: "user", text: "Set a timer for 15 minutes" },
      {
        role: "assistant",
        text: "",
        calls: [{ name: "set_timer", arguments: { minutes: 15 }, result: "Timer set." }],
      },
      { role: "user", text: "Thanks" },
    ]);
    expect(core.adapters.resolved.at(-1)?.text).toBe("Thanks");
  });

  it("shows a failed tool to the model as an error, and routes on the question it answers", async () => {
    await post({
      ...hello,
      tools: [timer],
      messages: [
        { role: "user", content: "Set a timer" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "set_timer", input: {} }] },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "t1", content: "no minutes", is_error: true }],
        },
      ],
    });
    expect(core.engine.calls.at(-1)?.history.at(-1)).toEqual({
      role: "assistant",
      text: "",
      calls: [{ name: "set_timer", arguments: {}, result: "Error: no minutes" }],
    });
    expect(core.adapters.resolved.at(-1)?.text).toBe("Set a timer");
  });
});
