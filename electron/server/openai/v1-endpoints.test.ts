/**
 * /v1 chat completions, completions and embeddings against the scripted FakeEngine: how each
 * OpenAI field reaches the engine, and every 400 (named field, OpenAI's own wording for an
 * unknown one). The real engine and the official clients: api-clients.engine.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Core } from "../../core/core-types";
import { FakeEngine } from "../../../testing/engine/fake-engine";
import { FakeCore, listenForTest, readJson, type OpenAiErrorReply } from "../../../testing/server/test-core";

const engine = new FakeEngine();
const core: Core = Object.assign(new FakeCore(), { engine });
let server: Awaited<ReturnType<typeof listenForTest>>;

beforeAll(async () => {
  server = await listenForTest(core);
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  await engine.load("/models/Tiny-Demo.Q8.gguf");
  engine.scripts.length = 0;
  engine.jsonAnswers.length = 0;
  engine.calls.length = 0;
  engine.jsonCalls.length = 0;
  engine.completeCalls.length = 0;
});

function post(path: string, body: unknown) {
  return fetch(`${server.url}/v1/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function expectBadRequest(res: Response, param: string, message?: string | RegExp) {
  const body = await readJson<OpenAiErrorReply>(res);
  expect({ status: res.status, param: body.error.param, type: body.error.type }).toEqual({
    status: 400,
    param,
    type: "invalid_request_error",
  });
  if (typeof message === "string") expect(body.error.message).toBe(message);
  else if (message) expect(body.error.message).toMatch(message);
  return body;
}

/** The SSE `data:` payloads of a streamed answer, `[DONE]` included as a string. */
async function events(res: Response): Promise<unknown[]> {
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice(6))
    .map((data) => (data === "[DONE]" ? data : (JSON.parse(data) as unknown)));
}

const hello = { model: "auto", messages: [{ role: "user", content: "Hi" }] };
const lastOptions = () => engine.calls.at(-1)?.options;

describe("chat completions: strict requests", () => {
  it.each([
    [{ ...hello, frobnicate: true }, "frobnicate"],
    [{ ...hello, functions: [] }, "functions"],
    [{ ...hello, stream_options: { include_usage: true, extra: 1 } }, "stream_options.extra"],
    [
      {
        ...hello,
        response_format: { type: "json_schema", json_schema: { name: "x", schema: {}, extra: 1 } },
      },
      "response_format.json_schema.extra",
    ],
  ])("an unknown field gets OpenAI's message naming it: %j", async (body, field) => {
    await expectBadRequest(
      await post("chat/completions", body),
      field,
      `Unrecognized request argument supplied: ${field}`,
    );
    expect(engine.calls).toHaveLength(0);
  });

  it("accepts the fields clients send that change nothing locally", async () => {
    const res = await post("chat/completions", {
      ...hello,
      user: "u-1",
      safety_identifier: "s",
      metadata: { app: "x" },
      store: false,
      service_tier: "auto",
      prompt_cache_key: "k",
      reasoning_effort: "low",
      verbosity: "low",
      parallel_tool_calls: true,
      stream_options: null,
    });
    expect(res.status).toBe(200);
  });

  it.each([
    [{ ...hello, n: 2 }, "n", /one choice per request/],
    [{ ...hello, top_p: 1.5 }, "top_p"],
    [{ ...hello, frequency_penalty: 3 }, "frequency_penalty"],
    [{ ...hello, presence_penalty: -2.5 }, "presence_penalty"],
    [{ ...hello, top_k: -1 }, "top_k"],
    [{ ...hello, min_p: 2 }, "min_p"],
    [{ ...hello, repeat_penalty: 0 }, "repeat_penalty"],
    [{ ...hello, seed: 1.5 }, "seed"],
    [{ ...hello, logit_bias: { "12": 101 } }, "logit_bias.12"],
    [{ ...hello, logit_bias: { hello: 5 } }, "logit_bias"],
    // An own "__proto__" key (as JSON carries it) is refused, not dropped into an empty bias.
    [
      { ...hello, logit_bias: JSON.parse('{"__proto__": 3}') as object },
      "logit_bias",
      /"__proto__" is not a token id/,
    ],
    [{ ...hello, top_logprobs: 21, logprobs: true }, "top_logprobs"],
    [{ ...hello, top_logprobs: 2 }, "top_logprobs"],
    [{ ...hello, max_tokens: 513 }, "max_tokens"],
    [{ ...hello, max_completion_tokens: 10_000 }, "max_completion_tokens"],
    [{ ...hello, response_format: { type: "xml" } }, "response_format.type"],
    [{ ...hello, response_format: { type: "json_schema" } }, "response_format.json_schema"],
  ])("refuses %j naming %s", async (body, param, message?: RegExp) => {
    await expectBadRequest(await post("chat/completions", body), param, message);
    expect(engine.calls).toHaveLength(0);
  });

  it("refuses a JSON schema the grammar cannot express, naming where", async () => {
    const schema = { type: "object", properties: { a: { not: { type: "string" } } } };
    const res = await post("chat/completions", {
      ...hello,
      response_format: { type: "json_schema", json_schema: { name: "x", schema, strict: true } },
    });
    await expectBadRequest(res, "response_format.json_schema.schema", /"not"/);
    expect(engine.jsonCalls).toHaveLength(0);
  });
});

