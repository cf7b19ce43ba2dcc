/**
 * Ollama's API end to end: the official `ollama` client against the headless server on loopback,
 * the real engine (node-llama-cpp) with the trained demo that ships with the app, greedy where
 * output is compared (the same answer as /v1 gives, so the two routes run the same turn).
 */
import { Ollama, type Message, type Tool } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../../core/chat/turn-deps";
import { checkArguments } from "../../core/tools/argument-check";
import type { RunningServer } from "../start";
import { startDemoServer, type DemoServer } from "../../../testing/server/demo-server";
import { expectSameVector } from "../../../testing/engine/same-vector";

let demo: DemoServer;
let server: RunningServer;
let ollama: Ollama;
let openai: OpenAI;
/** The base model's id (its file name). */
let base: string;

beforeAll(async () => {
  demo = await startDemoServer("ollama-api");
  ({ server, base } = demo);
  ollama = new Ollama({ host: server.url, headers: { Authorization: `Bearer ${server.apiKey}` } });
  openai = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await demo?.close();
});

const ask = (content: string): Message[] => [{ role: "user", content }];
const greedy = { temperature: 0, num_predict: 16 };

describe("the ollama client against the real engine", () => {
  it("lists, shows, reports and versions the loaded model", async () => {
    const { models } = await ollama.list();
    expect(models.map((m) => m.name)).toContain(base);
    expect(models.find((m) => m.name === base)?.size).toBeGreaterThan(0);
    const shown = await ollama.show({ model: `${base}:latest` });
    expect(shown.details.format).toBe("gguf");
    expect(shown.capabilities).toContain("completion");
    const running = await ollama.ps();
    expect(running.models[0]).toMatchObject({ name: base });
    expect((await ollama.version()).version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("chats whole and streamed: the same greedy text as /v1/chat/completions, with counts", async () => {
    const whole = await ollama.chat({ model: base, messages: ask("Hello! Who are you?"), options: greedy });
    expect(whole.done).toBe(true);
    expect(["stop", "length"]).toContain(whole.done_reason);
    expect(whole.message.content.length).toBeGreaterThan(0);
    expect(whole.eval_count).toBeGreaterThan(0);
    expect(whole.eval_count).toBeLessThanOrEqual(16);
    const v1 = await openai.chat.completions.create({
      model: base,
      messages: [{ role: "user", content: "Hello! Who are you?" }],
      temperature: 0,
      max_tokens: 16,
    });
    expect(whole.message.content).toBe(v1.choices[0]?.message.content);
    expect(whole.prompt_eval_count).toBe(v1.usage?.prompt_tokens);

    const parts: string[] = [];
    let last: { done: boolean; done_reason: string; eval_count: number } | null = null;
    const stream = await ollama.chat({
      model: base,
      messages: ask("Hello! Who are you?"),
      options: greedy,
      stream: true,
    });
    for await (const part of stream) {
      parts.push(part.message.content);
      last = part;
    }
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.join("")).toBe(whole.message.content);
    expect(last).toMatchObject({ done: true, done_reason: whole.done_reason, eval_count: whole.eval_count });
  });

  it("generates from a prompt, whole and streamed, and raw", async () => {
    const whole = await ollama.generate({ model: base, prompt: "Tell me a story.", options: greedy });
    expect(whole.response?.length).toBeGreaterThan(0);
    const pieces: string[] = [];
    for await (const part of await ollama.generate({
      model: base,
      prompt: "Tell me a story.",
      options: greedy,
      stream: true,
    }))
      pieces.push(part.response ?? "");
    expect(pieces.join("")).toBe(whole.response);
    const raw = await ollama.generate({
      model: base,
      prompt: "Once upon a time",
      raw: true,
      options: { temperature: 0, num_predict: 8 },
    });
    expect(raw.eval_count).toBeLessThanOrEqual(8);
    expect(raw.done_reason).toBe("length");
  });

  it("a seed reproduces a sampled answer; without one, answers differ", async () => {
    const sampled = (seed?: number) =>
      ollama
        .chat({
          model: base,
          messages: ask("Tell me a story."),
          options: {
            temperature: 1.5,
            top_k: 0,
            top_p: 1,
            num_predict: 16,
            ...(seed === undefined ? {} : { seed }),
          },
        })
        .then((r) => r.message.content);
    expect(await sampled(11)).toBe(await sampled(11));
    const free = await Promise.all([0, 1, 2, 3].map(() => sampled()));
    expect(new Set(free).size).toBeGreaterThan(1);
  });

  it("refuses an unknown option with a readable error", async () => {
    const error = await ollama.chat({ model: base, messages: ask("Hi"), options: { mirostat: 2 } }).then(
      () => null,
      (e: unknown) => e as Error & { status_code?: number },
    );
    expect(error?.message).toMatch(/'mirostat' is not supported/);
    expect(error?.status_code).toBe(400);
  });

  it("format with a JSON schema answers JSON that matches it", async () => {
    const schema = {
      type: "object",
      properties: { answer: { type: "string", enum: ["yes", "no"] } },
      required: ["answer"],
      additionalProperties: false,
    };
    const reply = await ollama.chat({
      model: base,
      messages: ask("Is the sea blue? Answer yes or no."),
      format: schema,
      options: { temperature: 0, num_predict: 32 },
    });
    expect(checkArguments(schema, JSON.parse(reply.message.content))).toEqual({ ok: true });
  });

  it("embeds a batch under any model name, and the legacy route gives the same vector", async () => {
    const { embeddings } = await ollama.embed({
      model: "nomic-embed-text",
      input: ["a cat", "a dog", "tax law"],
    });
    expect(embeddings).toHaveLength(3);
    const { embedding } = await ollama.embeddings({ model: base, prompt: "a cat" });
    expectSameVector(embedding, embeddings[0]);
    const v1 = await openai.embeddings.create({
      model: "text-embedding-3-small",
      input: "a cat",
      encoding_format: "float",
    });
    expectSameVector(v1.data[0]?.embedding, embeddings[0]);
  });

  it("cuts a long input to what the model takes, as Ollama does, unless truncate is false", async () => {
    // The demo's tokenizer is byte-level: a text's first n tokens are its first n bytes.
    const long = "the quick brown fox jumps over the lazy dog. ".repeat(100);
    const cut = await ollama.embed({ model: base, input: long });
    expect(cut.prompt_eval_count).toBeGreaterThan(1000);
    expect(cut.prompt_eval_count).toBeLessThan(long.length);
    const prefix = await ollama.embed({ model: base, input: long.slice(0, cut.prompt_eval_count) });
    expect(prefix.prompt_eval_count).toBe(cut.prompt_eval_count);
    expectSameVector(cut.embeddings[0], prefix.embeddings[0]);
    await expect(ollama.embed({ model: base, input: long, truncate: false })).rejects.toThrow(
      /Input 0 has \d+ tokens; embeddings take at most/,
    );
  });

  it("runs a tool call round trip with the demo's Agent adapter", async () => {
    const tools: Tool[] = [
      {
        type: "function",
        function: {
          name: "set_timer",
          description: "Start a timer",
          parameters: {
            type: "object",
            properties: { minutes: { type: "integer" } },
            required: ["minutes"],
          },
        },
      },
    ];
    const messages: Message[] = [
      { role: "system", content: DEFAULT_SYSTEM_PROMPT },
      // The demo's adapters were trained under the app's system prompt: a client sends it as its own.
      { role: "user", content: "Call a tool and set a timer for 15 minutes." },
    ];
    const first = await ollama.chat({
      model: "agent",
      messages,
      tools,
      options: { temperature: 0, num_predict: 60 },
    });
    expect(first.done_reason).toBe("stop");
    expect(first.message.tool_calls?.map((c) => c.function)).toEqual([
      { index: 0, name: "set_timer", arguments: { minutes: 15 } },
    ]);
    const second = await ollama.chat({
      model: "agent",
      tools,
      options: { temperature: 0, num_predict: 60 },
      messages: [
        ...messages,
        first.message,
        { role: "tool", content: '{"ok": true}', tool_name: "set_timer" },
      ],
    });
    expect(second.done).toBe(true);
    expect(second.message.tool_calls ?? []).toEqual([]);
    expect(second.message.content.length).toBeGreaterThan(0);
  });
});
