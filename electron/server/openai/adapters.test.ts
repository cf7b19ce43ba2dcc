import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  fakeAdapter,
  FakeCore,
  listenForTest,
  readJson,
  type OpenAiErrorReply,
} from "../../../testing/server/test-core";

let server: Awaited<ReturnType<typeof listenForTest>>;
const core = new FakeCore();

beforeAll(async () => {
  server = await listenForTest(core);
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  await core.engine.load("/models/Tiny-Demo.Q8.gguf");
  core.adapters.installed = [
    fakeAdapter("chat"),
    fakeAdapter("coding"),
    { ...fakeAdapter("ui"), enabled: false },
  ];
  core.adapters.autoChoice = "chat";
  core.adapters.resolved.length = 0;
});

const auth = () => ({ authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" });
function complete(body: Record<string, unknown>) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: auth(),
    body: JSON.stringify({ messages: [{ role: "user", content: "Fix my code" }], ...body }),
  });
}

describe("/v1 with adapters", () => {
  it("lists the base, every enabled adapter with its domain and version, and auto", async () => {
    const res = await fetch(`${server.url}/v1/models`, { headers: auth() });
    const body = await readJson<{ data: Array<Record<string, unknown>> }>(res);
    expect(body.data.map((m) => m.id)).toEqual(["Tiny-Demo.Q8", "chat", "coding", "auto"]);
    expect(body.data[2]).toEqual({
      id: "coding",
      object: "model",
      created: 1_700_000_000,
      owned_by: "macaron",
      domain: "coding",
      version: "1.0.0",
      name: "coding",
    });
  });

  it("selects by model: an adapter id pins it, the base id is the base alone, auto asks the router", async () => {
    const pinned = await readJson<{ routing: { mode: string } }>(await complete({ model: "coding" }));
    expect(pinned.routing.mode).toBe("pinned");
    expect(core.engine.calls.at(-1)?.options).toMatchObject({
      adapters: [{ path: "/adapters/coding.gguf", scale: 1 }],
      kvPolicy: "reevaluate",
    });
    await complete({ model: "Tiny-Demo.Q8" });
    expect(core.engine.calls.at(-1)?.options.adapters).toBeUndefined();
    await complete({ model: "auto" });
    expect(core.engine.calls.at(-1)?.options.adapters).toEqual([{ path: "/adapters/chat.gguf", scale: 1 }]);
    expect(core.adapters.resolved).toEqual([
      { selection: { pinned: "coding" }, text: "Fix my code" },
      { selection: "base", text: "Fix my code" },
      { selection: "auto", text: "Fix my code" },
    ]);
  });

  it("blends with the non-standard adapters field, and names it when an adapter is unknown", async () => {
    const res = await complete({ model: "auto", adapters: { coding: 1, chat: 0.25 } });
    expect(res.status).toBe(200);
    expect(core.engine.calls.at(-1)?.options.adapters).toEqual([
      { path: "/adapters/coding.gguf", scale: 1 },
      { path: "/adapters/chat.gguf", scale: 0.25 },
    ]);
    const bad = await complete({ model: "auto", adapters: { poetry: 1 } });
    expect(bad.status).toBe(400);
    expect((await readJson<OpenAiErrorReply>(bad)).error).toMatchObject({
      param: "adapters",
      code: "invalid_request",
    });
    const scale = await complete({ model: "auto", adapters: { coding: 3 } });
    expect(scale.status).toBe(400);
  });

  it("answers a disabled or unknown adapter as model with 404 model_not_found", async () => {
    for (const model of ["ui", "poetry"]) {
      const res = await complete({ model });
      expect(res.status).toBe(404);
      expect((await readJson<OpenAiErrorReply>(res)).error.code).toBe("model_not_found");
    }
  });
});