describe("chat completions: samplers reach the engine", () => {
  it("passes every sampler as GenerateOptions", async () => {
    const res = await post("chat/completions", {
      ...hello,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 40,
      min_p: 0.05,
      repeat_penalty: 1.1,
      repeat_last_n: 32,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      seed: 42,
      stop: "\n\n",
      logit_bias: { "15": -100, "7": 2.5 },
      max_tokens: 100,
      max_completion_tokens: 20,
    });
    expect(res.status).toBe(200);
    expect(lastOptions()).toMatchObject({
      temperature: 0.7,
      topP: 0.9,
      topK: 40,
      minP: 0.05,
      repeatPenalty: { penalty: 1.1, lastTokens: 32, frequencyPenalty: 0.5, presencePenalty: -0.5 },
      seed: 42,
      stop: ["\n\n"],
      tokenBias: { 15: -100, 7: 2.5 },
      // As OpenAI: max_completion_tokens wins over the deprecated max_tokens.
      maxTokens: 20,
    });
  });

  it("leaves absent samplers to the engine's defaults, but draws a fresh seed (said in x-macaron-seed)", async () => {
    const res = await post("chat/completions", hello);
    const options = lastOptions()!;
    expect(options.temperature).toBe(1);
    for (const key of ["topP", "topK", "minP", "repeatPenalty", "tokenBias", "logprobs", "json"])
      expect(options).not.toHaveProperty(key);
    expect(String(options.seed)).toBe(res.headers.get("x-macaron-seed"));
  });

  it("leaves out empty stop strings, which could never end an answer", async () => {
    await post("chat/completions", { ...hello, stop: ["", "END"] });
    expect(lastOptions()?.stop).toEqual(["END"]);
    await post("chat/completions", { ...hello, stop: "" });
    expect(lastOptions()).not.toHaveProperty("stop");
  });

  it("reports usage from the engine's exact prompt count", async () => {
    engine.scripts.push({ tokens: ["a", "b"] });
    const res = await post("chat/completions", hello);
    const body = await readJson<{ usage: Record<string, number> }>(res);
    // FakeEngine: promptTokens 10 for generate().
    expect(body.usage).toEqual({ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 });
  });
});

