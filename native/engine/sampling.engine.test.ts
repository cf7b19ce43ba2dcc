/**
 * Issue 14 in the real engine (node-llama-cpp on the shipped demo model): samplers change the
 * output as they should, json / jsonSchema answers parse, the prompt is counted exactly and
 * bounded by the context (no context shift), raw completions stream and stop, counted
 * embeddings refuse what they cannot take, and logprobs are the model's distribution. The
 * demo's tokenizer is byte-level (256 byte tokens + 3 specials, no merges), so a text's token
 * count is its UTF-8 length.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoBasePath } from "../gguf/demo-files";
import { EngineFailure } from "./engine-failure";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { ModelSession } from "./model-session";
import {
  EMBEDDING_MAX_TOKENS,
  type ChatTurn,
  type EngineMessage,
  type GenerateOptions,
} from "../../common/engine-protocol";
import { EngineRuntime } from "./runtime";

/** Small, so that a prompt near the context is cheap. */
const CONTEXT = 512;

let backend: LlamaBackend;
let demo: ModelSession;

beforeAll(async () => {
  backend = await loadLlamaBackend(1);
  demo = await ModelSession.open(backend, demoBasePath(), { contextSize: CONTEXT, sequences: 1 }, () => {});
});

afterAll(async () => {
  await demo?.dispose();
  await backend?.llama.dispose();
});

const ask = (text: string): ChatTurn[] => [{ role: "user", text }];
const STORY = ask("Tell me a story.");

async function generate(history: ChatTurn[], options: Partial<GenerateOptions> = {}) {
  let streamed = "";
  const result = await demo.generate(
    history,
    { temperature: 0, maxTokens: 24, ...options },
    (text) => (streamed += text),
    new AbortController().signal,
  );
  return { ...result, streamed };
}

async function complete(prompt: string, options: Partial<GenerateOptions> = {}) {
  const pieces: string[] = [];
  const result = await demo.complete(
    prompt,
    { temperature: 0, maxTokens: 24, ...options },
    (text) => pieces.push(text),
    new AbortController().signal,
  );
  return { ...result, pieces };
}

async function failure(promise: Promise<unknown>): Promise<EngineFailure> {
  const error = await promise.then(
    () => new Error("expected an EngineFailure, but it resolved"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineFailure);
  return error as EngineFailure;
}

describe("samplers", () => {
  it("greedy decoding gives the same answer twice", async () => {
    const a = await generate(STORY);
    const b = await generate(STORY);
    expect(a.text.length).toBeGreaterThan(0);
    expect(b.text).toBe(a.text);
  });

  it("temperature 1 is reproducible per seed, and another seed gives another answer", async () => {
    const a1 = await generate(STORY, { temperature: 1, seed: 1 });
    const a2 = await generate(STORY, { temperature: 1, seed: 1 });
    const b = await generate(STORY, { temperature: 1, seed: 2 });
    expect(a2.text).toBe(a1.text);
    expect(b.text).not.toBe(a1.text);
  });

  it("without a seed each sampled answer draws its own (node-llama-cpp's default is the current second)", async () => {
    // Four in a row take well under a second: with the per-second default they were one text.
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await generate(STORY, { temperature: 1 })).text);
    expect(new Set(answers).size).toBeGreaterThan(1);
  });

  it("topK 1 at temperature 1 is greedy decoding", async () => {
    const greedy = await generate(STORY);
    const sampled = await generate(STORY, { temperature: 1, seed: 3 });
    const topK = await generate(STORY, { temperature: 1, seed: 3, topK: 1 });
    expect(sampled.text).not.toBe(greedy.text);
    expect(topK.text).toBe(greedy.text);
  });

  it("a -100 logit bias on the greedy first token makes another token come first", async () => {
    const greedy = await generate(STORY, { maxTokens: 4 });
    const first = greedy.text.codePointAt(0)!;
    expect(first).toBeLessThan(128); // one byte: its token id is its code (byte-level vocabulary)
    const biased = await generate(STORY, { maxTokens: 4, tokenBias: { [first]: -100 } });
    expect(biased.text.length).toBeGreaterThan(0);
    expect(biased.text.codePointAt(0)).not.toBe(first);
    // A positive bias pushes a token in: a large one on "Z" makes every token "Z".
    const pushed = await generate(STORY, { maxTokens: 4, tokenBias: { [90]: 100 } });
    expect(pushed.text).toBe("ZZZZ");
  });

  it("refuses a token bias outside the vocabulary, naming the id", async () => {
    const error = await failure(generate(STORY, { tokenBias: { 259: 5 } }));
    expect(error.code).toBe("invalid_request");
    expect(error.message).toMatch(/Token id 259 .*outside this model's vocabulary \(ids 0 to 258\)/);
  });

  it("a big presence penalty breaks a repetitive greedy answer", async () => {
    const prompt = ask("y".repeat(20));
    const plain = await generate(prompt, { maxTokens: 16 });
    const penalised = await generate(prompt, { maxTokens: 16, repeatPenalty: { presencePenalty: 2 } });
    const distinct = (text: string) => new Set(text).size;
    expect(distinct(plain.text)).toBeLessThanOrEqual(3);
    expect(penalised.text).not.toBe(plain.text);
    expect(distinct(penalised.text)).toBeGreaterThan(distinct(plain.text) + 3);
  });
});

