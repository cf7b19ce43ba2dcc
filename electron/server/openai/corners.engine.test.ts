/**
 * Issue 28's corners with the real engine (node-llama-cpp, the trained demo) and the official
 * clients: fresh seeds for parallel unseeded requests (and the header that reproduces one),
 * `models.retrieve` in both SDKs, Anthropic's count_tokens and the tool fields the Vercel AI SDK
 * sends, embeddings under clients' default model names, a tool call cut off by max_tokens.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../../core/chat/turn-deps";
import type { RunningServer } from "../start";
import { startDemoServer, type DemoServer } from "../../../testing/server/demo-server";
import { SEED_HEADER } from "./sampling";

let demo: DemoServer;
let server: RunningServer;
let openai: OpenAI;
let anthropic: Anthropic;
let base: string;

beforeAll(async () => {
  demo = await startDemoServer("v1-corners");
  ({ server, base } = demo);
  openai = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: server.apiKey, baseURL: server.url, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await demo?.close();
});

const story = [{ role: "user" as const, content: "Tell me a story." }];

describe("seeds with the real engine", () => {
  it("4 parallel identical unseeded requests at temperature 0.7 give more than one answer; a returned seed reproduces its answer", async () => {
    const ask = (seed?: number) =>
      openai.chat.completions
        .create({
          model: base,
          messages: story,
          temperature: 0.7,
          max_tokens: 24,
          ...(seed === undefined ? {} : { seed }),
        })
        .withResponse();
    const answers = await Promise.all([0, 1, 2, 3].map(() => ask()));
    const texts = answers.map((a) => a.data.choices[0]?.message.content ?? "");
    expect(new Set(texts).size).toBeGreaterThan(1);
    const seed = Number(answers[0]!.response.headers.get(SEED_HEADER));
    expect(Number.isInteger(seed)).toBe(true);
    const again = await ask(seed);
    expect(again.data.choices[0]?.message.content).toBe(texts[0]);
    expect(again.response.headers.get(SEED_HEADER)).toBe(String(seed));
  });
});

describe("models.retrieve", () => {
  it("answers in both SDKs' shapes", async () => {
    expect(await openai.models.retrieve(base)).toMatchObject({ id: base, object: "model" });
    expect(await anthropic.models.retrieve(base)).toMatchObject({ id: base, type: "model" });
    const page = await anthropic.models.list();
    expect(page.data.map((m) => m.id)).toContain("auto");
  });
});

describe("Anthropic corners", () => {
  it("count_tokens equals the input_tokens of the same request", async () => {
    const params = { model: base, system: "Be brief.", messages: story };
    const counted = await anthropic.messages.countTokens(params);
    const answered = await anthropic.messages.create({ ...params, max_tokens: 4 });
    expect(counted.input_tokens).toBe(answered.usage.input_tokens);
    expect(counted.input_tokens).toBeGreaterThan(10);
  });

  it("takes a streamed tool request with eager_input_streaming, service_tier and context_management", async () => {
    const stream = anthropic.messages.stream({
      model: "agent",
      max_tokens: 60,
      temperature: 0,
      system: DEFAULT_SYSTEM_PROMPT,
      service_tier: "auto",
      context_management: { edits: [] },
      tools: [
        {
          name: "set_timer",
          description: "Start a timer",
          input_schema: {
            type: "object",
            properties: { minutes: { type: "integer" } },
            required: ["minutes"],
          },
          eager_input_streaming: true,
        },
      ],
      messages: [{ role: "user", content: "Call a tool and set a timer for 15 minutes." }],
    } as Anthropic.MessageStreamParams);
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    expect(final.content.find((b) => b.type === "tool_use")).toMatchObject({
      name: "set_timer",
      input: { minutes: 15 },
    });
  });
});

describe("embeddings under clients' default names", () => {
  it("text-embedding-3-small and LangChain's text-embedding-ada-002 give the base model's vectors", async () => {
    const input = ["a cat", "a dog"];
    const [named, ada, own] = await Promise.all(
      ["text-embedding-3-small", "text-embedding-ada-002", base].map((model) =>
        openai.embeddings.create({ model, input }),
      ),
    );
    expect(named!.data.map((d) => d.embedding)).toEqual(own!.data.map((d) => d.embedding));
    expect(ada!.data.map((d) => d.embedding)).toEqual(own!.data.map((d) => d.embedding));
    expect(named!.model).toBe("text-embedding-3-small");
  });
});

describe("a tool call cut off by max_tokens", () => {
  it("returns what was generated of it with finish_reason length", async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "The weather in a city",
          parameters: {
            type: "object",
            properties: {
              city: { type: "string", enum: ["Paris", "Lisbon", "Oslo"] },
              metric: { type: "boolean" },
            },
            required: ["city", "metric"],
            additionalProperties: false,
          },
        },
      },
    ];
    const request = {
      model: base,
      messages: [{ role: "user" as const, content: "What is the weather like in Oslo?" }],
      tools,
      tool_choice: { type: "function" as const, function: { name: "get_weather" } },
      temperature: 0,
    };
    const whole = await openai.chat.completions.create({ ...request, max_tokens: 80 });
    const full = whole.choices[0]?.message.tool_calls?.[0];
    if (full?.type !== "function") throw new Error("no call");
    expect(whole.choices[0]?.finish_reason).toBe("tool_calls");
    // The forced call's prefix and name take the first ~16 tokens on the demo (one byte a
    // token); 30 cuts inside the arguments. A limit inside the name returns no call.
    const cut = await openai.chat.completions.create({ ...request, max_tokens: 30 });
    const choice = cut.choices[0]!;
    expect(choice.finish_reason).toBe("length");
    const partial = choice.message.tool_calls?.[0];
    if (partial?.type !== "function") throw new Error("the cut-off call was dropped");
    expect(partial.function.name).toBe("get_weather");
    expect(partial.function.arguments.length).toBeGreaterThan(0);
    // What was generated: the start of the whole call's arguments (JSON not yet complete).
    const compact = (s: string) => s.replace(/\s+/g, "");
    expect(compact(full.function.arguments).startsWith(compact(partial.function.arguments))).toBe(true);
    expect(() => JSON.parse(partial.function.arguments) as unknown).toThrow();
  });
});
