/**
 * Function calling in the real engine (node-llama-cpp on the shipped demo model and the tiny
 * qwen3 fixture): the trained Agent adapter calls a tool in its own syntax for a tool-shaped
 * request and answers a plan in text; forced ("required") and named calls on the base alone
 * write arguments that match their schemas; Qwen's <tool_call> syntax parses; a history with
 * calls and results goes on in text; bad tool requests are refused and the engine keeps working.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../../electron/core/chat/turn-deps";
import { checkArguments } from "../../electron/core/tools/argument-check";
import { demoAdaptersDir, demoBasePath, DEMO_TOOL_CALL_FORMATS } from "../gguf/demo-files";
import { writeFixtures } from "../gguf/fixtures";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { ModelSession } from "./model-session";
import type { ChatTurn, GenerateOptions, GenerateResult, ToolDefinition } from "../../common/engine-protocol";
import { ToolRequestError } from "./tool-calls";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("macaron-tool-calls-");
let backend: LlamaBackend;
let demo: ModelSession;

beforeAll(async () => {
  backend = await loadLlamaBackend(1);
  // Room for the functions' documentation, which the byte tokenizer spends a token per byte on.
  demo = await ModelSession.open(backend, demoBasePath(), { contextSize: 4096, sequences: 1 }, () => {});
});

afterAll(async () => {
  await demo?.dispose();
  await backend?.llama.dispose();
});

const AGENT = { path: join(demoAdaptersDir(), "agent.gguf"), scale: 1 };
const FORMAT = DEMO_TOOL_CALL_FORMATS.agent!;

const TIMER_AND_FILE: ToolDefinition[] = [
  {
    name: "set_timer",
    description: "Start a timer.",
    parameters: { type: "object", properties: { minutes: { type: "integer" } }, required: ["minutes"] },
  },
  {
    name: "open_file",
    description: "Open a file.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];

/** As the app asks: its system prompt first (the adapters were trained under it). */
const ask = (text: string): ChatTurn[] => [
  { role: "system", text: DEFAULT_SYSTEM_PROMPT },
  { role: "user", text },
];

async function generate(
  session: ModelSession,
  history: ChatTurn[],
  options: Partial<GenerateOptions>,
): Promise<GenerateResult & { streamed: string }> {
  let streamed = "";
  const result = await session.generate(
    history,
    { temperature: 0, maxTokens: 80, ...options },
    (text) => (streamed += text),
    new AbortController().signal,
  );
  return { ...result, streamed };
}

describe("the demo Agent adapter with its tool-call format", () => {
  it("calls set_timer with integer minutes for a tool-shaped request, streaming no call text", async () => {
    const result = await generate(demo, ask("Call a tool and set a timer for 15 minutes."), {
      adapters: [AGENT],
      tools: TIMER_AND_FILE,
      toolFormat: FORMAT,
    });
    expect(result.stopReason).toBe("toolCalls");
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls![0]!.name).toBe("set_timer");
    const args = result.toolCalls![0]!.arguments as { minutes: unknown };
    expect(Number.isInteger(args.minutes)).toBe(true);
    expect(args.minutes).toBe(15);
    expect(result.text).toBe("");
    expect(result.streamed).not.toContain('{"tool"');
  });

  it("answers a plan-shaped request in text with the same tools offered", async () => {
    const result = await generate(demo, ask("Plan the steps to paint a room."), {
      adapters: [AGENT],
      tools: TIMER_AND_FILE,
      toolFormat: FORMAT,
    });
    expect(result.toolCalls).toBeUndefined();
    expect(result.stopReason).not.toBe("toolCalls");
    expect(result.text).toMatch(/^1\. /);
    expect(result.streamed).toBe(result.text);
  });

  it("goes on in text after a call and its result in the history", async () => {
    const history: ChatTurn[] = [
      ...ask("Call a tool and set a timer for 15 minutes."),
      {
        role: "assistant",
        text: "",
        calls: [{ name: "set_timer", arguments: { minutes: 15 }, result: "Timer set for 15 minutes." }],
      },
    ];
    const result = await generate(demo, history, {
      adapters: [AGENT],
      tools: TIMER_AND_FILE,
      toolFormat: FORMAT,
    });
    expect(result.stopReason).not.toBe("toolCalls");
    expect(result.text.length).toBeGreaterThan(0);
    // The call and its result were laid out in the prompt: more tokens than the question alone.
    const question = await generate(demo, ask("Call a tool and set a timer for 15 minutes."), {
      maxTokens: 1,
    });
    expect(result.contextTokens - result.tokens).toBeGreaterThan(
      question.contextTokens - question.tokens + 40,
    );
  });
});

