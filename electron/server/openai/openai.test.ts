import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api";
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import { FakeCore, listenForTest, readJson, type OpenAiErrorReply } from "../../../testing/server/test-core";

let server: Awaited<ReturnType<typeof listenForTest>>;
const core = new FakeCore();

beforeAll(async () => {
  server = await listenForTest(core);
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  await core.engine.load("/models/Tiny-Demo.Q8.gguf");
  core.engine.tokens = ["Hel", "lo", "!"];
  core.engine.hang = false;
  core.engine.failWith = null;
});

function complete(body: unknown, signal?: AbortSignal) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
}

const hello = { model: "auto", messages: [{ role: "user", content: "Hi" }] };

describe("GET /v1/models", () => {
  it("lists the loaded model by file name and auto", async () => {
    const res = await fetch(`${server.url}/v1/models`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    const body = await readJson<{ object: string; data: Array<{ id: string }> }>(res);
    expect(body.object).toBe("list");
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(["Tiny-Demo.Q8", "auto"]);
    expect(body.data[0]).toEqual({
      id: "Tiny-Demo.Q8",
      object: "model",
      created: expect.any(Number) as unknown,
      owned_by: "macaron",
    });
  });
});

describe("POST /v1/chat/completions validation", () => {
  it.each([
    [{ messages: hello.messages }, "model"],
    [{ model: "auto" }, "messages"],
    [{ model: "auto", messages: [] }, "messages"],
    [{ model: "auto", messages: [{ role: "function", content: "x" }] }, "messages[0].role"],
    [{ model: "auto", messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
    [{ ...hello, temperature: 3 }, "temperature"],
    [{ ...hello, max_tokens: 0 }, "max_tokens"],
    [{ ...hello, stream: "yes" }, "stream"],
    [{ ...hello, stop: 5 }, "stop"],
    [
      { model: "auto", messages: [{ role: "user", content: [{ type: "image_url", image_url: {} }] }] },
      "messages[0].content",
    ],
    [{ ...hello, tools: [{ type: "function", function: { name: "rm -rf" } }] }, "tools[0].function.name"],
    [
      { ...hello, tools: [{ type: "function", function: { name: "x".repeat(65) } }] },
      "tools[0].function.name",
    ],
    [{ ...hello, tools: [{ type: "code_interpreter" }] }, "tools[0].type"],
    [{ ...hello, tool_choice: "always" }, "tool_choice"],
    [{ ...hello, parallel_tool_calls: "yes" }, "parallel_tool_calls"],
  ])("rejects %j naming param %s", async (body, param) => {
    const res = await complete(body);
    expect(res.status).toBe(400);
    expect(await readJson<OpenAiErrorReply>(res)).toEqual({
      error: {
        message: expect.any(String) as unknown,
        type: "invalid_request_error",
        param,
        code: "invalid_request",
      },
    });
  });

  it("wants the last message from the user", async () => {
    const res = await complete({ model: "auto", messages: [{ role: "assistant", content: "Hi" }] });
    expect(res.status).toBe(400);
    expect((await readJson<OpenAiErrorReply>(res)).error.param).toBe("messages");
  });

  it("answers an unknown model with 404 model_not_found", async () => {
    const res = await complete({ ...hello, model: "gpt-9" });
    expect(res.status).toBe(404);
    expect((await readJson<OpenAiErrorReply>(res)).error).toMatchObject({
      code: "model_not_found",
      param: "model",
    });
  });

  it("answers 503 when no model is loaded", async () => {
    core.engine.loaded = null;
    const res = await complete(hello);
    expect(res.status).toBe(503);
    expect((await readJson<OpenAiErrorReply>(res)).error.type).toBe("server_error");
  });

  it("answers a busy engine with 429", async () => {
    core.engine.failWith = new ApiError("busy", "A generation is running");
    const res = await complete(hello);
    expect(res.status).toBe(429);
    expect((await readJson<OpenAiErrorReply>(res)).error).toMatchObject({
      code: "busy",
      message: "A generation is running",
    });
  });
});

describe("POST /v1/chat/completions generation", () => {
  it("returns a chat.completion with usage, passing options to the engine", async () => {
    const res = await complete({
      model: "Tiny-Demo.Q8",
      messages: [
        { role: "developer", content: "Be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "Hi" },
            { type: "text", text: "there" },
          ],
        },
      ],
      temperature: 0,
      stop: "\n",
      seed: 7,
    });
    expect(res.status).toBe(200);
    const body = await readJson<ChatCompletion>(res);
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "Tiny-Demo.Q8",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello!" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(core.engine.calls.at(-1)).toMatchObject({
      history: [
        { role: "system", text: "Be brief" },
        { role: "user", text: "Hi\nthere" },
      ],
      options: { temperature: 0, stop: ["\n"], seed: 7 },
    });
  });

  it("reports finish_reason length when max_tokens cut the answer", async () => {
    const res = await complete({ ...hello, max_tokens: 2 });
    const body = await readJson<ChatCompletion>(res);
    expect(body.choices[0]).toMatchObject({ message: { content: "Hello" }, finish_reason: "length" });
    expect(core.engine.calls.at(-1)?.options.maxTokens).toBe(2);
    await complete({ ...hello, max_completion_tokens: 1, max_tokens: 5 });
    expect(core.engine.calls.at(-1)?.options.maxTokens).toBe(1);
  });

  it("streams a role chunk, deltas, a finish chunk, usage and [DONE]", async () => {
    const res = await complete({ ...hello, stream: true, stream_options: { include_usage: true } });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const lines = (await res.text()).split("\n\n").filter(Boolean);
    expect(lines.at(-1)).toBe("data: [DONE]");
    const chunks = lines.slice(0, -1).map((l) => JSON.parse(l.replace(/^data: /, "")) as ChatCompletionChunk);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "" });
    // The text chunks, however the pieces were merged (withBatchedDeltas): the first at once,
    // then the rest in order.
    const text = chunks.slice(1, -2).map((c) => c.choices[0]?.delta.content);
    expect(text[0]).toBe("Hel");
    expect(text.join("")).toBe("Hello!");
    expect(chunks.at(-2)?.choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 3 } });
    for (const c of chunks) expect(c).toMatchObject({ object: "chat.completion.chunk", id: chunks[0]?.id });
  });

  it("queues concurrent requests instead of refusing them", async () => {
    const bodies = await Promise.all(
      [complete(hello), complete(hello), complete(hello)].map(async (r) => readJson<ChatCompletion>(await r)),
    );
    for (const body of bodies) expect(body.choices[0]?.message.content).toBe("Hello!");
  });

  it("aborts the generation when the client disconnects mid-stream", async () => {
    core.engine.hang = true;
    const controller = new AbortController();
    const res = await complete({ ...hello, stream: true }, controller.signal);
    const reader = res.body!.getReader();
    await reader.read(); // the role chunk: the stream is live
    const signal = core.engine.calls.at(-1)?.signal;
    expect(signal?.aborted).toBe(false);
    controller.abort();
    await vi.waitFor(() => expect(signal?.aborted).toBe(true));
  });
});

