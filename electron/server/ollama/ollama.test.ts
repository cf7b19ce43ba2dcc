/**
 * Ollama's API with the scripted engine: each route's shape, `options` mapped onto the same
 * samplers as /v1 (and the unknown ones refused in Ollama's `{"error"}` shape), NDJSON streams,
 * tools both ways, `format`, embeddings under any name, the key. The real engine and the
 * official `ollama` client: ollama.engine.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeCore, listenForTest, readJson } from "../../../testing/server/test-core";
import { SEED_HEADER } from "../openai/sampling";

let server: Awaited<ReturnType<typeof listenForTest>>;
const core = new FakeCore();
const engine = core.engine;

beforeAll(async () => {
  server = await listenForTest(core);
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  vi.restoreAllMocks();
  await engine.load("/models/Tiny-Demo.Q8.gguf");
  engine.tokens = ["Hel", "lo", "!"];
  engine.scripts.length = 0;
  engine.calls.length = 0;
  engine.completeCalls.length = 0;
  engine.failWith = null;
});

function call(path: string, body?: unknown, key: string | null = server.apiKey) {
  return fetch(`${server.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function errorOf(res: Response, status: number): Promise<string> {
  expect(res.status).toBe(status);
  const body = await readJson<Record<string, unknown>>(res);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(typeof body.error).toBe("string");
  return body.error as string;
}

async function lines(res: Response): Promise<Record<string, unknown>[]> {
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/x-ndjson");
  const text = await res.text();
  expect(text.endsWith("\n")).toBe(true);
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const BASE = "Tiny-Demo.Q8";
const hi = [{ role: "user", content: "Hi" }];

describe("Ollama's model routes", () => {
  it("GET /api/version, /api/tags and /api/ps list the loaded model (and auto)", async () => {
    expect(await readJson(await call("/api/version"))).toMatchObject({
      version: expect.any(String) as unknown,
    });
    const tags = await readJson<{ models: { name: string; model: string; details: { format: string } }[] }>(
      await call("/api/tags"),
    );
    expect(tags.models.map((m) => m.name)).toEqual([BASE, "auto"]);
    expect(tags.models[0]).toMatchObject({ model: BASE, details: { format: "gguf" } });
    const ps = await readJson<{ models: { name: string; context_length: number }[] }>(await call("/api/ps"));
    expect(ps.models).toEqual([expect.objectContaining({ name: BASE, context_length: 512 })]);
  });

  it("POST /api/show describes a model; an unknown one is a 404 in Ollama's shape", async () => {
    const shown = await readJson<Record<string, unknown>>(
      await call("/api/show", { model: `${BASE}:latest` }),
    );
    expect(shown).toMatchObject({
      details: { format: "gguf" },
      capabilities: expect.arrayContaining(["completion", "tools"]) as unknown,
    });
    expect(await errorOf(await call("/api/show", { model: "llama3" }), 404)).toMatch(
      /'llama3' does not exist/,
    );
  });

  it("needs the key, and answers without it in Ollama's shape", async () => {
    expect(await errorOf(await call("/api/tags", undefined, null), 401)).toMatch(/key/i);
    expect(await errorOf(await call("/api/chat", { model: BASE, messages: hi }, "wrong"), 401)).toMatch(
      /key/i,
    );
  });

  it("answers the model-management routes 501 with the reason", async () => {
    expect(await errorOf(await call("/api/pull", { model: "llama3" }), 501)).toMatch(/managed in Macaron/);
  });
});

describe("POST /api/chat", () => {
  it("answers whole with stream false: message, done_reason, counts; options reach the samplers", async () => {
    const res = await call("/api/chat", {
      model: BASE,
      messages: [{ role: "system", content: "Be brief." }, ...hi],
      stream: false,
      options: {
        temperature: 0.2,
        top_k: 5,
        top_p: 0.5,
        min_p: 0.1,
        num_predict: 8,
        seed: 42,
        stop: ["\n"],
        repeat_penalty: 1.2,
        num_ctx: 8192,
        mirostat: 0,
      },
    });
    expect(res.headers.get(SEED_HEADER)).toBe("42");
    const body = await readJson<Record<string, unknown>>(res);
    expect(body).toMatchObject({
      model: BASE,
      message: { role: "assistant", content: "Hello!" },
      done: true,
      done_reason: "stop",
      prompt_eval_count: 7,
      eval_count: 3,
    });
    expect(typeof body.created_at).toBe("string");
    expect(engine.calls.at(-1)?.history).toEqual([
      { role: "system", text: "Be brief." },
      { role: "user", text: "Hi" },
    ]);
    expect(engine.calls.at(-1)?.options).toMatchObject({
      temperature: 0.2,
      topK: 5,
      topP: 0.5,
      minP: 0.1,
      maxTokens: 8,
      seed: 42,
      stop: ["\n"],
      repeatPenalty: { penalty: 1.2 },
    });
  });

  it("defaults to Ollama's temperature, a fresh seed per request (said in the header), and no answer limit", async () => {
    const a = await call("/api/chat", { model: BASE, messages: hi, stream: false });
    const b = await call("/api/chat", { model: BASE, messages: hi, stream: false });
    expect(a.headers.get(SEED_HEADER)).not.toBe(b.headers.get(SEED_HEADER));
    expect(engine.calls[0]?.options).toMatchObject({ temperature: 0.8, maxTokens: 512 });
    expect(engine.calls[0]?.options.seed).toBe(Number(a.headers.get(SEED_HEADER)));
  });

  it("streams NDJSON by default: content pieces, then a done line with the counts", async () => {
    const res = await call("/api/chat", { model: BASE, messages: hi });
    const got = await lines(res);
    const last = got.at(-1)!;
    expect(last).toMatchObject({
      done: true,
      done_reason: "stop",
      eval_count: 3,
      message: { role: "assistant", content: "" },
    });
    const pieces = got.slice(0, -1);
    expect(pieces.every((l) => l.done === false)).toBe(true);
    expect(pieces.map((l) => (l.message as { content: string }).content).join("")).toBe("Hello!");
  });

  it("says length when num_predict cuts the answer", async () => {
    const body = await readJson<Record<string, unknown>>(
      await call("/api/chat", { model: BASE, messages: hi, stream: false, options: { num_predict: 2 } }),
    );
    expect(body).toMatchObject({ message: { content: "Hello" }, done_reason: "length", eval_count: 2 });
  });

  it.each([
    [{ frobnicate: 1 }, /Unknown option 'frobnicate'/],
    [{ mirostat: 2 }, /'mirostat' is not supported/],
    [{ temperature: 9 }, /Invalid option 'temperature'/],
    [{ num_predict: 0 }, /Invalid option 'num_predict'/],
    [{ num_predict: 100_000 }, /'num_predict' is 100000, but the loaded model's context holds 512/],
  ])("refuses options %j in Ollama's error shape", async (options, message) => {
    const res = await call("/api/chat", { model: BASE, messages: hi, stream: false, options });
    expect(await errorOf(res, 400)).toMatch(message);
    expect(engine.calls).toHaveLength(0);
  });

  it("refuses unknown fields, images, think and an unknown model before generating", async () => {
    expect(await errorOf(await call("/api/chat", { model: BASE, messages: hi, bogus: 1 }), 400)).toMatch(
      /'bogus'/,
    );
    const image = [{ role: "user", content: "What is it?", images: ["aGk="] }];
    expect(await errorOf(await call("/api/chat", { model: BASE, messages: image }), 400)).toMatch(/images/);
    expect(await errorOf(await call("/api/chat", { model: BASE, messages: hi, think: true }), 400)).toMatch(
      /think/,
    );
    expect(await errorOf(await call("/api/chat", { model: "llama3:8b", messages: hi }), 404)).toMatch(
      /llama3:8b/,
    );
    expect(engine.calls).toHaveLength(0);
  });

  it("answers no messages as Ollama does (the model is loaded: done_reason load)", async () => {
    const body = await readJson(await call("/api/chat", { model: BASE, messages: [] }));
    expect(body).toMatchObject({ done: true, done_reason: "load" });
    expect(engine.calls).toHaveLength(0);
  });

  it('format: a JSON schema and "json" reach the grammar', async () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    engine.scripts.push({ tokens: ['{"a":"x"}'] }, { tokens: ['{"b":1}'] });
    const withSchema = await readJson<{ message: { content: string }; done_reason: string }>(
      await call("/api/chat", { model: BASE, messages: hi, stream: false, format: schema }),
    );
    expect(withSchema.message.content).toBe('{"a":"x"}');
    const json = await readJson<{ message: { content: string } }>(
      await call("/api/chat", { model: BASE, messages: hi, stream: false, format: "json" }),
    );
    expect(json.message.content).toBe('{"b":1}');
    const options = engine.calls.map((c) => c.options);
    expect(options[0]?.jsonSchema).toBeDefined();
    expect(options[1]?.json).toBe(true);
  });

  it("tools: a call comes back with arguments as an object; the next turn sends it with its result", async () => {
    const tools = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather in a city",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      },
    ];
    engine.scripts.push({ tokens: [], toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] });
    const first = await readJson<{ message: { tool_calls: unknown[] }; done_reason: string }>(
      await call("/api/chat", { model: BASE, messages: hi, tools, stream: false }),
    );
    expect(first.message.tool_calls).toEqual([
      {
        id: expect.any(String) as unknown,
        function: { index: 0, name: "get_weather", arguments: { city: "Oslo" } },
      },
    ]);
    expect(first.done_reason).toBe("stop");
    expect(engine.calls.at(-1)?.options.tools?.map((t) => t.name)).toEqual(["get_weather"]);

    await call("/api/chat", {
      model: BASE,
      stream: false,
      tools,
      messages: [
        ...hi,
        {
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "get_weather", arguments: { city: "Oslo" } } }],
        },
        { role: "tool", content: '{"temp": 3}', tool_name: "get_weather" },
      ],
    });
    expect(engine.calls.at(-1)?.history.at(-1)).toEqual({
      role: "assistant",
      text: "",
      calls: [{ name: "get_weather", arguments: { city: "Oslo" }, result: { temp: 3 } }],
    });
  });

  it("a tool result with no call to answer is a 400 naming the message", async () => {
    const messages = [...hi, { role: "tool", content: "3", tool_name: "get_weather" }];
    expect(await errorOf(await call("/api/chat", { model: BASE, messages }), 400)).toMatch(/messages\.1/);
  });

  it("a failure after the first line is an error line; before it, a status", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    engine.scripts.push({ tokens: ["a", "b"], end: new Error("boom") });
    const got = await lines(await call("/api/chat", { model: BASE, messages: hi }));
    expect(got.at(-1)).toEqual({ error: expect.stringMatching(/error id err_/) as unknown });
    engine.failWith = new Error("boom");
    expect(await errorOf(await call("/api/chat", { model: BASE, messages: hi }), 500)).toMatch(
      /error id err_/,
    );
  });
});

describe("POST /api/generate", () => {
  it("answers a prompt (with system) through the chat template, whole and streamed", async () => {
    const whole = await readJson<Record<string, unknown>>(
      await call("/api/generate", { model: BASE, prompt: "Hi", system: "Be brief.", stream: false }),
    );
    expect(whole).toMatchObject({ response: "Hello!", done: true, done_reason: "stop", eval_count: 3 });
    expect(engine.calls.at(-1)?.history).toEqual([
      { role: "system", text: "Be brief." },
      { role: "user", text: "Hi" },
    ]);
    const got = await lines(await call("/api/generate", { model: BASE, prompt: "Hi" }));
    expect(
      got
        .slice(0, -1)
        .map((l) => l.response)
        .join(""),
    ).toBe("Hello!");
    expect(got.at(-1)).toMatchObject({ response: "", done: true, done_reason: "stop" });
  });

  it("raw continues the prompt without a template", async () => {
    await call("/api/generate", {
      model: BASE,
      prompt: "Once upon",
      raw: true,
      stream: false,
      options: { num_predict: 5 },
    });
    expect(engine.completeCalls.at(-1)).toMatchObject({ prompt: "Once upon", options: { maxTokens: 5 } });
  });

  it("refuses what it cannot honour by name", async () => {
    expect(
      await errorOf(await call("/api/generate", { model: BASE, prompt: "a", suffix: "b" }), 400),
    ).toMatch(/suffix/);
    expect(
      await errorOf(await call("/api/generate", { model: BASE, prompt: "a", context: [1, 2] }), 400),
    ).toMatch(/context/);
    expect(
      await errorOf(await call("/api/generate", { model: BASE, prompt: "a", options: { foo: 1 } }), 400),
    ).toMatch(/Unknown option 'foo'/);
  });
});

describe("POST /api/embed and /api/embeddings", () => {
  it("embeds a batch under any model name with the base model", async () => {
    const res = await call("/api/embed", { model: "nomic-embed-text", input: ["a cat", "a dog"] });
    const body = await readJson<{ model: string; embeddings: number[][]; prompt_eval_count: number }>(res);
    expect(body.model).toBe("nomic-embed-text");
    expect(body.embeddings).toEqual(await engine.embed(["a cat", "a dog"]));
    expect(body.prompt_eval_count).toBe(4);
    const legacy = await readJson<{ embedding: number[] }>(
      await call("/api/embeddings", { model: BASE, prompt: "a cat" }),
    );
    expect(legacy.embedding).toEqual(body.embeddings[0]);
  });
});