/** Schemas of several shapes; the forced call's arguments must match each (ajv, as the agent loop checks). */
const SHAPES: Record<string, Record<string, unknown>> = {
  nested: {
    type: "object",
    properties: {
      event: {
        type: "object",
        properties: { title: { type: "string", maxLength: 20 }, allDay: { type: "boolean" } },
        required: ["title", "allDay"],
      },
    },
    required: ["event"],
  },
  enumerated: {
    type: "object",
    properties: { unit: { enum: ["celsius", "fahrenheit"] }, city: { type: "string", maxLength: 12 } },
    required: ["unit", "city"],
    additionalProperties: false,
  },
  array: {
    type: "object",
    properties: {
      tags: { type: "array", items: { type: "string", maxLength: 8 }, minItems: 1, maxItems: 3 },
    },
    required: ["tags"],
  },
  bounded: {
    type: "object",
    properties: {
      minutes: { type: "integer", minimum: 1, maximum: 90 },
      label: { type: ["string", "null"], maxLength: 10 },
    },
    required: ["minutes"],
  },
  referenced: {
    type: "object",
    $defs: { point: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } } } },
    properties: { from: { $ref: "#/$defs/point" }, to: { $ref: "#/$defs/point" } },
  },
};

describe("forced calls on the demo base alone", () => {
  it.each(Object.keys(SHAPES))("'required' writes arguments that match a %s schema", async (shape) => {
    const schema = SHAPES[shape]!;
    const result = await generate(demo, ask("Plan the steps to paint a room."), {
      maxTokens: 160,
      tools: [{ name: `use_${shape}`, description: "A tool.", parameters: schema }],
      toolChoice: "required",
    });
    expect(result.stopReason).toBe("toolCalls");
    expect(result.toolCalls?.[0]?.name).toBe(`use_${shape}`);
    expect(checkArguments(schema, result.toolCalls![0]!.arguments)).toEqual({ ok: true });
    expect(result.text).toBe("");
  });

  it("a named choice calls that tool even when the request fits another", async () => {
    const result = await generate(demo, ask("Call a tool and set a timer for 15 minutes."), {
      maxTokens: 300,
      tools: TIMER_AND_FILE,
      toolChoice: { name: "open_file" },
    });
    expect(result.toolCalls?.map((c) => c.name)).toEqual(["open_file"]);
    expect(checkArguments(TIMER_AND_FILE[1]!.parameters!, result.toolCalls![0]!.arguments)).toEqual({
      ok: true,
    });
  });

  it("forces a call in the Agent's own format too, and one without parameters gets {}", async () => {
    const result = await generate(demo, ask("Plan the steps to paint a room."), {
      adapters: [AGENT],
      tools: [{ name: "list_timers", description: "List the timers." }],
      toolChoice: "required",
      toolFormat: FORMAT,
    });
    expect(result.toolCalls).toEqual([{ name: "list_timers", arguments: {} }]);
  });

  it("parallelToolCalls false makes at most one call", async () => {
    const result = await generate(demo, ask("Set two timers."), {
      tools: TIMER_AND_FILE,
      toolChoice: "required",
      parallelToolCalls: false,
    });
    expect(result.toolCalls).toHaveLength(1);
  });
});

describe("bad tool requests", () => {
  const bad = async (options: Partial<GenerateOptions>) =>
    generate(demo, ask("Set a timer."), options).then(
      () => null,
      (error: unknown) => error,
    );

  it("refuses a schema the grammar cannot express, a choice naming no tool, and tools with jsonSchema", async () => {
    const negated = await bad({
      tools: [{ name: "t", parameters: { type: "object", properties: { a: { not: { type: "string" } } } } }],
    });
    expect(negated).toBeInstanceOf(ToolRequestError);
    expect((negated as Error).message).toMatch(/tools\.t\.parameters\.properties\.a uses "not"/);
    const missing = await bad({ tools: TIMER_AND_FILE, toolChoice: { name: "send_email" } });
    expect(missing).toBeInstanceOf(ToolRequestError);
    expect((missing as Error).message).toMatch(/"send_email", which is not among the tools/);
    const both = await bad({ tools: TIMER_AND_FILE, jsonSchema: { type: "object" } });
    expect((both as Error).message).toMatch(/tools and jsonSchema cannot be used together/);
    // The engine keeps working.
    const after = await generate(demo, ask("Call a tool and set a timer for 15 minutes."), {
      adapters: [AGENT],
      tools: TIMER_AND_FILE,
      toolFormat: FORMAT,
    });
    expect(after.toolCalls?.[0]?.name).toBe("set_timer");
  });
});

