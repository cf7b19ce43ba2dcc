/**
 * OpenAI function calling on /v1 end to end: the official `openai` client against the headless
 * server on loopback, the real engine (node-llama-cpp) with the trained demo that ships with
 * the app (its base and its Agent adapter), greedy.
 */
import OpenAI, { APIError } from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../../core/chat/turn-deps";
import { checkArguments } from "../../core/tools/argument-check";
import type { RunningServer } from "../start";
import { startDemoServer, type DemoServer } from "../../../testing/server/demo-server";

let demo: DemoServer;
let server: RunningServer;
let client: OpenAI;
/** The base model's id on /v1 (its file name). */
let base: string;

beforeAll(async () => {
  demo = await startDemoServer("v1-tools");
  ({ server, base } = demo);
  client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await demo?.close();
});

const weatherParams = {
  type: "object",
  properties: {
    city: { type: "string", enum: ["Paris", "Lisbon", "Oslo"] },
    metric: { type: "boolean" },
  },
  required: ["city", "metric"],
  additionalProperties: false,
};
const timerParams = {
  type: "object",
  properties: { minutes: { type: "integer" } },
  required: ["minutes"],
  additionalProperties: false,
};
const tools: ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "get_weather", description: "The weather in a city", parameters: weatherParams },
  },
  {
    type: "function",
    function: { name: "set_timer", description: "Start a timer", parameters: timerParams },
  },
];
const schemaOf = (name: string) => (name === "set_timer" ? timerParams : weatherParams);
const ask = (text: string): ChatCompletionMessageParam[] => [{ role: "user", content: text }];

/** Arguments as the client gets them: a JSON string that parses and matches the tool's schema. */
function expectValidArguments(call: { function: { name: string; arguments: string } }): unknown {
  const args = JSON.parse(call.function.arguments) as unknown;
  expect(checkArguments(schemaOf(call.function.name), args)).toEqual({ ok: true });
  return args;
}

async function badRequest(run: () => Promise<unknown>): Promise<APIError> {
  const error = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  expect((error as APIError).status).toBe(400);
  return error as APIError;
}

