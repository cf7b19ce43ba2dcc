/**
 * The local API server with the real engine (node-llama-cpp, the demo that ships with the app):
 * headless mode turns it on as the desktop app's Settings do, and the official `openai` client
 * gets the same greedy answer from it as from headless mode's own /v1, streamed and not.
 */
import { createServer } from "node:net";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalServerStatus, Result } from "../api";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { startServer, type RunningServer } from "./start";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("macaron-local-api-");
let server: RunningServer;
let local: LocalServerStatus;
let base: string;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const address = probe.address();
  await new Promise<void>((done) => probe.close(() => done()));
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return address.port;
}

beforeAll(async () => {
  server = await startServer({
    dataDir: join(dir.path, "data"),
    rendererDir: join(dir.path, "no-ui"),
    spawnEngine: spawnTestEngine(),
  });
  const opened = await server.core.dispatch("models.openDemo", {}, { transport: "http" });
  if (!opened.ok) throw new Error(opened.error.message);
  const port = await freePort();
  const on = (await server.core.dispatch(
    "localServer.configure",
    { enabled: true, port },
    { transport: "http" },
  )) as Result<LocalServerStatus>;
  if (!on.ok) throw new Error(on.error.message);
  local = on.value;
  const models = await new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1` }).models.list();
  base = models.data[0]!.id;
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe("local API server, real engine", () => {
  it("answers chat completions like headless mode's /v1, with its own key", async () => {
    expect(local.running).toBe(true);
    const viaLocal = new OpenAI({ apiKey: local.apiKey, baseURL: local.url!, maxRetries: 0 });
    const viaHeadless = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
    const request = {
      model: base,
      messages: [{ role: "user" as const, content: "Name a fruit." }],
      max_tokens: 12,
      temperature: 0,
    };
    const [a, b] = [
      await viaLocal.chat.completions.create(request),
      await viaHeadless.chat.completions.create(request),
    ];
    expect(a.choices[0]!.message.content).toBeTruthy();
    expect(a.choices[0]!.message.content).toBe(b.choices[0]!.message.content);
    expect(a.usage).toEqual(b.usage);

    // Streaming: the pieces add up to the same greedy answer.
    const stream = await viaLocal.chat.completions.create({ ...request, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(a.choices[0]!.message.content);

    // Each server takes only its own key.
    const wrongKey = new OpenAI({ apiKey: server.apiKey, baseURL: local.url!, maxRetries: 0 });
    await expect(wrongKey.models.list()).rejects.toMatchObject({ status: 401 });
  }, 60_000);
});