describe("json and jsonSchema", () => {
  it("json: the answer is a JSON object (the built-in json grammar)", async () => {
    const result = await generate(ask("What is 2+2? Answer as JSON."), { json: true, maxTokens: 64 });
    expect(result.stopReason).toBe("eos");
    expect(JSON.parse(result.text)).toBeTypeOf("object");
  });

  it("jsonSchema: the answer has the schema's three fields", async () => {
    const schema = {
      type: "object",
      properties: {
        name: { type: "string", maxLength: 10 },
        age: { type: "integer" },
        color: { enum: ["black", "white"] },
      },
      required: ["name", "age", "color"],
      additionalProperties: false,
    };
    const result = await generate(ask("Describe a cat as JSON."), { jsonSchema: schema, maxTokens: 64 });
    const parsed = JSON.parse(result.text) as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(["age", "color", "name"]);
    expect(Number.isInteger(parsed.age)).toBe(true);
    expect(["black", "white"]).toContain(parsed.color);
  });

  it("refuses a schema the grammar cannot express, json with jsonSchema, and json with tools", async () => {
    const notSchema = { type: "object", properties: { a: { not: { type: "string" } } } };
    const unexpressed = await failure(generate(STORY, { jsonSchema: notSchema }));
    expect(unexpressed.code).toBe("invalid_request");
    expect(unexpressed.message).toMatch(/jsonSchema\.properties\.a uses "not"/);
    const both = await failure(generate(STORY, { json: true, jsonSchema: { type: "object" } }));
    expect(both.message).toMatch(/json and jsonSchema cannot be used together/);
    const tools = generate(STORY, { json: true, tools: [{ name: "t" }] });
    await expect(tools).rejects.toThrow(/json cannot be used together/);
    // The engine keeps working.
    expect((await generate(STORY, { maxTokens: 2 })).tokens).toBe(2);
  });
});

describe("the prompt's length and the context", () => {
  it("counts the prompt exactly: a turn on an empty cache evaluates promptTokens tokens", async () => {
    const result = await generate(ask("Count me."), { sessionKey: "fresh-cache", maxTokens: 2 });
    expect(result.promptTokens).toBeGreaterThan("Count me.".length);
    expect(result.promptTokensEvaluated).toBe(result.promptTokens);
    const again = await generate(ask("Count me."), { sessionKey: "fresh-cache", maxTokens: 2 });
    expect(again.promptTokens).toBe(result.promptTokens);
    expect(again.promptTokensEvaluated).toBeLessThan(result.promptTokens!);
  });

  it("bounds maxTokens by what the context leaves: the answer stops at the context's end", async () => {
    const short = await generate(ask("y"), { maxTokens: 1 });
    const overhead = short.promptTokens! - 1; // the chat template around a 1-byte message
    const room = 6;
    const prompt = ask("y".repeat(CONTEXT - overhead - room));
    const result = await generate(prompt, { maxTokens: 10_000 });
    expect(result.promptTokens).toBe(CONTEXT - room);
    expect(result.stopReason).toBe("maxTokens");
    expect(result.tokens).toBe(room);
    expect(result.contextTokens).toBeLessThanOrEqual(CONTEXT);
  });

  it("refuses a prompt that does not fit with context_length_exceeded, giving both numbers", async () => {
    const error = await failure(generate(ask("y".repeat(CONTEXT + 20))));
    expect(error.code).toBe("context_length_exceeded");
    expect(error.message).toMatch(
      new RegExp(`The prompt has \\d+ tokens, but the model's context holds ${CONTEXT}`),
    );
    const raw = await failure(complete("z".repeat(CONTEXT)));
    expect(raw.code).toBe("context_length_exceeded");
    expect(raw.message).toMatch(new RegExp(`The prompt has ${CONTEXT} tokens`));
  });
});