describe("/v1 function calling with the real engine", () => {
  it("forces a call with tool_choice required: arguments parse and match the schema", async () => {
    const completion = await client.chat.completions.create({
      model: base,
      messages: ask("What is the weather like in Oslo?"),
      tools,
      tool_choice: "required",
      temperature: 0,
      max_tokens: 80,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    const calls = choice.message.tool_calls ?? [];
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call).toMatchObject({ id: expect.stringMatching(/^call_/) as unknown, type: "function" });
      if (call.type !== "function") throw new Error("not a function call");
      expect(["get_weather", "set_timer"]).toContain(call.function.name);
      expectValidArguments(call);
    }
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it("calls the tool that tool_choice names, and only one with parallel_tool_calls false", async () => {
    const completion = await client.chat.completions.create({
      model: base,
      messages: ask("What is the weather like in Oslo?"),
      tools,
      tool_choice: { type: "function", function: { name: "set_timer" } },
      parallel_tool_calls: false,
      temperature: 0,
      max_tokens: 80,
    });
    const calls = completion.choices[0]?.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    if (call.type !== "function") throw new Error("not a function call");
    expect(call.function.name).toBe("set_timer");
    expect(expectValidArguments(call)).toEqual({ minutes: expect.any(Number) as unknown });
  });

  it("streams a call the client's stream helper reassembles", async () => {
    const chunks: ChatCompletionChunk[] = [];
    const stream = client.chat.completions.stream({
      model: base,
      messages: ask("Set a timer for 10 minutes."),
      tools,
      tool_choice: { type: "function", function: { name: "set_timer" } },
      temperature: 0,
      max_tokens: 80,
      stream: true,
    });
    stream.on("chunk", (chunk) => chunks.push(chunk));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]?.finish_reason).toBe("tool_calls");
    const call = final.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error("no function call");
    expect(call.function.name).toBe("set_timer");
    expectValidArguments(call);
    // On the wire: the call's id, type and name first, then its arguments, then the finish.
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({
      index: 0,
      id: call.id,
      type: "function",
      function: { name: "set_timer" },
    });
    expect(deltas.map((d) => d.function?.arguments ?? "").join("")).toBe(call.function.arguments);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("answers a tool result in the history with text, the tools still offered", async () => {
    const completion = await client.chat.completions.create({
      model: "agent",
      messages: [
        { role: "system", content: DEFAULT_SYSTEM_PROMPT },
        ...ask("Call a tool and set a timer for 15 minutes."),
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_timer1",
              type: "function",
              function: { name: "set_timer", arguments: '{"minutes":15}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_timer1", content: "Timer set for 15 minutes." },
      ],
      tools,
      temperature: 0,
      max_tokens: 200,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.tool_calls ?? []).toEqual([]);
    expect(choice.message.content!.length).toBeGreaterThan(0);
    // The call and its result are in the prompt: more than the question alone.
    const question = await client.chat.completions.create({
      model: "agent",
      messages: [
        { role: "system", content: DEFAULT_SYSTEM_PROMPT },
        ...ask("Call a tool and set a timer for 15 minutes."),
      ],
      temperature: 0,
      max_tokens: 1,
    });
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(
      question.usage!.prompt_tokens + "Timer set for 15 minutes.".length,
    );
  });

  it("gives text for tool_choice none", async () => {
    const completion = await client.chat.completions.create({
      model: base,
      messages: ask("Set a timer for 15 minutes."),
      tools,
      tool_choice: "none",
      temperature: 0,
      max_tokens: 24,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).not.toBe("tool_calls");
    expect(choice.message.tool_calls ?? []).toEqual([]);
    expect(choice.message.content!.length).toBeGreaterThan(0);
  });

  it("lets the demo's Agent adapter call set_timer on a tool-shaped request (tool_choice auto)", async () => {
    // The demo's adapters were trained under the app's system prompt: a client sends it as its own.
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: DEFAULT_SYSTEM_PROMPT },
      ...ask("Call a tool and set a timer for 15 minutes."),
    ];
    const completion = await client.chat.completions.create({
      model: "agent",
      messages,
      tools: [tools[1]!],
      temperature: 0,
      max_tokens: 60,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    const call = choice.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error("no function call");
    expect(call.function.name).toBe("set_timer");
    expect(expectValidArguments(call)).toEqual({ minutes: 15 });
  });

  it("streams the Agent's call with no call syntax in the content deltas", async () => {
    const chunks: ChatCompletionChunk[] = [];
    const stream = await client.chat.completions.create({
      model: "agent",
      messages: [
        { role: "system", content: DEFAULT_SYSTEM_PROMPT },
        ...ask("Please set a timer for 25 minutes with a tool."),
      ],
      tools: [tools[1]!],
      temperature: 0,
      max_tokens: 60,
      stream: true,
    });
    for await (const chunk of stream) chunks.push(chunk);
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(content).not.toContain('{"tool"');
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]?.function?.name).toBe("set_timer");
    const args = JSON.parse(deltas.map((d) => d.function?.arguments ?? "").join("")) as unknown;
    expect(checkArguments(timerParams, args)).toEqual({ ok: true });
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("runs the client's own tool loop: the call, the client's result, then the Agent's text", async () => {
    const received: unknown[] = [];
    const runner = client.chat.completions.runTools(
      {
        model: "agent",
        messages: [
          { role: "system", content: DEFAULT_SYSTEM_PROMPT },
          ...ask("Call a tool and set a timer for 15 minutes."),
        ],
        tools: [
          {
            type: "function",
            function: {
              name: "set_timer",
              description: "Start a timer",
              parameters: timerParams,
              parse: (text: string) => JSON.parse(text) as unknown,
              function: (args: unknown) => {
                received.push(args);
                return "Timer set for 15 minutes.";
              },
            },
          },
        ],
        temperature: 0,
        max_tokens: 60,
      },
      { maxChatCompletions: 4 },
    );
    const final = await runner.finalChatCompletion();
    expect(received[0]).toEqual({ minutes: 15 });
    // The answer after the tool's result is text (the Agent does not call again).
    expect(final.choices[0]?.finish_reason).not.toBe("tool_calls");
    expect(typeof final.choices[0]?.message.content).toBe("string");
    const toolMessages = runner.messages.filter((m) => m.role === "tool");
    expect(toolMessages).toHaveLength(1);
  });

  it("refuses bad tool input with 400 and the field, before any generation", async () => {
    const call = {
      role: "assistant" as const,
      content: null,
      tool_calls: [
        {
          id: "call_a",
          type: "function" as const,
          function: { name: "set_timer", arguments: '{"minutes":1}' },
        },
      ],
    };
    const cases: Array<[string, () => Promise<unknown>]> = [
      [
        "messages[2].tool_call_id",
        () =>
          client.chat.completions.create({
            model: base,
            tools,
            messages: [...ask("x"), call, { role: "tool", tool_call_id: "call_b", content: "done" }],
          }),
      ],
      [
        "messages[1]",
        () =>
          client.chat.completions.create({
            model: base,
            messages: [...ask("x"), { role: "tool", tool_call_id: "call_a", content: "done" }],
          }),
      ],
      [
        "tools[0].function.parameters",
        () =>
          client.chat.completions.create({
            model: base,
            messages: ask("x"),
            tools: [
              { type: "function", function: { name: "t", parameters: { type: "object", required: 5 } } },
            ],
          }),
      ],
      [
        "tool_choice",
        () =>
          client.chat.completions.create({
            model: base,
            messages: ask("x"),
            tools,
            tool_choice: { type: "function", function: { name: "delete_everything" } },
          }),
      ],
      [
        "tools[0].function.name",
        () =>
          client.chat.completions.create({
            model: base,
            messages: ask("x"),
            tools: [{ type: "function", function: { name: "set timer!" } }],
          }),
      ],
    ];
    for (const [param, run] of cases) {
      const error = await badRequest(run);
      expect(error.param).toBe(param);
      expect(error.type).toBe("invalid_request_error");
      expect(error.message.length).toBeGreaterThan(20);
    }
  });
});
