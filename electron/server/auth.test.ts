import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { secretsEqual } from "./auth";
import { FakeCore, listenForTest, readJson } from "./test-core";

let server: Awaited<ReturnType<typeof listenForTest>>;
const core = new FakeCore();

beforeAll(async () => {
  server = await listenForTest(core);
});
afterAll(async () => {
  await server.close();
});

function call(method: string, headers: Record<string, string> = {}, body: unknown = {}) {
  return fetch(`${server.url}/api/call/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

async function sessionCookie(): Promise<string> {
  const res = await fetch(`${server.url}/?token=${server.apiKey}`, { redirect: "manual" });
  const setCookie = res.headers.get("set-cookie") ?? "";
  return setCookie.split(";")[0] ?? "";
}

describe("API key", () => {
  it("refuses a call without a key with 401 in the app API envelope", async () => {
    const res = await call("models.status");
    expect(res.status).toBe(401);
    expect(await readJson(res)).toEqual({
      ok: false,
      error: { code: "unauthorized", message: expect.any(String) as unknown },
    });
  });

  it("refuses a wrong key with 401", async () => {
    const res = await call("models.status", { authorization: "Bearer wrong" });
    expect(res.status).toBe(401);
    expect((await readJson(res)).error.code).toBe("unauthorized");
  });

  it("refuses /v1 without a key in OpenAI's error shape", async () => {
    const res = await fetch(`${server.url}/v1/models`, { headers: { authorization: "Bearer nope" } });
    expect(res.status).toBe(401);
    expect(await readJson(res)).toEqual({
      error: {
        message: expect.any(String) as unknown,
        type: "authentication_error",
        param: null,
        code: "invalid_api_key",
      },
    });
  });

  it("accepts the bearer key", async () => {
    const res = await call("models.status", { authorization: `Bearer ${server.apiKey}` });
    expect(res.status).toBe(200);
    expect((await readJson(res)).ok).toBe(true);
  });

  it("asks for the key on unknown API paths too", async () => {
    expect((await fetch(`${server.url}/api/nothing`)).status).toBe(401);
    const res = await fetch(`${server.url}/api/nothing`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(res.status).toBe(404);
    expect((await readJson(res)).error.code).toBe("not_found");
  });

  it("answers the health probe without a key", async () => {
    const res = await fetch(`${server.url}/api/health`);
    expect(await readJson(res)).toEqual({ ok: true });
  });

  it("compares secrets of any length", () => {
    expect(secretsEqual("abc", "abc")).toBe(true);
    expect(secretsEqual("abc", "abcd")).toBe(false);
    expect(secretsEqual("", "x")).toBe(false);
  });
});

describe("token link and session cookie", () => {
  it("exchanges ?token for an HttpOnly cookie and redirects to the same path without it", async () => {
    const res = await fetch(`${server.url}/chat/42?token=${server.apiKey}&x=1`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/chat/42?x=1");
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^macaron_session=[0-9a-f]{64};/);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/");
    expect(setCookie).not.toContain(server.apiKey);
  });

  it("never redirects off-site", async () => {
    const res = await fetch(`${server.url}//evil.example/?token=${server.apiKey}`, { redirect: "manual" });
    expect(res.headers.get("location")).toBe("/evil.example/");
  });

  it("refuses a wrong token", async () => {
    const res = await fetch(`${server.url}/?token=wrong`, { redirect: "manual" });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("lets the cookie authorize calls, same-origin or without Origin", async () => {
    const cookie = await sessionCookie();
    expect((await call("models.status", { cookie })).status).toBe(200);
    expect((await call("models.status", { cookie, origin: server.url })).status).toBe(200);
  });

  it("refuses cookie calls from another origin with 403", async () => {
    const cookie = await sessionCookie();
    const res = await call("models.status", { cookie, origin: "http://evil.example" });
    expect(res.status).toBe(403);
    expect((await readJson(res)).error.code).toBe("forbidden");
    expect((await call("models.status", { cookie, origin: "null" })).status).toBe(403);
  });

  it("refuses a forged cookie", async () => {
    expect((await call("models.status", { cookie: "macaron_session=deadbeef" })).status).toBe(401);
  });

  it("refuses a cross-origin WebSocket that carries the cookie", async () => {
    const cookie = await sessionCookie();
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${server.url.replace("http", "ws")}/api/events`, {
        headers: { cookie, origin: "http://evil.example" },
      });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => reject(new Error("upgraded")));
      ws.on("error", () => {});
    });
    expect(status).toBe(403);
  });

  it("refuses requests that name a foreign Host (DNS rebinding)", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/api/health`, { headers: { host: "evil.example" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
