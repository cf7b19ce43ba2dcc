/**
 * An installed, enabled adapter asked for by name while a base it was not made for is loaded:
 * /v1 must say so (which adapter, made for another base), not "The model 'chat' does not
 * exist". Real core, real engine: the demo adapters installed, then the small fixture base
 * (another embedding length) opened in place of the demo base.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures } from "../../../native/gguf/fixtures";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { fixtureDemoDir } from "../../../testing/core/fixture-demo";
import { startServer, type RunningServer } from "../start";
import { readJson, type OpenAiErrorReply } from "../../../testing/server/test-core";
import { suiteDir } from "../../../testing/core/temp-dir";

const dir = suiteDir("macaron-v1-misfit-");
let server: RunningServer;

beforeAll(async () => {
  const small = await writeFixtures(join(dir.path, "fx"), { size: "small" });
  server = await startServer({
    dataDir: join(dir.path, "data"),
    demoDir: await fixtureDemoDir(),
    rendererDir: join(dir.path, "no-ui"),
    spawnEngine: spawnTestEngine(),
  });
  const ctx = { transport: "http" as const };
  const demo = await server.core.dispatch("models.openDemo", {}, ctx);
  if (!demo.ok) throw new Error(demo.error.message);
  const other = await server.core.dispatch("models.open", { path: small.basePath }, ctx);
  if (!other.ok) throw new Error(other.error.message);
});
afterAll(async () => {
  await server?.close();
});

const headers = () => ({ authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" });

describe("/v1 with an adapter made for another base", () => {
  it("leaves it out of /v1/models and names it, and why, when it is asked for", async () => {
    const models = await readJson<{ data: Array<{ id: string }> }>(
      await fetch(`${server.url}/v1/models`, { headers: headers() }),
    );
    expect(models.data.map((m) => m.id)).toEqual(["base-small", "auto"]);

    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Hello" }], max_tokens: 2 }),
    });
    expect(res.status).toBe(400);
    const { error } = await readJson<OpenAiErrorReply>(res);
    expect(error).toMatchObject({
      code: "model_not_compatible",
      param: "model",
      type: "invalid_request_error",
    });
    expect(error.message).toMatch(/^The adapter 'chat'.* was made for another base model/);
    expect(error.message).toMatch(/'base-small'/);
    expect(error.message).not.toMatch(/does not exist/);

    // An unknown name is still "does not exist".
    const unknown = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ model: "poetry", messages: [{ role: "user", content: "Hello" }] }),
    });
    expect(unknown.status).toBe(404);
  });
});