describe("POST /v1/chat/completions function calling (request mapping)", () => {
  const timer = {
    type: "function",
    function: {
      name: "set_timer",
      parameters: { type: "object", properties: { minutes: { type: "integer" } }, required: ["minutes"] },
    },
  };
  const called = [
    { role: "user", content: "Set a timer for 15 minutes" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "set_timer", arguments: '{"minutes":15}' } },
      ],
    },
  ];

  it("passes tools, tool_choice and parallel_tool_calls to the engine", async () => {
    const res = await complete({
      ...hello,
      tools: [timer],
      tool_choice: { type: "function", function: { name: "set_timer" } },
      parallel_tool_calls: false,
    });
    expect(res.status).toBe(200);
    expect(core.engine.calls.at(-1)?.options).toMatchObject({
      tools: [{ name: "set_timer", parameters: timer.function.parameters }],
      toolChoice: { name: "set_timer" },
      parallelToolCalls: false,
    });
  });

  it("generates without tools for tool_choice none, with plain text back", async () => {
    const res = await complete({ ...hello, tools: [timer], tool_choice: "none" });
    const body = await readJson<ChatCompletion>(res);
    expect(body.choices[0]).toMatchObject({ message: { content: "Hello!" }, finish_reason: "stop" });
    expect(body.choices[0]?.message).not.toHaveProperty("tool_calls");
    expect(core.engine.calls.at(-1)?.options).not.toHaveProperty("tools");
  });

  it("answers a tool result: the history carries the call with its result", async () => {
    const res = await complete({
      model: "auto",
      tools: [timer],
      messages: [...called, { role: "tool", tool_call_id: "call_1", content: "Timer set." }],
    });
    expect(res.status).toBe(200);
    expect(core.engine.calls.at(-1)?.history).toEqual([
      { role: "user", text: "Set a timer for 15 minutes" },
      {
        role: "assistant",
        text: "",
        calls: [{ name: "set_timer", arguments: { minutes: 15 }, result: "Timer set." }],
      },
    ]);
    // The router decides on the user's request, not on the tool's output.
    expect(core.adapters.resolved.at(-1)?.text).toBe("Set a timer for 15 minutes");
  });

  it.each([
    [
      "an unknown tool_call_id",
      { messages: [...called, { role: "tool", tool_call_id: "call_9", content: "x" }] },
      "messages[2].tool_call_id",
    ],
    [
      "a tool message without a call before it",
      { messages: [hello.messages[0], { role: "tool", tool_call_id: "call_1", content: "x" }] },
      "messages[1]",
    ],
    [
      "a call without its result",
      { messages: [...called, { role: "user", content: "Well?" }] },
      "messages[1].tool_calls",
    ],
    [
      "a bad schema",
      { tools: [{ type: "function", function: { name: "t", parameters: { type: "array" } } }] },
      "tools[0].function.parameters",
    ],
    [
      "a tool_choice naming a missing tool",
      { tools: [timer], tool_choice: { type: "function", function: { name: "nope" } } },
      "tool_choice",
    ],
  ])("refuses %s with 400 naming the field, before any generation", async (_, extra, param) => {
    const before = core.engine.calls.length;
    const res = await complete({ ...hello, ...extra });
    expect(res.status).toBe(400);
    const { error } = await readJson<OpenAiErrorReply>(res);
    expect(error).toMatchObject({ type: "invalid_request_error", code: "invalid_request", param });
    expect(error.message.length).toBeGreaterThan(20);
    expect(core.engine.calls.length).toBe(before);
  });
});