describe("raw completions", () => {
  it("continue the prompt as it is, streaming pieces that make the text, and honour stop", async () => {
    const free = await complete("Once upon a time");
    expect(free.promptTokens).toBe("Once upon a time".length);
    expect(free.pieces.length).toBeGreaterThan(1);
    expect(free.pieces.join("")).toBe(free.text);
    expect(free.stopReason).toBe("maxTokens");
    const cut = free.text.indexOf(" ", 1);
    expect(cut).toBeGreaterThan(0);
    const stop = free.text.slice(cut, cut + 3);
    const stopped = await complete("Once upon a time", { stop: [stop] });
    expect(stopped.stopReason).toBe("stop");
    expect(stopped.text).toBe(free.text.slice(0, cut));
    expect(stopped.pieces.join("")).toBe(stopped.text);
  });

  it("take the same samplers and grammar as chat answers", async () => {
    const greedy = await complete("The cat");
    const topK = await complete("The cat", { temperature: 1, seed: 5, topK: 1 });
    expect(topK.text).toBe(greedy.text);
    const json = await complete('{"a":', { json: true, maxTokens: 12 });
    expect(json.text.length).toBeGreaterThan(0);
    expect(json.text).not.toBe((await complete('{"a":', { maxTokens: 12 })).text);
  });
});

describe("counted embeddings", () => {
  it("count each input's tokens, give an empty input a zero vector, refuse an input that is too long", async () => {
    const texts = ["hello world", "", "héllo"];
    const result = await demo.embedCounted(texts);
    expect(result.tokens).toEqual(texts.map((t) => Buffer.byteLength(t)));
    expect(result.vectors[1]!.every((x) => x === 0)).toBe(true);
    expect(Math.hypot(...result.vectors[0]!)).toBeCloseTo(1, 5);
    const ok = await demo.embedCounted(["a".repeat(EMBEDDING_MAX_TOKENS)]);
    expect(ok.tokens).toEqual([EMBEDDING_MAX_TOKENS]);
    const error = await failure(demo.embedCounted(["short", "b".repeat(EMBEDDING_MAX_TOKENS + 1)]));
    expect(error.code).toBe("context_length_exceeded");
    expect(error.message).toBe(
      `Input 1 has ${EMBEDDING_MAX_TOKENS + 1} tokens; embeddings take at most ${EMBEDDING_MAX_TOKENS} tokens per input.`,
    );
  });
});

describe("logprobs", () => {
  function expectWellFormed(
    logprobs: NonNullable<Awaited<ReturnType<typeof generate>>["logprobs"]>,
    top: number,
  ) {
    for (const entry of logprobs) {
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.top).toHaveLength(top);
      expect(entry.bytes).toEqual([...Buffer.from(entry.token)]);
      for (let i = 1; i < entry.top.length; i++)
        expect(entry.top[i]!.logprob).toBeLessThanOrEqual(entry.top[i - 1]!.logprob);
      for (const alternative of entry.top) expect(alternative.logprob).toBeLessThanOrEqual(0);
    }
  }

  it("greedy: one per token, and each token is the most likely one of its top list", async () => {
    const result = await generate(STORY, { logprobs: { top: 3 } });
    const logprobs = result.logprobs!;
    expect(logprobs).toHaveLength(result.tokens);
    expect(logprobs.map((l) => l.token).join("")).toBe(result.text);
    expectWellFormed(logprobs, 3);
    for (const entry of logprobs) {
      expect(entry.top[0]!.token).toBe(entry.token);
      expect(Math.abs(entry.logprob - entry.top[0]!.logprob)).toBeLessThan(1e-4);
    }
    // Scoring leaves the answer as it was generated: the same request answers the same.
    expect((await generate(STORY)).text).toBe(result.text);
  });

  it("sampled, stopped and raw answers: the tokens of the text, no more", async () => {
    const sampled = await generate(STORY, { temperature: 1, seed: 9, logprobs: { top: 2 } });
    expect(sampled.logprobs!.map((l) => l.token).join("")).toBe(sampled.text);
    expectWellFormed(sampled.logprobs!, 2);
    // A sampled token is not always the most likely one, but never more likely than it.
    for (const entry of sampled.logprobs!)
      expect(entry.logprob).toBeLessThanOrEqual(entry.top[0]!.logprob + 1e-4);
    const stopped = await complete("Once upon a time", { stop: [" a"], logprobs: { top: 0 } });
    expect(stopped.stopReason).toBe("stop");
    expect(stopped.logprobs!.map((l) => l.token).join("")).toBe(stopped.text);
    expectWellFormed(stopped.logprobs!, 0);
  });
});