describe("chat completions: response_format", () => {
  const schema = {
    type: "object",
    properties: { city: { type: "string" }, n: { type: "integer", minimum: 1 } },
    required: ["city", "n"],
    additionalProperties: false,
  };
  const withSchema = {
    ...hello,
    response_format: { type: "json_schema", json_schema: { name: "place", schema, strict: true } },
  };
  type Completion = { choices: Array<{ message: { content: string }; finish_reason: string }> };

  it("json_object asks the engine for any JSON", async () => {
    engine.jsonAnswers.push('{"a":1}');
    const res = await post("chat/completions", { ...hello, response_format: { type: "json_object" } });
    const body = await readJson<Completion>(res);
    expect(engine.jsonCalls.at(-1)?.options.json).toBe(true);
    expect(body.choices[0]).toMatchObject({ message: { content: '{"a":1}' }, finish_reason: "stop" });
  });

  it("json_schema constrains to the schema and returns a valid answer as it is", async () => {
    engine.jsonAnswers.push('{"city":"Oslo","n":3}');
    const body = await readJson<Completion>(await post("chat/completions", withSchema));
    // In the grammar's terms (common/grammar-schema.ts); bounds are left to the check after.
    expect(engine.jsonCalls.at(-1)?.options.jsonSchema).toMatchObject({
      type: "object",
      properties: { city: { type: "string" }, n: { type: "integer" } },
    });
    expect(body.choices[0]).toMatchObject({
      message: { content: '{"city":"Oslo","n":3}' },
      finish_reason: "stop",
    });
  });

  it.each([
    ['{"city":"Os', "cut short"],
    ['{"city":"Oslo","n":0}', "out of the schema's bounds"],
  ])("an answer that does not validate (%s: %s) ends with 'length', text untouched", async (answer) => {
    engine.jsonAnswers.push(answer);
    const body = await readJson<Completion>(await post("chat/completions", withSchema));
    expect(body.choices[0]).toMatchObject({ message: { content: answer }, finish_reason: "length" });
  });

  it("streams a structured answer with the same finish reason", async () => {
    engine.jsonAnswers.push('{"city":"Os');
    const chunks = await events(await post("chat/completions", { ...withSchema, stream: true }));
    const last = chunks.at(-2) as { choices: Array<{ finish_reason: string }> };
    expect(last.choices[0]?.finish_reason).toBe("length");
    expect(chunks.at(-1)).toBe("[DONE]");
  });

  it("refuses response_format together with tools", async () => {
    const res = await post("chat/completions", {
      ...withSchema,
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
    });
    await expectBadRequest(res, "response_format");
  });
});

describe("chat completions: logprobs", () => {
  type Lp = { token: string; logprob: number; bytes: number[]; top_logprobs: unknown[] };

  it("returns OpenAI's content form with top_logprobs alternatives", async () => {
    engine.scripts.push({ tokens: ["Hel", "lo"] });
    const res = await post("chat/completions", { ...hello, logprobs: true, top_logprobs: 2 });
    const body = await readJson<{ choices: Array<{ logprobs: { content: Lp[]; refusal: null } }> }>(res);
    expect(lastOptions()?.logprobs).toEqual({ top: 2 });
    const content = body.choices[0]!.logprobs.content;
    expect(content.map((c) => c.token)).toEqual(["Hel", "lo"]);
    expect(content[0]).toEqual({
      token: "Hel",
      logprob: -0.1,
      bytes: [...Buffer.from("Hel")],
      top_logprobs: [
        { token: "Hel", logprob: -0.1, bytes: [...Buffer.from("Hel")] },
        { token: "alt1", logprob: -2, bytes: [...Buffer.from("alt1")] },
      ],
    });
  });

  it("streams them in the chunk that carries the finish reason", async () => {
    engine.scripts.push({ tokens: ["Hel", "lo"] });
    const chunks = (await events(
      await post("chat/completions", { ...hello, logprobs: true, stream: true }),
    )) as Array<{ choices: Array<{ logprobs: { content: Lp[] } | null; finish_reason: string | null }> }>;
    const withLogprobs = chunks.filter((c) => typeof c === "object" && c.choices[0]?.logprobs);
    expect(withLogprobs).toHaveLength(1);
    expect(withLogprobs[0]!.choices[0]!.finish_reason).toBe("stop");
    expect(withLogprobs[0]!.choices[0]!.logprobs!.content.map((c) => c.token)).toEqual(["Hel", "lo"]);
  });

  it("is null when not asked for", async () => {
    const body = await readJson<{ choices: Array<{ logprobs: unknown }> }>(
      await post("chat/completions", hello),
    );
    expect(body.choices[0]!.logprobs).toBeNull();
  });
});

