import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { buildServer } from "./app";
import { LoginCodes, secretsEqual } from "./auth";
import { SessionStore, loadOrCreateServerKey } from "./session-store";
import { FakeCore, readJson, type EnvelopeReply } from "../../testing/server/test-core";
import { testDir } from "../../testing/core/temp-dir";

interface TestServer {
  url: string;
  apiKey: string;
  codes: LoginCodes;
  close(): Promise<void>;
}

/** A real server on loopback whose sign-in codes live on `clock` (tests move it past expiry). */
async function listen(apiKey: string, clock: { now: number }, sessions?: SessionStore): Promise<TestServer> {
  const codes = new LoginCodes(5 * 60_000, () => clock.now);
  const app = await buildServer({
    core: new FakeCore(),
    apiKey,
    loginCodes: codes,
    ...(sessions ? { sessions } : {}),
    rendererDir: "/nonexistent-renderer",
    host: "127.0.0.1",
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return { url: `http://127.0.0.1:${address.port}`, apiKey, codes, close: () => app.close() };
}

const clock = { now: 1_000_000 };
let server: TestServer;

beforeAll(async () => {
  server = await listen("test-key-0123456789", clock);
});
afterAll(async () => {
  await server.close();
});

function call(method: string, headers: Record<string, string> = {}, body: unknown = {}, base = server.url) {
  return fetch(`${base}/api/call/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** Opens `path` with a fresh code, as a browser opening the printed URL; returns the reply. */
function openWithCode(target: TestServer, path = "/", extra = "", headers: Record<string, string> = {}) {
  const { code } = target.codes.issue();
  return fetch(`${target.url}${path}?code=${code}${extra}`, { redirect: "manual", headers });
}

/** The `name=value` of a Set-Cookie header. */
function cookiePair(res: Response): string {
  return (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}

async function sessionCookie(target: TestServer = server): Promise<string> {
  const res = await openWithCode(target);
  expect(res.status).toBe(302);
  return cookiePair(res);
}

describe("API key", () => {
  it("refuses a call without a key with 401 in the app API envelope, pointing at the code, not ?token", async () => {
    const res = await call("models.status");
    expect(res.status).toBe(401);
    const body = await readJson(res);
    expect(body).toEqual({
      ok: false,
      error: { code: "unauthorized", message: expect.any(String) as unknown },
    });
    expect(body.error.message).toContain("?code=");
    expect(body.error.message).not.toContain("token");
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

describe("the key never in a URL", () => {
  it("refuses ?token=KEY on a page with 400 and a message naming the code and the header, setting no cookie", async () => {
    const res = await fetch(`${server.url}/?token=${server.apiKey}`, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(res.headers.get("set-cookie")).toBeNull();
    const text = await res.text();
    expect(text).toContain("must not be sent in a URL");
    expect(text).toContain("?code=");
    expect(text).toContain("Authorization: Bearer");
  });

  it("refuses ?token= the same whether it is right or wrong (no oracle)", async () => {
    const right = await fetch(`${server.url}/chat/1?token=${server.apiKey}`, { redirect: "manual" });
    const wrong = await fetch(`${server.url}/chat/1?token=wrong`, { redirect: "manual" });
    expect([right.status, wrong.status]).toEqual([400, 400]);
    expect(await right.text()).toBe(await wrong.text());
  });

  it("refuses ?token= on the API and /v1 in their shapes, even with a valid bearer", async () => {
    const bearer = { authorization: `Bearer ${server.apiKey}` };
    const api = await fetch(`${server.url}/api/call/models.status?token=${server.apiKey}`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: "{}",
    });
    expect(api.status).toBe(400);
    expect((await readJson(api)).error.code).toBe("invalid_input");
    const v1 = await fetch(`${server.url}/v1/models?token=${server.apiKey}`, { headers: bearer });
    expect(v1.status).toBe(400);
    expect((await readJson(v1)).error.message).toContain("must not be sent in a URL");
  });

  it("refuses a WebSocket URL that carries ?token=", async () => {
    const status = await upgradeStatus(`/api/events?token=${server.apiKey}`, {});
    expect(status).toBe(400);
  });
});

describe("single-use sign-in code", () => {
  it("exchanges ?code for an HttpOnly cookie and redirects to the same path without it", async () => {
    const res = await openWithCode(server, "/chat/42", "&x=1");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/chat/42?x=1");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^macaron_session_[0-9a-f]{16}=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/");
    expect(setCookie).not.toContain(server.apiKey);
  });

  it("works once: the same code a second time is refused with 401 and no cookie", async () => {
    const { code } = server.codes.issue();
    const first = await fetch(`${server.url}/?code=${code}`, { redirect: "manual" });
    expect(first.status).toBe(302);
    const second = await fetch(`${server.url}/?code=${code}`, { redirect: "manual" });
    expect(second.status).toBe(401);
    expect(second.headers.get("set-cookie")).toBeNull();
    expect(await second.text()).toContain("works once");
  });

  it("expires: a code opened after its lifetime is refused, one opened just before works", async () => {
    const late = server.codes.issue();
    const early = server.codes.issue();
    clock.now += 5 * 60_000 - 1;
    expect((await fetch(`${server.url}/?code=${early.code}`, { redirect: "manual" })).status).toBe(302);
    clock.now += 1;
    const res = await fetch(`${server.url}/?code=${late.code}`, { redirect: "manual" });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("refuses an unknown code", async () => {
    const res = await fetch(`${server.url}/?code=not-a-code`, { redirect: "manual" });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("sends a browser already signed in on without spending its code (a link reopened from history)", async () => {
    const cookie = await sessionCookie();
    const { code } = server.codes.issue();
    const again = await fetch(`${server.url}/chat/7?code=${code}`, {
      redirect: "manual",
      headers: { cookie },
    });
    expect(again.status).toBe(302);
    expect(again.headers.get("location")).toBe("/chat/7");
    expect(again.headers.get("set-cookie")).toBeNull();
    // The code is still good for a browser that has no session.
    expect((await fetch(`${server.url}/?code=${code}`, { redirect: "manual" })).status).toBe(302);
  });

  it("does not spend a code on HEAD (link previews)", async () => {
    const { code } = server.codes.issue();
    await fetch(`${server.url}/?code=${code}`, { method: "HEAD", redirect: "manual" });
    expect((await fetch(`${server.url}/?code=${code}`, { redirect: "manual" })).status).toBe(302);
  });

  it("never redirects off-site", async () => {
    const res = await openWithCode(server, "//evil.example/");
    expect(res.headers.get("location")).toBe("/evil.example/");
  });

  it("gives a key holder a fresh code over POST /api/login-code, and a browser session none", async () => {
    const res = await fetch(`${server.url}/api/login-code`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(res.status).toBe(200);
    const body = await readJson<EnvelopeReply<{ code: string; url: string; expiresAt: number }>>(res);
    expect(body.value.code).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
    expect(body.value.url).toBe(`${server.url}/?code=${body.value.code}`);
    expect(body.value.expiresAt).toBe(clock.now + 5 * 60_000);
    expect((await fetch(body.value.url, { redirect: "manual" })).status).toBe(302);

    const cookie = await sessionCookie();
    const fromBrowser = await fetch(`${server.url}/api/login-code`, { method: "POST", headers: { cookie } });
    expect(fromBrowser.status).toBe(403);
    expect((await fetch(`${server.url}/api/login-code`, { method: "POST" })).status).toBe(401);
  });

  it("issues distinct codes", () => {
    const seen = new Set(Array.from({ length: 100 }, () => server.codes.issue().code));
    expect(seen.size).toBe(100);
  });
});

function upgradeStatus(path: string, headers: Record<string, string>, base = server.url): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(`${base.replace("http", "ws")}${path}`, { headers });
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("open", () => {
      ws.close();
      resolve(101);
    });
    ws.on("error", reject);
  });
}

describe("session cookie", () => {
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
    const name = (await sessionCookie()).split("=")[0]!;
    expect((await call("models.status", { cookie: `${name}=deadbeef` })).status).toBe(401);
    expect((await call("models.status", { cookie: "macaron_session=deadbeef" })).status).toBe(401);
  });

  it("authenticates the WebSocket by the cookie the code set", async () => {
    const cookie = await sessionCookie();
    expect(await upgradeStatus("/api/events", { cookie, origin: server.url })).toBe(101);
    expect(await upgradeStatus("/api/events", { origin: server.url })).toBe(401);
  });

  it("refuses a cross-origin WebSocket that carries the cookie", async () => {
    const cookie = await sessionCookie();
    expect(await upgradeStatus("/api/events", { cookie, origin: "http://evil.example" })).toBe(403);
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

describe("two instances on 127.0.0.1", () => {
  /** A cookie jar as a browser keeps it: per host (ports share it), one value per name. */
  class Jar {
    private readonly cookies = new Map<string, string>();
    store(res: Response) {
      const pair = cookiePair(res);
      if (!pair) return;
      const eq = pair.indexOf("=");
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    header(): string {
      return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    }
  }

  it("keep separate sessions: signing in to the second does not sign the first out", async () => {
    const other = await listen("another-key-9876543210", clock);
    try {
      const jar = new Jar();
      jar.store(await openWithCode(server));
      expect((await call("models.status", { cookie: jar.header() })).status).toBe(200);
      jar.store(await openWithCode(other));
      expect((await call("models.status", { cookie: jar.header() }, {}, other.url)).status).toBe(200);
      // Still signed in to the first, with the same jar.
      expect((await call("models.status", { cookie: jar.header() })).status).toBe(200);
      // And one instance's cookie opens nothing on the other.
      const firstOnly = new Jar();
      firstOnly.store(await openWithCode(server));
      expect((await call("models.status", { cookie: firstOnly.header() }, {}, other.url)).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe("sessions across a restart (headless mode keeps them in the data folder)", () => {
  /** A server as start.ts makes one: the kept key and the sessions file of `dataDir`. */
  async function start(dataDir: string, newKey = false): Promise<TestServer> {
    const { apiKey } = loadOrCreateServerKey(dataDir, newKey);
    return listen(apiKey, clock, SessionStore.inDataDir(dataDir, apiKey));
  }

  it("a browser signed in before the restart is still signed in after it", async () => {
    const dir = testDir("macaron-sessions-");
    const first = await start(dir);
    const cookie = await sessionCookie(first);
    expect((await call("models.status", { cookie }, {}, first.url)).status).toBe(200);
    await first.close();
    const second = await start(dir);
    try {
      expect(second.apiKey).toBe(first.apiKey);
      expect((await call("models.status", { cookie }, {}, second.url)).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it("rotating the key signs every browser out; signing out ends one session for good", async () => {
    const dir = testDir("macaron-sessions-");
    const first = await start(dir);
    const leaving = await sessionCookie(first);
    const staying = await sessionCookie(first);
    const signOut = await fetch(`${first.url}/api/sign-out`, {
      method: "POST",
      headers: { cookie: leaving, origin: first.url },
    });
    expect(signOut.status).toBe(200);
    expect(signOut.headers.get("set-cookie")).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect((await call("models.status", { cookie: leaving }, {}, first.url)).status).toBe(401);
    expect((await call("models.status", { cookie: staying }, {}, first.url)).status).toBe(200);
    await first.close();

    const restarted = await start(dir);
    expect((await call("models.status", { cookie: leaving }, {}, restarted.url)).status).toBe(401);
    expect((await call("models.status", { cookie: staying }, {}, restarted.url)).status).toBe(200);
    await restarted.close();

    const rotated = await start(dir, true);
    try {
      expect(rotated.apiKey).not.toBe(first.apiKey);
      // The cookie's name follows the key: send the old value under the new name too.
      const value = staying.slice(staying.indexOf("=") + 1);
      const renamed = `${(await sessionCookie(rotated)).split("=")[0]}=${value}`;
      expect((await call("models.status", { cookie: staying }, {}, rotated.url)).status).toBe(401);
      expect((await call("models.status", { cookie: renamed }, {}, rotated.url)).status).toBe(401);
      expect(
        (await call("models.status", { authorization: `Bearer ${first.apiKey}` }, {}, rotated.url)).status,
      ).toBe(401);
    } finally {
      await rotated.close();
    }
  });
});