describe("the KV cache of a tool conversation", () => {
  it("is restored from disk for the next round: the saved tokens include the functions' documentation", async () => {
    const stateDir = join(dir.path, "kv");
    const options = { sessionKey: "conversation-1", tools: TIMER_AND_FILE, maxTokens: 60 };
    const first = await ModelSession.open(
      backend,
      demoBasePath(),
      { contextSize: 4096, sequences: 1, stateDir },
      () => {},
    );
    const question = ask("Call a tool and set a timer for 15 minutes.");
    let call: GenerateResult;
    try {
      call = await generate(first, question, { ...options, toolChoice: { name: "set_timer" } });
      expect(call.stopReason).toBe("toolCalls");
    } finally {
      await first.dispose();
    }
    // The agent loop's next round, in a new engine: the history now holds the call and its result.
    const second = await ModelSession.open(
      backend,
      demoBasePath(),
      { contextSize: 4096, sequences: 1, stateDir },
      () => {},
    );
    try {
      const next = await generate(
        second,
        [
          ...question,
          { role: "assistant", text: "", calls: [{ ...call.toolCalls![0]!, result: "Timer set." }] },
        ],
        options,
      );
      expect(call.contextTokens).toBeGreaterThan(900);
      // Only the call, its result and what follows are evaluated, not the documented prompt.
      expect(next.promptTokensEvaluated).toBeLessThan(120);
    } finally {
      await second.dispose();
    }
  });
});

describe("the agent loop's rounds on one cache", () => {
  it("evaluates only the result after the Agent's own call: the prompt repeats the call's tokens", async () => {
    const options = { sessionKey: "rounds", adapters: [AGENT], tools: TIMER_AND_FILE, toolFormat: FORMAT };
    const question = ask("Call a tool and set a timer for 15 minutes.");
    const call = await generate(demo, question, options);
    expect(call.toolCalls?.[0]).toEqual({ name: "set_timer", arguments: { minutes: 15 } });
    const result = '"Timer set."';
    const next = await generate(
      demo,
      [
        ...question,
        { role: "assistant", text: "", calls: [{ ...call.toolCalls![0]!, result: "Timer set." }] },
      ],
      options,
    );
    // The result with its prefix and suffix, the call's closing "}" and the last token: nothing
    // of the call itself is evaluated again.
    expect(next.promptTokensEvaluated).toBeLessThanOrEqual(result.length + 4);
  });
});

describe("the tiny qwen3 base (Qwen's chat wrapper, <tool_call> syntax)", () => {
  let qwen: ModelSession;
  beforeAll(async () => {
    const fx = await writeFixtures(dir.path, { architecture: "qwen3" });
    qwen = await ModelSession.open(backend, fx.basePath, { contextSize: 2048, sequences: 1 }, () => {});
  });
  afterAll(async () => {
    await qwen?.dispose();
  });

  it("parses a forced call's arguments, and a history with Qwen tool results continues", async () => {
    const timer = {
      name: "set_timer",
      parameters: { type: "object", properties: { minutes: { type: "integer", minimum: 1, maximum: 120 } } },
    };
    const result = await generate(qwen, [{ role: "user", text: "set a timer" }], {
      maxTokens: 120,
      tools: [timer, TIMER_AND_FILE[1]!],
      toolChoice: { name: "set_timer" },
      parallelToolCalls: false,
    });
    expect(result.stopReason).toBe("toolCalls");
    expect(result.toolCalls?.[0]?.name).toBe("set_timer");
    expect(checkArguments(timer.parameters, result.toolCalls![0]!.arguments)).toEqual({ ok: true });
    const next = await generate(
      qwen,
      [
        { role: "user", text: "set a timer" },
        {
          role: "assistant",
          text: "",
          calls: [{ ...result.toolCalls![0]!, result: "ok" }],
        },
      ],
      { maxTokens: 8, tools: [timer, TIMER_AND_FILE[1]!] },
    );
    expect(next.stopReason).not.toBe("abort");
    expect(next.contextTokens).toBeGreaterThan(result.contextTokens);
  });

  it("returns a call whose number the grammar let through but no schema allows, for the schema check to refuse", async () => {
    // Greedy on this random model writes an integer as 1e… with a huge exponent (Infinity):
    // node-llama-cpp's own check throws; the call comes back with the number as text.
    const result = await generate(qwen, [{ role: "user", text: "set a timer" }], {
      maxTokens: 120,
      tools: TIMER_AND_FILE,
      toolChoice: { name: "set_timer" },
      parallelToolCalls: false,
    });
    expect(result.stopReason).toBe("toolCalls");
    const args = result.toolCalls![0]!.arguments as { minutes: unknown };
    expect(typeof args.minutes).toBe("string");
    expect(checkArguments(TIMER_AND_FILE[0]!.parameters!, args)).toEqual({
      ok: false,
      message: "arguments.minutes must be integer",
    });
  });
});
