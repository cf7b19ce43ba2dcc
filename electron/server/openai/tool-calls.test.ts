import { describe, expect, it } from "vitest";
import { OpenAiError } from "./errors";
import { historyTurns, newCallId, responseToolCalls, toolRequest, type HistoryMessage } from "./tool-calls";

const timer = {
  type: "function" as const,
  function: {
    name: "set_timer",
    description: "Start a timer",
    parameters: {
      type: "object",
      properties: { minutes: { type: "integer", minimum: 1 } },
      required: ["minutes"],
      additionalProperties: false,
    },
  },
};
const weather = { type: "function" as const, function: { name: "get-weather" } };

function failure(run: () => unknown): OpenAiError {
  try {
    run();
  } catch (error) {
    if (error instanceof OpenAiError) return error;
    throw error;
  }
  throw new Error("expected an OpenAiError");
}

describe("toolRequest", () => {
  it("passes the tools, the choice and parallel_tool_calls (default true)", () => {
    expect(toolRequest({ tools: [timer, weather] })).toEqual({
      tools: [
        { name: "set_timer", description: "Start a timer", parameters: timer.function.parameters },
        { name: "get-weather" },
      ],
      toolChoice: "auto",
      parallelToolCalls: true,
    });
    expect(
      toolRequest({ tools: [timer], tool_choice: "required", parallel_tool_calls: false }),
    ).toMatchObject({
      toolChoice: "required",
      parallelToolCalls: false,
    });
    expect(
      toolRequest({
        tools: [timer, weather],
        tool_choice: { type: "function", function: { name: "get-weather" } },
      }).toolChoice,
    ).toEqual({ name: "get-weather" });
  });

  it("asks for text with tool_choice none, no tools or an empty list", () => {
    expect(toolRequest({ tools: [timer], tool_choice: "none" })).toEqual({});
    expect(toolRequest({})).toEqual({});
    expect(toolRequest({ tools: [], tool_choice: "auto" })).toEqual({});
  });

  it("refuses a schema that is not an object schema or does not compile, naming it", () => {
    const bad = (parameters: unknown) => ({ type: "function" as const, function: { name: "t", parameters } });
    for (const parameters of [
      { type: "string" },
      [1],
      "x",
      { type: "object", properties: { a: { type: "nope" } } },
    ]) {
      const error = failure(() => toolRequest({ tools: [timer, bad(parameters)] }));
      expect(error).toMatchObject({
        status: 400,
        type: "invalid_request_error",
        param: "tools[1].function.parameters",
      });
      expect(error.message).toMatch(/^Tool 't': The tool's input schema/);
    }
  });

  it("refuses a schema the engine's grammar cannot express, before the engine sees it", () => {
    const error = failure(() =>
      toolRequest({
        tools: [
          {
            type: "function",
            function: {
              name: "t",
              parameters: { type: "object", properties: { a: { not: { type: "string" } } } },
            },
          },
        ],
      }),
    );
    expect(error).toMatchObject({ status: 400, param: "tools[0].function.parameters" });
    expect(error.message).toMatch(/^Tool 't': tools\[0\]\.function\.parameters\.properties\.a/);
  });

  it("refuses duplicate names and a tool_choice the tools cannot satisfy", () => {
    expect(failure(() => toolRequest({ tools: [timer, timer] }))).toMatchObject({
      param: "tools[1].function.name",
      message: 'two tools are named "set_timer": rename one.',
    });
    expect(
      failure(() =>
        toolRequest({ tools: [timer], tool_choice: { type: "function", function: { name: "nope" } } }),
      ),
    ).toMatchObject({
      param: "tool_choice",
      message: 'tool_choice names "nope", which is not among the tools.',
    });
    expect(failure(() => toolRequest({ tool_choice: "required" }))).toMatchObject({
      param: "tool_choice",
      message: 'tool_choice "required" needs at least one tool in tools.',
    });
    // A named choice with no tools names the tool it misses; "none" with duplicates is still refused.
    expect(
      failure(() => toolRequest({ tool_choice: { type: "function", function: { name: "nope" } } })),
    ).toMatchObject({ param: "tool_choice", message: expect.stringContaining('"nope"') as unknown });
    expect(failure(() => toolRequest({ tools: [timer, timer], tool_choice: "none" }))).toMatchObject({
      param: "tools[1].function.name",
    });
  });
});

const callTimer = (id: string, minutes = 15) => ({
  id,
  type: "function" as const,
  function: { name: "set_timer", arguments: JSON.stringify({ minutes }) },
});

describe("historyTurns", () => {
  it("maps roles and content, developer as system", () => {
    expect(
      historyTurns([
        { role: "developer", content: "Be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "Hi" },
            { type: "text", text: "there" },
          ],
        },
        { role: "assistant", content: "Hello" },
        { role: "user", content: "Bye" },
      ]),
    ).toEqual([
      { role: "system", text: "Be brief" },
      { role: "user", text: "Hi\nthere" },
      { role: "assistant", text: "Hello" },
      { role: "user", text: "Bye" },
    ]);
  });

  it("attaches each tool message to its call by id, whatever their order", () => {
    const turns = historyTurns([
      { role: "user", content: "Two timers" },
      { role: "assistant", content: null, tool_calls: [callTimer("call_a", 5), callTimer("call_b", 10)] },
      { role: "tool", tool_call_id: "call_b", content: "started 10" },
      { role: "tool", tool_call_id: "call_a", content: [{ type: "text", text: "started 5" }] },
      { role: "assistant", content: "Both run.", tool_calls: [callTimer("call_c", 1)] },
      { role: "tool", tool_call_id: "call_c", content: "started 1" },
    ]);
    expect(turns).toEqual([
      { role: "user", text: "Two timers" },
      {
        role: "assistant",
        text: "",
        calls: [
          { name: "set_timer", arguments: { minutes: 5 }, result: "started 5" },
          { name: "set_timer", arguments: { minutes: 10 }, result: "started 10" },
        ],
      },
      {
        role: "assistant",
        text: "Both run.",
        calls: [{ name: "set_timer", arguments: { minutes: 1 }, result: "started 1" }],
      },
    ]);
  });

  it("gives JSON object and array results to the engine as JSON, other results as text", () => {
    const result = (content: string) =>
      historyTurns([
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [callTimer("c1")] },
        { role: "tool", tool_call_id: "c1", content },
      ])[1]?.calls?.[0]?.result;
    expect(result(' {"left": 14}')).toEqual({ left: 14 });
    expect(result("[1,2]")).toEqual([1, 2]);
    expect(result("{not json")).toBe("{not json");
    expect(result("42")).toBe("42");
  });

  it("keeps arguments that are not JSON as their text", () => {
    const turns = historyTurns([
      { role: "user", content: "x" },
      {
        role: "assistant",
        tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{oops" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "r" },
    ]);
    expect(turns[1]?.calls?.[0]?.arguments).toBe("{oops");
  });

  it.each<[string, HistoryMessage[], string, RegExp]>([
    [
      "a tool message with no call before it",
      [
        { role: "user", content: "x" },
        { role: "tool", tool_call_id: "call_a", content: "r" },
      ],
      "messages[1]",
      /no assistant message with 'tool_calls' before it/,
    ],
    [
      "an unknown tool_call_id",
      [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [callTimer("call_a")] },
        { role: "tool", tool_call_id: "call_z", content: "r" },
      ],
      "messages[2].tool_call_id",
      /'call_z' answers no call of messages\[1\] \(its ids: call_a\)/,
    ],
    [
      "a call answered twice",
      [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [callTimer("call_a")] },
        { role: "tool", tool_call_id: "call_a", content: "r" },
        { role: "tool", tool_call_id: "call_a", content: "r" },
      ],
      "messages[3].tool_call_id",
      /a second time/,
    ],
    [
      "a call left without its result",
      [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [callTimer("call_a"), callTimer("call_b")] },
        { role: "tool", tool_call_id: "call_a", content: "r" },
        { role: "user", content: "y" },
      ],
      "messages[1].tool_calls",
      /no result for call_b before messages\[3\]/,
    ],
    [
      "a trailing call without its result",
      [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [callTimer("call_a")] },
      ],
      "messages[1].tool_calls",
      /no result for call_a/,
    ],
    [
      "a result for a call of an older message",
      [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [callTimer("call_a")] },
        { role: "tool", tool_call_id: "call_a", content: "r" },
        { role: "assistant", content: "done" },
        { role: "tool", tool_call_id: "call_a", content: "r" },
      ],
      "messages[4]",
      /no assistant message/,
    ],
    [
      "two calls with one id",
      [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [callTimer("call_a"), callTimer("call_a")] },
      ],
      "messages[1].tool_calls[1].id",
      /'call_a'/,
    ],
  ])("refuses %s", (_, messages, param, message) => {
    const error = failure(() => historyTurns(messages));
    expect(error).toMatchObject({
      status: 400,
      type: "invalid_request_error",
      code: "invalid_request",
      param,
    });
    expect(error.message).toMatch(message);
  });
});

