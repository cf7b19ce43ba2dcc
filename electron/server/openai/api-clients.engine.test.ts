/**
 * /v1 chat completions, completions and embeddings end to end, as real clients call them: the
 * official `openai` client and the Vercel AI SDK's OpenAI-compatible provider against the
 * headless server on loopback, the real engine (node-llama-cpp) on the demo base model.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { cosineSimilarity, embed, embedMany, generateText, jsonSchema, Output, streamText } from "ai";
import OpenAI, { APIError } from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { checkArguments } from "../../core/tools/argument-check";
import type { RunningServer } from "../start";
import { startDemoServer, type DemoServer } from "../../../testing/server/demo-server";
import { expectSameVector } from "../../../testing/engine/same-vector";

let demo: DemoServer;
let server: RunningServer;
let client: OpenAI;
let provider: ReturnType<typeof createOpenAICompatible>;
/** The base model's id on /v1 (its file name). */
let base: string;

beforeAll(async () => {
  demo = await startDemoServer("v1-clients");
  ({ server, base } = demo);
  client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
  provider = createOpenAICompatible({
    name: "macaron",
    apiKey: server.apiKey,
    baseURL: `${server.url}/v1`,
    includeUsage: true,
    supportsStructuredOutputs: true,
  });
}, 120_000);
afterAll(async () => {
  await demo?.close();
});

const question = [{ role: "user" as const, content: "Tell me something about the sea." }];

/** A small answer: the demo's tokenizer spells JSON a character at a time, so it stays short. */
const verdict = {
  type: "object",
  properties: { answer: { type: "string", enum: ["yes", "no"] } },
  required: ["answer"],
  additionalProperties: false,
};
/** Enough for `{ "answer": "yes" }` with the grammar's whitespace, one character a token. */
const JSON_TOKENS = 32;

/** llama.cpp's samplers, which the server takes beside OpenAI's (the client passes them through). */
type Params = Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> & {
  top_k?: number;
  min_p?: number;
  repeat_penalty?: number;
};

async function badRequest(run: () => Promise<unknown>): Promise<APIError> {
  const error = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  expect((error as APIError).status).toBe(400);
  return error as APIError;
}

