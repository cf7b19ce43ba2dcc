/**
 * The corners clients hit (issue 28), with the scripted engine: the seed each answer was sampled
 * with, GET /v1/models/{id} in both SDKs' shapes, /v1/messages/count_tokens, the fields SDKs
 * send that change nothing, a tool call cut off by max_tokens, unexpected errors carrying the id
 * they were logged under, and the opt-in CORS allow-list.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { corsPreflight } from "../../../testing/server/cors-preflight";
import { FakeCore, listenForTest, readJson, type OpenAiErrorReply } from "../../../testing/server/test-core";
import { parseCorsOrigins } from "../cors";
import { SEED_HEADER } from "./sampling";

const ORIGIN = "http://localhost:5173";
let server: Awaited<ReturnType<typeof listenForTest>>;
const core = new FakeCore();
const engine = core.engine;

beforeAll(async () => {
  server = await listenForTest(core, { corsOrigins: [ORIGIN] });
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
  engine.failWith = null;
});

function request(path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${server.apiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const ANTHROPIC = { "anthropic-version": "2023-06-01" };
const BASE = "Tiny-Demo.Q8";
const hi = [{ role: "user", content: "Hi" }];

describe("seeds", () => {
  it("an unseeded request gets a fresh seed, said in x-macaron-seed; sending it back reproduces the request", async () => {
    const chat = (extra: Record<string, unknown>) =>
      request("/v1/chat/completions", { model: BASE, messages: hi, temperature: 0.7, ...extra });
    const seeds = [];
    for (let i = 0; i < 4; i++) seeds.push((await chat({})).headers.get(SEED_HEADER));
    expect(new Set(seeds).size).toBe(4);
    expect(engine.calls.map((c) => String(c.options.seed))).toEqual(seeds);
    const again = await chat({ seed: Number(seeds[0]) });
    expect(again.headers.get(SEED_HEADER)).toBe(seeds[0]);
    expect(engine.calls.at(-1)?.options.seed).toBe(Number(seeds[0]));
  });

  it("streams say the seed in their headers too, on every protocol", async () => {
    const streamed = await request("/v1/chat/completions", {
      model: BASE,
      messages: hi,
      stream: true,
      seed: 7,
    });
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(streamed.headers.get(SEED_HEADER)).toBe("7");
    await streamed.text();
    for (const [path, body] of [
      ["/v1/completions", { model: BASE, prompt: "Hi" }],
      ["/v1/responses", { model: BASE, input: "Hi" }],
      ["/v1/messages", { model: BASE, max_tokens: 8, messages: hi, stream: true }],
    ] as const) {
      const res = await request(path, body, ANTHROPIC);
      expect(res.status, path).toBe(200);
      expect(res.headers.get(SEED_HEADER), path).toMatch(/^\d+$/);
      expect(engine.calls.at(-1)?.options.seed ?? engine.completeCalls.at(-1)?.options.seed).toBeDefined();
      await res.text();
    }
  });
});

describe("GET /v1/models/{id}", () => {
  it("answers OpenAI's model object, or Anthropic's to a request with anthropic-version", async () => {
    const openai = await readJson<Record<string, unknown>>(await request(`/v1/models/${BASE}`));
    expect(openai).toMatchObject({ id: BASE, object: "model", owned_by: "macaron" });
    const anthropic = await readJson<Record<string, unknown>>(
      await request(`/v1/models/${BASE}`, undefined, ANTHROPIC),
    );
    expect(anthropic).toEqual({
      type: "model",
      id: BASE,
      display_name: BASE,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
    });
    const list = await readJson<Record<string, unknown>>(await request("/v1/models", undefined, ANTHROPIC));
    expect(list).toMatchObject({ has_more: false, first_id: BASE, last_id: "auto" });
  });

  it("an unknown id is a 404 in the caller's shape", async () => {
    const openai = await request("/v1/models/gpt-4o");
    expect(openai.status).toBe(404);
    expect((await readJson<OpenAiErrorReply>(openai)).error).toMatchObject({ code: "model_not_found" });
    const anthropic = await request("/v1/models/claude-x", undefined, ANTHROPIC);
    expect(anthropic.status).toBe(404);
    expect(await readJson(anthropic)).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });
});

describe("/v1/messages corners", () => {
  it("count_tokens reports the prompt as the engine lays it out, with a one-token greedy run", async () => {
    const res = await request(
      "/v1/messages/count_tokens",
      { model: BASE, messages: hi, system: "Be brief." },
      ANTHROPIC,
    );
    expect(res.status).toBe(200);
    expect(await readJson(res)).toEqual({ input_tokens: 7 });
    expect(engine.calls.at(-1)?.options).toMatchObject({ maxTokens: 1, temperature: 0 });
    expect(engine.calls.at(-1)?.history[0]).toEqual({ role: "system", text: "Be brief." });
    const bad = await request(
      "/v1/messages/count_tokens",
      { model: BASE, messages: hi, max_tokens: 3 },
      ANTHROPIC,
    );
    expect(bad.status).toBe(400);
    expect(await readJson(bad)).toMatchObject({
      type: "error",
      error: { message: expect.stringMatching(/max_tokens/) as unknown },
    });
  });

  it("accepts the fields SDKs send that change nothing here (eager_input_streaming, service_tier, context_management, …)", async () => {
    const res = await request(
      "/v1/messages",
      {
        model: BASE,
        max_tokens: 8,
        messages: hi,
        service_tier: "auto",
        speed: "standard",
        inference_geo: "us",
        cache_control: { type: "ephemeral" },
        context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
        tools: [
          {
            name: "set_timer",
            input_schema: { type: "object", properties: { minutes: { type: "integer" } } },
            eager_input_streaming: true,
          },
        ],
      },
      ANTHROPIC,
    );
    expect(res.status).toBe(200);
    const unknown = await request(
      "/v1/messages",
      { model: BASE, max_tokens: 8, messages: hi, frobnicate: 1 },
      ANTHROPIC,
    );
    expect(unknown.status).toBe(400);
  });
});

describe("a tool call cut off by max_tokens", () => {
  const tools = [{ type: "function", function: { name: "set_timer", parameters: { type: "object" } } }];
  it("comes back as far as it was written, with finish_reason length", async () => {
    const script = { tokens: ["a", "b", "c"], cutOffCall: { name: "set_timer", arguments: '{"minutes": 1' } };
    engine.scripts.push(script);
    const body = await readJson<{ choices: { message: Record<string, unknown>; finish_reason: string }[] }>(
      await request("/v1/chat/completions", { model: BASE, messages: hi, tools, max_tokens: 2 }),
    );
    expect(body.choices[0]?.finish_reason).toBe("length");
    expect(body.choices[0]?.message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^call_/) as unknown,
        type: "function",
        function: { name: "set_timer", arguments: '{"minutes": 1' },
      },
    ]);
    engine.scripts.push(script);
    const streamed = await (
      await request("/v1/chat/completions", { model: BASE, messages: hi, tools, max_tokens: 2, stream: true })
    ).text();
    expect(streamed).toContain('"arguments":"{\\"minutes\\": 1"');
    expect(streamed).toContain('"finish_reason":"length"');
  });
});

describe("unexpected errors", () => {
  it("are logged with an id that the 500 carries", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    engine.failWith = new Error("kaboom");
    const res = await request("/v1/chat/completions", { model: BASE, messages: hi });
    expect(res.status).toBe(500);
    const { error } = await readJson<OpenAiErrorReply>(res);
    const id = /error id (err_[0-9a-f]+)/.exec(error.message)?.[1];
    expect(id).toBeDefined();
    expect(logged).toHaveBeenCalledWith(expect.stringMatching(new RegExp(`${id}: Error: kaboom`)));
  });
});

describe("CORS (opt-in allow-list)", () => {
  const preflight = (origin: string, path?: string) => corsPreflight(server.url, origin, path);

  it("answers an allowed origin's preflight without the key, and its requests with the origin", async () => {
    for (const path of ["/v1/chat/completions", "/api/chat"]) {
      const res = await preflight(ORIGIN, path);
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(res.headers.get("access-control-allow-headers")).toBe("authorization, content-type");
    }
    const answer = await request("/v1/chat/completions", { model: BASE, messages: hi }, { origin: ORIGIN });
    expect(answer.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(answer.headers.get("access-control-expose-headers")).toContain(SEED_HEADER);
    const streamed = await request(
      "/v1/chat/completions",
      { model: BASE, messages: hi, stream: true },
      { origin: ORIGIN },
    );
    expect(streamed.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    await streamed.text();
  });

  it("gives other origins and the app API nothing", async () => {
    const other = await preflight("http://evil.example");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(other.status).not.toBe(204);
    const app = await preflight(ORIGIN, "/api/call/models.status");
    expect(app.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("--cors origins", () => {
  it("parses comma- or space-separated origins and *, refusing anything with a path or another scheme", () => {
    expect(parseCorsOrigins("http://localhost:3000, https://app.example/ *")).toEqual([
      "http://localhost:3000",
      "https://app.example",
      "*",
    ]);
    expect(() => parseCorsOrigins("http://a.example/path")).toThrow(/not an origin/);
    expect(() => parseCorsOrigins("file:///x")).toThrow(/not an origin/);
    expect(() => parseCorsOrigins("localhost:3000x")).toThrow(/not an origin/);
    // Only what browsers send as Origin: no query, fragment or credentials.
    for (const text of ["http://a.example/?q=1", "http://a.example#x", "http://user:pw@a.example"])
      expect(() => parseCorsOrigins(text), text).toThrow(/not an origin/);
  });
});