describe("through the runtime (the engine's request handling)", () => {
  let runtime: EngineRuntime;
  const messages: EngineMessage[] = [];
  let onMessage: (message: EngineMessage) => void = () => {};
  let nextId = 1;

  beforeAll(async () => {
    runtime = new EngineRuntime(
      (message) => {
        messages.push(message);
        onMessage(message);
      },
      () => Promise.resolve(backend),
    );
    await runtime.handle({
      id: nextId++,
      type: "load",
      path: demoBasePath(),
      contextSize: CONTEXT,
      sequences: 1,
    });
    expect(messages.at(-1)).toMatchObject({ type: "result" });
  });

  afterAll(async () => {
    await runtime?.dispose();
  });

  async function request(body: Record<string, unknown>) {
    const id = nextId++;
    await runtime.handle({ ...body, id });
    const mine = messages.filter((m) => "id" in m && m.id === id);
    return {
      reply: mine.find((m) => m.type === "result" || m.type === "error")!,
      tokens: mine.flatMap((m) => (m.type === "token" ? [m.text] : [])),
    };
  }

  it("complete streams token messages and ends with the result; tools are refused", async () => {
    const { reply, tokens } = await request({
      type: "complete",
      prompt: "Once upon a time",
      options: { temperature: 0, maxTokens: 8 },
    });
    expect(reply).toMatchObject({ type: "result", value: { stopReason: "maxTokens", promptTokens: 16 } });
    expect(tokens.join("")).toBe((reply as { value: { text: string } }).value.text);
    const refused = await request({
      type: "complete",
      prompt: "x",
      options: { temperature: 0, maxTokens: 8, tools: [{ name: "t" }] },
    });
    expect(refused.reply).toMatchObject({ type: "error", code: "invalid_request" });
    expect((refused.reply as { message: string }).message).toMatch(/raw completion cannot call tools/);
  });

  it("an abort ends a completion with stopReason abort", async () => {
    const id = nextId;
    onMessage = (message) => {
      if (message.type === "token" && message.id === id)
        void runtime.handle({ id: 999, type: "abort", target: id });
    };
    const { reply } = await request({
      type: "complete",
      prompt: "The",
      options: { temperature: 0, maxTokens: 24 },
    });
    onMessage = () => {};
    expect(reply).toMatchObject({ type: "result", value: { stopReason: "abort" } });
    expect((reply as { value: { tokens: number } }).value.tokens).toBeLessThan(24);
  });

  it("embedCounted answers counts, and context_length_exceeded for a long input", async () => {
    const ok = await request({ type: "embedCounted", texts: ["abc", "hello"] });
    expect(ok.reply).toMatchObject({ type: "result", value: { tokens: [3, 5] } });
    const long = await request({ type: "embedCounted", texts: ["x".repeat(EMBEDDING_MAX_TOKENS + 5)] });
    expect(long.reply).toMatchObject({ type: "error", code: "context_length_exceeded" });
    expect((long.reply as { message: string }).message).toMatch(/^Input 0 has 2050 tokens/);
  });

  it("an abort naming embedCounted stops it: the error is aborted, and the model is free after", async () => {
    const id = nextId++;
    const texts = Array.from({ length: 400 }, (_, i) => `input number ${i}: ${"words ".repeat(i % 20)}`);
    const running = runtime.handle({ id, type: "embedCounted", texts });
    // On the next turn of the event loop: the engine is between two of its decodes.
    await new Promise((resolve) => setImmediate(resolve));
    await runtime.handle({ id: 998, type: "abort", target: id });
    expect(messages.find((m) => "id" in m && m.id === 998)).toMatchObject({
      type: "result",
      value: { aborted: true },
    });
    await running;
    expect(messages.find((m) => "id" in m && m.id === id)).toMatchObject({ type: "error", code: "aborted" });
    const after = await request({ type: "embedCounted", texts: ["abc"] });
    expect(after.reply).toMatchObject({ type: "result", value: { tokens: [3] } });
  });

  it("validates the new options: bounds, token bias keys, logprobs.top", async () => {
    const bad = async (options: Record<string, unknown>) =>
      (
        await request({
          type: "generate",
          history: [{ role: "user", text: "hi" }],
          options: { temperature: 0, maxTokens: 2, ...options },
        })
      ).reply;
    expect(await bad({ topP: 1.5 })).toMatchObject({ type: "error", code: "invalid_request" });
    expect(await bad({ topK: 1.5 })).toMatchObject({ type: "error", code: "invalid_request" });
    expect(await bad({ minP: -0.1 })).toMatchObject({ type: "error", code: "invalid_request" });
    expect(await bad({ repeatPenalty: { presencePenalty: 3 } })).toMatchObject({ code: "invalid_request" });
    expect(await bad({ tokenBias: { "-1": 5 } })).toMatchObject({ code: "invalid_request" });
    expect(await bad({ tokenBias: { "12": 101 } })).toMatchObject({ code: "invalid_request" });
    expect(await bad({ logprobs: { top: 21 } })).toMatchObject({ code: "invalid_request" });
    const ok = await bad({
      topP: 0.9,
      topK: 40,
      minP: 0.05,
      tokenBias: { "12": -100 },
      logprobs: { top: 20 },
    });
    expect(ok).toMatchObject({ type: "result", value: { tokens: 2 } });
    expect((ok as { value: { logprobs: unknown[] } }).value.logprobs).toHaveLength(2);
  });
});
