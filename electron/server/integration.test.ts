/**
 * Headless mode end to end: real core (SQLite in a temp dir), the real engine process
 * (node-llama-cpp on the tiny demo model) and the official `openai` client over real HTTP.
 */
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureFixtureModel } from "../../native/gguf/fixtures";
import { startServer, type RunningServer } from "./start";
import { readJson } from "../../testing/server/test-core";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("macaron-headless-");
let server: RunningServer;
let client: OpenAI;

beforeAll(async () => {
  const model = await ensureFixtureModel(join(dir.path, "models"));
  server = await startServer({
    host: "127.0.0.1",
    port: 0,
    dataDir: join(dir.path, "data"),
    model,
    rendererDir: join(dir.path, "no-ui"),
  });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await server?.close();
});

describe("headless server with the real core and engine", () => {
  it("loaded the --model and generated a key", () => {
    expect(server.modelError).toBeNull();
    expect(server.generatedKey).toBe(true);
    expect(server.apiKey).toMatch(/^[0-9a-f]{64}$/);
    expect(server.openUrl).toMatch(/\/\?code=[A-Za-z0-9_-]{43}$/);
    expect(server.openUrl.startsWith(`${server.url}/?code=`)).toBe(true);
    expect(server.openUrl).not.toContain(server.apiKey);
  });

  it("lists the demo model and auto through the openai client", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["demo", "auto"]);
  });

  it("streams a chat completion", async () => {
    const stream = await client.chat.completions.create({
      model: "demo",
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 8,
      temperature: 0,
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toMatch(/^(stop|length)$/);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text.length).toBeGreaterThan(0);
  });

  it("stops at max_tokens with finish_reason length", async () => {
    const completion = await client.chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: "Tell me a long story" }],
      max_tokens: 3,
      temperature: 0,
    });
    expect(completion.choices[0]?.finish_reason).toBe("length");
    expect(completion.usage?.completion_tokens).toBe(3);
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("frees the engine when a streaming client goes away", async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      {
        model: "demo",
        messages: [{ role: "user", content: "Go on and on" }],
        max_tokens: 4000,
        stream: true,
      },
      { signal: controller.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next(); // the role chunk: generation is running
    controller.abort();
    await iterator.next().catch(() => undefined);
    // The next request must not find the engine busy (maxRetries 0 would surface a 429).
    const completion = await client.chat.completions.create({
      model: "demo",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 2,
    });
    expect(completion.choices[0]?.finish_reason).toBe("length");
  });

  it("reports OpenAI errors that the client understands", async () => {
    await expect(
      client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 404, code: "model_not_found" });
    const wrongKey = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "wrong", maxRetries: 0 });
    await expect(wrongKey.models.list()).rejects.toMatchObject({ status: 401 });
  });

  it("dispatches app API calls to the real core", async () => {
    const res = await fetch(`${server.url}/api/call/models.status`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: "{}",
    });
    const body = await readJson(res);
    expect(body).toMatchObject({ ok: true, value: { state: "ready", model: { isDemo: true } } });
  });
});
