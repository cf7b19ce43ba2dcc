/**
 * /v1 model selection end to end: the real core and engine with the demo model and its four
 * demo adapters (greedy patterns: coding "{{{{", ui "uuuu"), over real HTTP.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { startServer, type RunningServer } from "../start";
import { readJson } from "../../../testing/server/test-core";
import { fixtureDemoDir } from "../../../testing/core/fixture-demo";
import { suiteDir } from "../../../testing/core/temp-dir";

const dir = suiteDir("macaron-v1-lora-");
let server: RunningServer;

beforeAll(async () => {
  server = await startServer({
    dataDir: join(dir.path, "data"),
    demoDir: await fixtureDemoDir(),
    rendererDir: join(dir.path, "no-ui"),
    spawnEngine: spawnTestEngine(),
  });
  const opened = await server.core.dispatch("models.openDemo", {}, { transport: "http" });
  if (!opened.ok) throw new Error(opened.error.message);
});
afterAll(async () => {
  await server?.close();
});

const headers = () => ({ authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" });
async function complete(body: Record<string, unknown>) {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 6,
      temperature: 0,
      ...body,
    }),
  });
  expect(res.status).toBe(200);
  return readJson<{ choices: Array<{ message: { content: string } }>; routing: { mode: string } }>(res);
}

describe("/v1 with the real adapters", () => {
  it("lists the demo base, the four adapters and auto", async () => {
    const res = await fetch(`${server.url}/v1/models`, { headers: headers() });
    const body = await readJson<{ data: Array<{ id: string }> }>(res);
    expect(body.data.map((m) => m.id)).toEqual(["demo", "chat", "coding", "agent", "ui", "auto"]);
  });

  it("answers with the adapter named as model, or the blend given", async () => {
    expect((await complete({ model: "coding" })).choices[0]?.message.content).toMatch(/^\{\{\{\{/);
    const blend = await complete({ model: "demo", adapters: { ui: 1 } });
    expect(blend.choices[0]?.message.content).toMatch(/^uuuu/);
    expect(blend.routing.mode).toBe("blend");
    const base = await complete({ model: "demo" });
    expect(base.routing.mode).toBe("base");
    expect(base.choices[0]?.message.content).not.toMatch(/^(\{\{\{\{|uuuu)/);
  });
});