describe("responseToolCalls", () => {
  const request = toolRequest({ tools: [timer, weather] });

  it("gives each call a call_ id and its arguments as JSON text", () => {
    const calls = responseToolCalls(
      [
        { name: "set_timer", arguments: { minutes: 15 } },
        { name: "get-weather", arguments: undefined },
      ],
      request,
    );
    expect(calls).toEqual([
      {
        id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/) as unknown,
        type: "function",
        function: { name: "set_timer", arguments: '{"minutes":15}' },
      },
      {
        id: expect.stringMatching(/^call_/) as unknown,
        type: "function",
        function: { name: "get-weather", arguments: "{}" },
      },
    ]);
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
  });

  it("keeps only the first call when parallel_tool_calls is false", () => {
    const single = toolRequest({ tools: [timer], parallel_tool_calls: false });
    const calls = responseToolCalls(
      [
        { name: "set_timer", arguments: { minutes: 1 } },
        { name: "set_timer", arguments: { minutes: 2 } },
      ],
      single,
    );
    expect(calls.map((c) => c.function.arguments)).toEqual(['{"minutes":1}']);
  });

  it("refuses arguments that do not match the schema and calls of unknown tools", () => {
    for (const args of [{ minutes: 0 }, { minutes: 5e-14 }, { minutes: 3, extra: true }, "15"]) {
      const error = failure(() => responseToolCalls([{ name: "set_timer", arguments: args }], request));
      expect(error).toMatchObject({ status: 500, code: "invalid_tool_call" });
      expect(error.message).toMatch(/call of 'set_timer' does not match its schema: arguments/);
    }
    expect(failure(() => responseToolCalls([{ name: "rm_rf", arguments: {} }], request)).message).toMatch(
      /'rm_rf', which is not in 'tools'/,
    );
  });

  it("makes distinct ids", () => {
    expect(new Set(Array.from({ length: 200 }, newCallId)).size).toBe(200);
  });
});