describe("openai client: samplers", () => {
  it("greedy answers twice the same; a seed repeats its sample, other seeds differ", async () => {
    const ask = (extra: Params) =>
      client.chat.completions
        .create({ model: base, messages: question, max_tokens: 12, ...extra })
        .then((c) => c.choices[0]!.message.content ?? "");
    const greedy = [await ask({ temperature: 0 }), await ask({ temperature: 0 })];
    expect(greedy[0]).not.toBe("");
    expect(greedy[1]).toBe(greedy[0]);
    const sampled = { temperature: 1.5, top_p: 1, top_k: 0, min_p: 0 };
    const seed1 = [await ask({ ...sampled, seed: 1 }), await ask({ ...sampled, seed: 1 })];
    expect(seed1[1]).toBe(seed1[0]);
    const others = [await ask({ ...sampled, seed: 2 }), await ask({ ...sampled, seed: 3 })];
    expect(new Set([seed1[0], ...others, greedy[0]]).size).toBeGreaterThan(1);
  });

  it("top_k 1 samples what greedy picks; penalties change a seeded sample", async () => {
    const ask = (extra: Params) =>
      client.chat.completions
        .create({ model: base, messages: question, max_tokens: 16, ...extra })
        .then((c) => c.choices[0]!.message.content ?? "");
    const greedy = await ask({ temperature: 0 });
    expect(await ask({ temperature: 1.5, top_k: 1, seed: 5 })).toBe(greedy);
    const sampled = { temperature: 0.8, seed: 7 };
    const plain = await ask(sampled);
    const penalised = await ask({
      ...sampled,
      frequency_penalty: 2,
      presence_penalty: 2,
      repeat_penalty: 1.5,
    });
    expect(penalised).not.toBe(plain);
  });

  it("reports exact usage: completion tokens as generated, the prompt as the tokenizer counts it", async () => {
    const completion = await client.chat.completions.create({
      model: base,
      messages: question,
      temperature: 0,
      max_tokens: 6,
      logprobs: true,
    });
    const usage = completion.usage!;
    // One logprob entry per generated token: the count is the engine's, not an estimate.
    expect(usage.completion_tokens).toBe(completion.choices[0]!.logprobs!.content!.length);
    expect(usage.prompt_tokens).toBeGreaterThan(5);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it("returns well-formed logprobs: one per token, alternatives most likely first", async () => {
    const completion = await client.chat.completions.create({
      model: base,
      messages: question,
      temperature: 0,
      max_tokens: 6,
      logprobs: true,
      top_logprobs: 3,
    });
    const choice = completion.choices[0]!;
    const content = choice.logprobs!.content!;
    expect(content.length).toBeGreaterThan(0);
    expect(content.map((c) => c.token).join("")).toBe(choice.message.content);
    for (const entry of content) {
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.bytes).toEqual([...Buffer.from(entry.token)]);
      expect(entry.top_logprobs).toHaveLength(3);
      const lps = entry.top_logprobs.map((t) => t.logprob);
      expect([...lps].sort((a, b) => b - a)).toEqual(lps);
      // Greedy: the chosen token is the most likely one.
      expect(entry.top_logprobs[0]!.token).toBe(entry.token);
    }
  });

  it("an unknown field gets OpenAI's 400 naming it; so does max_tokens past the context", async () => {
    const unknown = await badRequest(() =>
      client.chat.completions.create({
        model: base,
        messages: question,
        max_tokens: 4,
        frobnicate: true,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming),
    );
    expect(unknown.message).toContain("Unrecognized request argument supplied: frobnicate");
    expect(unknown.param).toBe("frobnicate");
    const tooLong = await badRequest(() =>
      client.chat.completions.create({ model: base, messages: question, max_tokens: 1_000_000 }),
    );
    expect(tooLong.param).toBe("max_tokens");
    expect(tooLong.message).toMatch(/context holds \d+ tokens/);
    // Only the loaded model knows its vocabulary; the refusal still names the field.
    const outside = await badRequest(() =>
      client.chat.completions.create({
        model: base,
        messages: question,
        max_tokens: 4,
        logit_bias: { "99999999": 5 },
      }),
    );
    expect(outside.param).toBe("logit_bias");
    expect(outside.message).toMatch(/99999999/);
  });

  it("logit_bias +100 on one token makes greedy decoding write only it", async () => {
    const ask = (bias?: Record<string, number>) =>
      client.chat.completions
        .create({
          model: base,
          messages: question,
          temperature: 0,
          max_tokens: 8,
          ...(bias ? { logit_bias: bias } : {}),
        })
        .then((c) => c.choices[0]!.message.content ?? "");
    const free = await ask();
    // Id 100 is a plain byte in the demo's byte-level vocabulary (259 ids), not a special token.
    const forced = await ask({ "100": 100 });
    expect(forced.length).toBeGreaterThan(1);
    expect(new Set(forced).size).toBe(1);
    expect(forced).not.toBe(free);
  });
});

describe("openai client: response_format json_schema", () => {
  const responseFormat = {
    type: "json_schema" as const,
    json_schema: { name: "verdict", schema: verdict, strict: true },
  };
  const ask = [{ role: "user" as const, content: "Is the sea salty?" }];

  it("answers JSON that validates against the schema", async () => {
    const completion = await client.chat.completions.create({
      model: base,
      messages: ask,
      temperature: 0,
      max_tokens: JSON_TOKENS,
      response_format: responseFormat,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("stop");
    expect(checkArguments(verdict, JSON.parse(choice.message.content ?? ""))).toEqual({ ok: true });
  });

  it("streams JSON that validates, the same as the whole answer", async () => {
    const whole = await client.chat.completions.create({
      model: base,
      messages: ask,
      temperature: 0,
      max_tokens: JSON_TOKENS,
      response_format: responseFormat,
    });
    const stream = await client.chat.completions.create({
      model: base,
      messages: ask,
      temperature: 0,
      max_tokens: JSON_TOKENS,
      response_format: responseFormat,
      stream: true,
    });
    let text = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe("stop");
    expect(checkArguments(verdict, JSON.parse(text))).toEqual({ ok: true });
    expect(text).toBe(whole.choices[0]!.message.content);
  });

  it("serves the client's own structured-output helper (zodResponseFormat + parse)", async () => {
    const completion = await client.chat.completions.parse({
      model: base,
      messages: ask,
      temperature: 0,
      max_tokens: JSON_TOKENS,
      response_format: zodResponseFormat(z.object({ answer: z.enum(["yes", "no"]) }), "verdict"),
    });
    expect(["yes", "no"]).toContain(completion.choices[0]!.message.parsed?.answer);
  });

  it("cut by max_tokens: finish_reason length and the text as it is", async () => {
    const completion = await client.chat.completions.create({
      model: base,
      messages: ask,
      temperature: 0,
      max_tokens: 2,
      response_format: responseFormat,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("length");
    expect(() => JSON.parse(choice.message.content ?? "") as unknown).toThrow();
  });

  it("refuses a schema the grammar cannot express, naming where", async () => {
    const error = await badRequest(() =>
      client.chat.completions.create({
        model: base,
        messages: ask,
        max_tokens: 4,
        response_format: {
          type: "json_schema",
          json_schema: { name: "x", schema: { type: "object", not: { required: ["a"] } } },
        },
      }),
    );
    expect(error.param).toBe("response_format.json_schema.schema");
  });
});

describe("openai client: completions and embeddings", () => {
  const prompt = "The capital of France is";

  it("continues a raw prompt, whole and streamed alike (greedy), with logprobs in the legacy form", async () => {
    const whole = await client.completions.create({
      model: base,
      prompt,
      temperature: 0,
      max_tokens: 8,
      logprobs: 2,
    });
    const choice = whole.choices[0]!;
    expect(whole.object).toBe("text_completion");
    expect(choice.text.length).toBeGreaterThan(0);
    expect(whole.usage?.completion_tokens).toBe(choice.logprobs!.tokens!.length);
    expect(choice.logprobs!.tokens!.join("")).toBe(choice.text);
    expect(choice.logprobs!.text_offset![0]).toBe(prompt.length);
    expect(Object.keys(choice.logprobs!.top_logprobs![0]!).length).toBeGreaterThan(0);

    const stream = await client.completions.create({
      model: base,
      prompt,
      temperature: 0,
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(choice.text);
    expect(usage).toEqual(whole.usage);
  });

  it("embeds similar texts closer than unrelated ones (base64 by default in the client)", async () => {
    const res = await client.embeddings.create({
      model: base,
      input: [
        "The cat sleeps on the warm mat.",
        "A cat is sleeping on a warm rug.",
        "Quarterly tax filings are due in April.",
      ],
    });
    const [a, b, c] = res.data.map((d) => d.embedding);
    expect(a!.length).toBeGreaterThan(8);
    expect(cosineSimilarity(a!, b!)).toBeGreaterThan(cosineSimilarity(a!, c!));
    expect(res.usage.prompt_tokens).toBeGreaterThan(10);
    const float = await client.embeddings.create({ model: base, input: "hello", encoding_format: "float" });
    const b64 = await client.embeddings.create({ model: base, input: "hello" });
    expect(b64.data[0]!.embedding).toEqual(float.data[0]!.embedding.map((x) => Math.fround(x)));
  });
});

describe("Vercel AI SDK (openai-compatible provider)", () => {
  it("generateText and streamText with default settings", async () => {
    const whole = await generateText({
      model: provider.chatModel(base),
      prompt: "Say hello.",
      temperature: 0,
      maxOutputTokens: 10,
    });
    expect(whole.text.length).toBeGreaterThan(0);
    expect(whole.usage.outputTokens).toBeGreaterThan(0);
    const streamed = streamText({
      model: provider.chatModel(base),
      prompt: "Say hello.",
      temperature: 0,
      maxOutputTokens: 10,
    });
    expect(await streamed.text).toBe(whole.text);
    expect((await streamed.usage).outputTokens).toBe(whole.usage.outputTokens);
  });

  it("structured output through json_schema, whole and streamed", async () => {
    const schema = jsonSchema<{ answer: "yes" | "no" }>(verdict as never);
    const whole = await generateText({
      model: provider.chatModel(base),
      prompt: "Is the sea salty?",
      temperature: 0,
      maxOutputTokens: JSON_TOKENS,
      output: Output.object({ schema }),
    });
    expect(checkArguments(verdict, whole.output)).toEqual({ ok: true });
    const streamed = streamText({
      model: provider.chatModel(base),
      prompt: "Is the sea salty?",
      temperature: 0,
      maxOutputTokens: JSON_TOKENS,
      output: Output.object({ schema }),
    });
    expect(await streamed.output).toEqual(whole.output);
  });

  it("a completion model, embed and embedMany", async () => {
    const text = await generateText({
      model: provider.completionModel(base),
      prompt: "The capital of France is",
      temperature: 0,
      maxOutputTokens: 6,
    });
    expect(text.text.length).toBeGreaterThan(0);
    const one = await embed({ model: provider.embeddingModel(base), value: "A cat on a mat." });
    const many = await embedMany({
      model: provider.embeddingModel(base),
      values: ["A cat on a mat.", "A kitten on a rug.", "Interest rates rose again."],
    });
    expectSameVector(many.embeddings[0], one.embedding);
    const [a, b, c] = many.embeddings;
    expect(cosineSimilarity(a!, b!)).toBeGreaterThan(cosineSimilarity(a!, c!));
    expect(many.usage.tokens).toBeGreaterThan(one.usage.tokens);
  });
});
