/**
 * Anthropic's Messages API end to end: the official `@anthropic-ai/sdk` client against the
 * headless server on loopback, the real engine (node-llama-cpp) with the trained demo that
 * ships with the app (its base and its Agent adapter), greedy where output is compared.
 */
import Anthropic, { AuthenticationError, BadRequestError } from "@anthropic-ai/sdk";
import type {
  MessageCreateParamsNonStreaming,
  MessageParam,
} from "@anthropic-ai/sdk/resources/messages/messages";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../../core/chat/turn-deps";
import type { RunningServer } from "../start";
import { startDemoServer, type DemoServer } from "../../../testing/server/demo-server";

let demo: DemoServer;
let server: RunningServer;
let client: Anthropic;
/** The base model's id on /v1 (its file name). */
let base: string;

beforeAll(async () => {
  demo = await startDemoServer("v1-messages");
  ({ server, base } = demo);
  // The SDK adds /v1/messages to its base URL itself: the server's origin, not …/v1.
  client = new Anthropic({ apiKey: server.apiKey, baseURL: server.url, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await demo?.close();
});

const ask = (text: string): MessageParam[] => [{ role: "user", content: text }];

/**
 * The SDK's current types no longer list the sampling fields (Anthropic deprecated them for its
 * newest models), but it sends the body as given, and local-model clients still set them.
 */
type WithSamplers = MessageCreateParamsNonStreaming & { temperature?: number; top_k?: number };
const greedy = (params: Omit<WithSamplers, "temperature">) =>
  client.messages.create({ ...params, temperature: 0 } as WithSamplers);

const timerTool = {
  name: "set_timer",
  description: "Start a timer",
  input_schema: {
    type: "object" as const,
    properties: { minutes: { type: "integer" } },
    required: ["minutes"],
    additionalProperties: false,
  },
};

describe("/v1/messages with the real engine and the Anthropic SDK", () => {
  it("answers a message with text, end_turn and exact usage; temperature 0 twice gives the same text", async () => {
    const params = { model: base, max_tokens: 16, messages: ask("Hello! Who are you?") };
    const first = await greedy(params);
    expect(first).toMatchObject({
      type: "message",
      role: "assistant",
      model: base,
      id: expect.stringMatching(/^msg_/) as unknown,
    });
    expect(["end_turn", "max_tokens"]).toContain(first.stop_reason);
    const text = first.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text.length).toBeGreaterThan(0);
    expect(first.usage.output_tokens).toBeGreaterThan(0);
    expect(first.usage.output_tokens).toBeLessThanOrEqual(16);
    const second = await greedy(params);
    expect(second.content).toEqual(first.content);
    expect(second.usage).toEqual(first.usage);
  });

  it("passes top_k to the sampler: top_k 1 at temperature 1 answers as greedy decoding does", async () => {
    const params = { model: base, max_tokens: 24, messages: ask("Tell me a story about a cat.") };
    const greedyAnswer = await greedy(params);
    // Without top_k the demo's sampled answers leave the greedy path (so the check below can fail).
    const free = await Promise.all(
      [0, 1, 2].map(() => client.messages.create({ ...params, temperature: 1 } as WithSamplers)),
    );
    expect(
      free.some((answer) => JSON.stringify(answer.content) !== JSON.stringify(greedyAnswer.content)),
    ).toBe(true);
    for (let i = 0; i < 2; i++) {
      const sampled = await client.messages.create({ ...params, temperature: 1, top_k: 1 } as WithSamplers);
      expect(sampled.content).toEqual(greedyAnswer.content);
    }
  });

  it("puts the system prompt in the prompt as chat completions does (same token count)", async () => {
    const system = "You are a pirate. Answer in one word.";
    const withSystem = await greedy({ model: base, max_tokens: 4, system, messages: ask("Hi") });
    const without = await greedy({ model: base, max_tokens: 4, messages: ask("Hi") });
    expect(withSystem.usage.input_tokens).toBeGreaterThan(without.usage.input_tokens + 5);
    const openai = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
    const chat = await openai.chat.completions.create({
      model: base,
      max_tokens: 4,
      temperature: 0,
      messages: [
        { role: "system", content: system },
        { role: "user", content: "Hi" },
      ],
    });
    expect(withSystem.usage.input_tokens).toBe(chat.usage?.prompt_tokens);
    expect(withSystem.content[0]).toEqual({ type: "text", text: chat.choices[0]?.message.content });
  });

  it("streams text events the SDK's stream helper assembles into the same message", async () => {
    const params = { model: base, max_tokens: 16, messages: ask("Hello! Who are you?") };
    const whole = await greedy(params);
    const deltas: string[] = [];
    const stream = client.messages.stream({ ...params, temperature: 0 });
    stream.on("text", (delta) => deltas.push(delta));
    const final = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(final.content).toEqual(whole.content);
    expect(deltas.join("")).toBe(whole.content[0]?.type === "text" ? whole.content[0].text : "");
    expect(final.stop_reason).toBe(whole.stop_reason);
    // Exact usage at the end of the stream too (message_delta carries input_tokens).
    expect(final.usage).toMatchObject(whole.usage);
  });

  it("stops at a stop sequence and names it", async () => {
    const params = { model: base, max_tokens: 24, messages: ask("Hello! Who are you?") };
    const free = await greedy(params);
    const text = free.content[0]?.type === "text" ? free.content[0].text : "";
    // A word from the middle of the free answer: the stopped answer is the text before it.
    const word = text.split(/\s+/).filter((w) => w.length > 2)[2] ?? text.slice(4, 8);
    expect(word.length).toBeGreaterThan(0);
    // Two sequences, the one that matches second: the engine names it (not a guess from one).
    const stopped = await greedy({ ...params, stop_sequences: ["§never§", word] });
    expect(stopped.stop_reason).toBe("stop_sequence");
    expect(stopped.stop_sequence).toBe(word);
    const stoppedText = stopped.content[0]?.type === "text" ? stopped.content[0].text : "";
    expect(stoppedText).toBe(text.slice(0, text.indexOf(word)));
  });

  it("runs a tool_use round trip with the demo's Agent adapter", async () => {
    // The demo's adapters were trained under the app's system prompt: a client sends it as its own.
    const messages = ask("Call a tool and set a timer for 15 minutes.");
    const first = await greedy({
      model: "agent",
      max_tokens: 60,
      system: DEFAULT_SYSTEM_PROMPT,
      tools: [timerTool],
      messages,
    });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error("no tool_use block");
    expect(use).toMatchObject({
      id: expect.stringMatching(/^toolu_/) as unknown,
      name: "set_timer",
      input: { minutes: 15 },
    });
    // No call syntax leaks into the text.
    for (const block of first.content) if (block.type === "text") expect(block.text).not.toContain('{"tool"');

    const answer = await greedy({
      model: "agent",
      max_tokens: 60,
      system: DEFAULT_SYSTEM_PROMPT,
      tools: [timerTool],
      messages: [
        ...messages,
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: use.id, content: "Timer set for 15 minutes." }],
        },
      ],
    });
    expect(answer.stop_reason).not.toBe("tool_use");
    const text = answer.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text.length).toBeGreaterThan(0);
    // The call and its result are in the prompt: more than the question alone.
    expect(answer.usage.input_tokens).toBeGreaterThan(first.usage.input_tokens);
  });

  it("streams the Agent's tool_use with its input as JSON deltas", async () => {
    const stream = client.messages.stream({
      model: "agent",
      max_tokens: 60,
      temperature: 0,
      system: DEFAULT_SYSTEM_PROMPT,
      tools: [timerTool],
      messages: ask("Please set a timer for 25 minutes with a tool."),
    });
    const json: string[] = [];
    stream.on("inputJson", (partial) => json.push(partial));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    const use = final.content.find((b) => b.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error("no tool_use block");
    expect(use.name).toBe("set_timer");
    expect(JSON.parse(json.join(""))).toEqual(use.input);
    expect(use.input).toEqual({ minutes: expect.any(Number) as unknown });
  });

  it("refuses an unknown field with the SDK's BadRequestError, naming it", async () => {
    const error = await client.messages
      .create({ model: base, max_tokens: 4, messages: ask("Hi"), presence_penalty: 1 } as WithSamplers)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).status).toBe(400);
    expect((error as BadRequestError).error).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: expect.stringContaining("'presence_penalty'") as unknown,
      },
    });
  });

  it("authenticates with x-api-key and refuses a wrong key with AuthenticationError", async () => {
    const wrong = new Anthropic({ apiKey: "not-the-key", baseURL: server.url, maxRetries: 0 });
    const error = await wrong.messages.create({ model: base, max_tokens: 4, messages: ask("Hi") }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(401);
  });
});