describe("POST /v1/completions", () => {
  const base = { model: "auto", prompt: "Once upon a time" };
  type TextCompletion = {
    object: string;
    choices: Array<{ text: string; finish_reason: string; logprobs: unknown }>;
    usage: Record<string, number>;
  };

  it("continues the raw prompt with the samplers and exact usage", async () => {
    engine.scripts.push({ tokens: [" there", " was"] });
    const res = await post("completions", { ...base, max_tokens: 5, temperature: 0, top_k: 3 });
    const body = await readJson<TextCompletion>(res);
    expect(engine.completeCalls.at(-1)).toMatchObject({
      prompt: "Once upon a time",
      options: { maxTokens: 5, temperature: 0, topK: 3 },
    });
    expect(body).toMatchObject({
      object: "text_completion",
      choices: [{ text: " there was", finish_reason: "stop", logprobs: null }],
    });
    // FakeEngine counts a raw prompt's words as its tokens.
    expect(body.usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
  });

  it("takes an array of one prompt, and echo false", async () => {
    const res = await post("completions", { ...base, prompt: ["One"], echo: false, best_of: 1 });
    expect(res.status).toBe(200);
    expect(engine.completeCalls.at(-1)?.prompt).toBe("One");
  });

  it.each([
    [{ ...base, prompt: ["a", "b"] }, "prompt"],
    [{ ...base, prompt: [1, 2] }, "prompt"],
    [{ ...base, suffix: "end" }, "suffix"],
    [{ ...base, echo: true }, "echo"],
    [{ ...base, best_of: 3 }, "best_of"],
    [{ ...base, n: 2 }, "n"],
    [{ ...base, logprobs: 30 }, "logprobs"],
    [{ ...base, max_tokens: 100_000 }, "max_tokens"],
    [{ ...base, logit_bias: { x: 1 } }, "logit_bias"],
    [{ ...base, messages: [] }, "messages"],
  ])("refuses %j naming %s", async (body, param) => {
    await expectBadRequest(await post("completions", body), param);
    expect(engine.completeCalls).toHaveLength(0);
  });

  it("streams text_completion chunks, then usage and [DONE]", async () => {
    engine.scripts.push({ tokens: [" a", " b"] });
    const chunks = await events(
      await post("completions", { ...base, stream: true, stream_options: { include_usage: true } }),
    );
    expect(chunks.at(-1)).toBe("[DONE]");
    const objects = chunks.slice(0, -1) as Array<{
      object: string;
      choices: Array<{ text: string; finish_reason: string | null }>;
      usage?: Record<string, number>;
    }>;
    expect(objects.every((c) => c.object === "text_completion")).toBe(true);
    expect(objects.flatMap((c) => c.choices.map((ch) => ch.text)).join("")).toBe(" a b");
    expect(objects.at(-2)?.choices[0]?.finish_reason).toBe("stop");
    expect(objects.at(-1)?.usage?.completion_tokens).toBe(2);
  });

  it("reports logprobs in the legacy form", async () => {
    engine.scripts.push({ tokens: [" a", " b"] });
    const body = await readJson<TextCompletion>(await post("completions", { ...base, logprobs: 2 }));
    expect(body.choices[0]!.logprobs).toEqual({
      tokens: [" a", " b"],
      token_logprobs: [-0.1, -0.1],
      top_logprobs: [
        { " a": -0.1, alt1: -2 },
        { " b": -0.1, alt1: -2 },
      ],
      text_offset: [base.prompt.length, base.prompt.length + 2],
    });
  });

  it("answers 501 when the engine cannot continue raw prompts", async () => {
    Object.defineProperty(engine, "complete", { value: undefined, configurable: true });
    try {
      const res = await post("completions", base);
      expect(res.status).toBe(501);
      expect((await readJson<OpenAiErrorReply>(res)).error.code).toBe("not_implemented");
    } finally {
      delete (engine as { complete?: unknown }).complete;
    }
  });
});

describe("POST /v1/embeddings", () => {
  type Embeddings = {
    object: string;
    data: Array<{ object: string; index: number; embedding: number[] | string }>;
    model: string;
    usage: { prompt_tokens: number; total_tokens: number };
  };

  it("embeds a string and an array, with usage from the engine's token counts", async () => {
    const one = await readJson<Embeddings>(await post("embeddings", { model: "auto", input: "hello" }));
    expect(one).toMatchObject({ object: "list", model: "auto", data: [{ object: "embedding", index: 0 }] });
    expect(one.data[0]!.embedding).toHaveLength(32);
    const many = await readJson<Embeddings>(
      await post("embeddings", { model: "Tiny-Demo.Q8", input: ["hello", "hello world"] }),
    );
    expect(many.data.map((d) => d.index)).toEqual([0, 1]);
    const counted = await engine.embedCounted(["hello", "hello world"]);
    const total = counted.tokens[0]! + counted.tokens[1]!;
    expect(many.usage).toEqual({ prompt_tokens: total, total_tokens: total });
    expect(many.data[1]!.embedding).toEqual(counted.vectors[1]);
  });

  it("encodes base64 as little-endian float32, as OpenAI does", async () => {
    const float = await readJson<Embeddings>(await post("embeddings", { model: "auto", input: "abc" }));
    const b64 = await readJson<Embeddings>(
      await post("embeddings", { model: "auto", input: "abc", encoding_format: "base64" }),
    );
    const bytes = Buffer.from(b64.data[0]!.embedding as string, "base64");
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    const expected = (float.data[0]!.embedding as number[]).map((x) => Math.fround(x));
    expect(decoded).toEqual(expected);
  });

  it("refuses a wrong dimensions without embedding once the size is known", async () => {
    await post("embeddings", { model: "auto", input: "abc" });
    const spy = vi.spyOn(engine, "embedCounted");
    try {
      const res = await post("embeddings", { model: "auto", input: "abc", dimensions: 1536 });
      await expectBadRequest(res, "dimensions", /have 32/);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it("takes dimensions equal to the vector size", async () => {
    const res = await post("embeddings", { model: "auto", input: "abc", dimensions: 32 });
    expect(res.status).toBe(200);
  });

  it.each([
    [{ model: "auto", input: "abc", dimensions: 8 }, "dimensions"],
    [{ model: "auto", input: [1, 2, 3] }, "input"],
    [{ model: "auto", input: [[1, 2]] }, "input"],
    [{ model: "auto", input: [] }, "input"],
    [{ model: "auto", input: "" }, "input"],
    [{ model: "auto", input: new Array<string>(2049).fill("x") }, "input"],
    [{ model: "auto", input: "abc", encoding_format: "int8" }, "encoding_format"],
    [{ model: "auto", input: "abc", truncate: true }, "truncate"],
  ])("refuses %# naming %s", async (body, param) => {
    await expectBadRequest(await post("embeddings", body), param);
  });

  it("says how many inputs a request takes", async () => {
    const res = await post("embeddings", { model: "auto", input: new Array<string>(2049).fill("x") });
    await expectBadRequest(res, "input", /^Invalid 'input': At most 2048 inputs per request/);
  });

  it("refuses an input over the embedding context as context_length_exceeded on input", async () => {
    const res = await post("embeddings", { model: "auto", input: ["short", "word ".repeat(5000)] });
    const body = await expectBadRequest(res, "input");
    expect(body.error.code).toBe("context_length_exceeded");
  });

  it("embeds with the base model under any model name (clients' default names), echoing the name", async () => {
    const named = await post("embeddings", { model: "text-embedding-3-small", input: ["abc", "de"] });
    expect(named.status).toBe(200);
    const body = await readJson<{ model: string; data: { embedding: number[] }[] }>(named);
    expect(body.model).toBe("text-embedding-3-small");
    const auto = await readJson<{ data: { embedding: number[] }[] }>(
      await post("embeddings", { model: "auto", input: ["abc", "de"] }),
    );
    expect(body.data.map((d) => d.embedding)).toEqual(auto.data.map((d) => d.embedding));
  });
});
