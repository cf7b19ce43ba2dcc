/**
 * /v1 tool and response schemas over the size limits (common/grammar-schema.ts,
 * SCHEMA_LIMITS): a 400 naming the tool and the limit, before ajv or the grammar sees them,
 * and the server answers the next request. Timings: bench/mcp-hostile.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
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
});

function post(path: string, body: unknown) {
  return fetch(`${server.url}/v1/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function wide(count: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) properties[`p${i}`] = { type: "string" };
  return { type: "object", properties };
}

function deep(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: "object", properties: { a: schema } };
  return schema;
}

const hello = { model: "auto", messages: [{ role: "user", content: "Hi" }] };
const withTool = (parameters: unknown) => ({
  ...hello,
  tools: [{ type: "function", function: { name: "wide", parameters } }],
});

async function expectLimit(res: Response, param: string, message: RegExp) {
  const body = await readJson<OpenAiErrorReply>(res);
  expect({ status: res.status, param: body.error.param, type: body.error.type }).toEqual({
    status: 400,
    param,
    type: "invalid_request_error",
  });
  expect(body.error.message).toMatch(message);
}

describe("/v1 schemas over the size limits", () => {
  it("answers 400 for a tool with 20,000 properties, then serves the next request", async () => {
    await expectLimit(
      await post("chat/completions", withTool(wide(20_000))),
      "tools[0].function.parameters",
      /^Tool 'wide': tools\[0\]\.function\.parameters is too large: it has more than 10000 values/,
    );
    engine.scripts.push({ tokens: ["fine"] });
    const res = await post("chat/completions", hello);
    expect(res.status).toBe(200);
  });

  it("answers 400 for a tool schema 2,000 levels deep", async () => {
    await expectLimit(
      await post("chat/completions", withTool(deep(2_000))),
      "tools[0].function.parameters",
      /nested too deeply: more than 64 levels/,
    );
  });

  it("answers 400 for a response_format schema over the limits", async () => {
    const res = await post("chat/completions", {
      ...hello,
      response_format: { type: "json_schema", json_schema: { name: "x", schema: wide(20_000) } },
    });
    const body = await readJson<OpenAiErrorReply>(res);
    expect(res.status).toBe(400);
    expect(body.error.message).toMatch(/too large: it has more than 10000 values/);
  });

  it("still takes a tool with a few hundred properties", async () => {
    engine.scripts.push({ tokens: ["fine"] });
    const res = await post("chat/completions", withTool(wide(300)));
    expect(res.status).toBe(200);
  });
});
