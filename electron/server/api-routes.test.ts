import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { methodNames } from "../api";
import { FakeCore, listenForTest, readJson } from "../../testing/server/test-core";

interface JsonSchemaDoc {
  required?: string[];
  additionalProperties?: unknown;
  properties: Record<string, { properties?: Record<string, unknown> }>;
}
interface OpenApiDoc {
  openapi: string;
  paths: Record<
    string,
    {
      post: {
        requestBody: { content: Record<string, { schema: JsonSchemaDoc }> };
        responses: Record<string, { content: Record<string, { schema: JsonSchemaDoc }> }>;
      };
    }
  >;
}

let server: Awaited<ReturnType<typeof listenForTest>>;
const core = new FakeCore();

beforeAll(async () => {
  server = await listenForTest(core);
});
afterAll(async () => {
  await server.close();
});

function post(method: string, body: string | undefined, contentType = "application/json") {
  return fetch(`${server.url}/api/call/${method}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": contentType },
    body,
  });
}

describe("POST /api/call/:method", () => {
  it("dispatches to core and returns the envelope", async () => {
    const res = await post("conversations.create", JSON.stringify({ title: "Hi" }));
    expect(res.status).toBe(200);
    expect(await readJson(res)).toEqual({
      ok: true,
      value: expect.objectContaining({ title: "Hi" }) as unknown,
    });
    expect(core.dispatched.at(-1)).toEqual({
      method: "conversations.create",
      input: { title: "Hi" },
      ctx: { transport: "http" },
    });
  });

  it("treats an empty JSON body as {}", async () => {
    const res = await post("models.status", undefined);
    expect(res.status).toBe(200);
    expect((await readJson(res)).value.state).toBe("idle");
  });

  it("maps error codes to HTTP statuses", async () => {
    const invalid = await post("conversations.create", JSON.stringify({ title: 5 }));
    expect(invalid.status).toBe(400);
    expect((await readJson(invalid)).error.code).toBe("invalid_input");

    const unknown = await post("nope.nothing", "{}");
    expect(unknown.status).toBe(400);
    expect((await readJson(unknown)).error.code).toBe("unknown_method");

    const modelInvalid = await post("models.open", JSON.stringify({ path: "/tmp/x.txt" }));
    expect(modelInvalid.status).toBe(422);
    expect(await readJson(modelInvalid)).toEqual({
      ok: false,
      error: { code: "model_invalid", message: "Not a GGUF file" },
    });

    const missing = await post("conversations.get", JSON.stringify({ id: "zz" }));
    expect(missing.status).toBe(404);
  });

  it("requires JSON", async () => {
    const res = await post("models.status", "{}", "text/plain");
    expect(res.status).toBe(415);
    expect((await readJson(res)).ok).toBe(false);
    const noType = await fetch(`${server.url}/api/call/models.status`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(noType.status).toBe(415);
  });

  it("rejects malformed JSON and oversized bodies in the envelope", async () => {
    const bad = await post("models.status", "{nope");
    expect(bad.status).toBe(400);
    expect((await readJson(bad)).error.code).toBe("invalid_input");

    const huge = await post("conversations.create", JSON.stringify({ title: "x".repeat(2 * 1024 * 1024) }));
    expect(huge.status).toBe(413);
    expect((await readJson(huge)).error.code).toBe("invalid_input");
  });
});

describe("GET /api/events", () => {
  it("forwards core events as {event, payload} frames and unsubscribes on close", async () => {
    const ws = new WebSocket(`${server.url.replace("http", "ws")}/api/events`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const frame = new Promise<unknown>((resolve) =>
      ws.once("message", (data) => resolve(JSON.parse((data as Buffer).toString("utf8")))),
    );
    const created = await post("conversations.create", JSON.stringify({ title: "Evented" }));
    const { value } = await readJson(created);
    expect(await frame).toEqual({
      event: "conversations.changed",
      payload: { conversation: value, deletedId: null },
    });

    expect(core.listenerCount).toBe(1);
    ws.close();
    await vi.waitFor(() => expect(core.listenerCount).toBe(0));
  });

  it("refuses the upgrade without a key", async () => {
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${server.url.replace("http", "ws")}/api/events`);
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("error", () => {});
    });
    expect(status).toBe(401);
  });
});

describe("GET /api/openapi.json", () => {
  it("describes every method with request and response schemas", async () => {
    const res = await fetch(`${server.url}/api/openapi.json`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    const doc = await readJson<OpenApiDoc>(res);
    expect(doc.openapi).toBe("3.1.0");
    // The /v1 paths are checked against the registered routes in openapi.test.ts.
    const paths = Object.keys(doc.paths)
      .filter((path) => path.startsWith("/api/call/"))
      .sort();
    expect(paths).toEqual(methodNames.map((m) => `/api/call/${m}`).sort());
    const rename = doc.paths["/api/call/conversations.rename"]?.post;
    const input = rename?.requestBody.content["application/json"]?.schema;
    expect(input?.required).toEqual(expect.arrayContaining(["id", "title"]));
    expect(input?.additionalProperties).toBe(false);
    const output = rename?.responses["200"]?.content["application/json"]?.schema;
    expect(output?.properties.value?.properties).toHaveProperty("updatedAt");
  });
});
