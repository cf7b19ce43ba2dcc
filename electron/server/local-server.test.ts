/**
 * The local API server end to end below the UI: core (real SQLite settings, scripted engine)
 * with the real v1-only Fastify server on loopback, driven through core.dispatch as the
 * Settings section drives it. Ports are real: a free one found by listening on port 0.
 */
import { createServer, type Server } from "node:net";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import type { EventPayload, LocalServerStatus, Result } from "../api";
import { assembleCore, type Core } from "../core";
import { FakeEngine } from "../../testing/engine/fake-engine";
import { testDir } from "../../testing/core/temp-dir";
import { corsPreflight } from "../../testing/server/cors-preflight";
import { serveLocalApi } from "./local-server";

const ctx = { transport: "ipc" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startCore(dataDir: string): Promise<Core> {
  const core = await assembleCore(
    { dataDir, log: () => undefined, localApiFactory: serveLocalApi },
    () => new FakeEngine(),
  );
  cleanups.push(() => core.close());
  return core;
}

/** A port nobody listens on right now (the OS picks it, then it is released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return address.port;
}

async function occupy(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", done);
  });
  cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
  return server;
}

async function call<T>(core: Core, method: string, input: unknown = {}): Promise<Result<T>> {
  return (await core.dispatch(method, input, ctx)) as Result<T>;
}

async function status(core: Core, method: string, input: unknown = {}): Promise<LocalServerStatus> {
  const result = await call<LocalServerStatus>(core, method, input);
  if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
  return result.value;
}

function models(url: string, key?: string): Promise<Response> {
  return fetch(`${url}/models`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
}

describe("local API server (core + v1-only server on loopback)", () => {
  it("is off by default on port 1234 with a generated key, and serves /v1 with the key once on", async () => {
    const core = await startCore(testDir());
    const initial = await status(core, "localServer.status");
    expect(initial).toMatchObject({ enabled: false, running: false, port: 1234, url: null, error: null });
    expect(initial.apiKey).toMatch(/^[0-9a-f]{64}$/);

    const changes: Array<EventPayload<"localServer.changed">> = [];
    cleanups.push(
      core.subscribe((event, payload) => event === "localServer.changed" && changes.push(payload as never)),
    );
    const port = await freePort();
    const on = await status(core, "localServer.configure", { enabled: true, port });
    expect(on).toMatchObject({
      enabled: true,
      running: true,
      port,
      url: `http://127.0.0.1:${port}/v1`,
      error: null,
    });
    expect(changes.at(-1)).toEqual(on);

    expect((await models(on.url!, on.apiKey)).status).toBe(200);
    const refused = await models(on.url!);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
    // Anthropic clients send x-api-key.
    expect((await fetch(`${on.url}/models`, { headers: { "x-api-key": on.apiKey } })).status).toBe(200);
    // The official client works against it as against LM Studio.
    const client = new OpenAI({ baseURL: on.url!, apiKey: on.apiKey });
    expect((await client.models.list()).object).toBe("list");
    // Only the model API: no app API, no UI.
    const appApi = await fetch(`http://127.0.0.1:${port}/api/health`, {
      headers: { authorization: `Bearer ${on.apiKey}` },
    });
    expect(appApi.status).toBe(404);

    const off = await status(core, "localServer.configure", { enabled: false });
    expect(off).toMatchObject({ enabled: false, running: false, url: null });
    await expect(models(on.url!, on.apiKey)).rejects.toThrow();
  });

  it("reports a port in use without failing, and the app keeps answering", async () => {
    const core = await startCore(testDir());
    const port = await freePort();
    await occupy(port);
    const taken = await status(core, "localServer.configure", { enabled: true, port });
    expect(taken).toMatchObject({ enabled: true, running: false, url: null });
    expect(taken.error).toMatch(new RegExp(`^Port ${port} is in use`));
    // Core is unaffected.
    expect((await call(core, "conversations.list")).ok).toBe(true);
    // Another port works, and the error goes away.
    const other = await freePort();
    const moved = await status(core, "localServer.configure", { port: other });
    expect(moved).toMatchObject({ running: true, port: other, error: null });
    expect((await models(moved.url!, moved.apiKey)).status).toBe(200);
  });

  it("starts the app when the saved port is taken at start-up, and says why it is not serving", async () => {
    const dataDir = testDir();
    const port = await freePort();
    const first = await startCore(dataDir);
    await status(first, "localServer.configure", { enabled: true, port });
    await first.close();
    await occupy(port);
    const second = await startCore(dataDir);
    const after = await status(second, "localServer.status");
    expect(after).toMatchObject({ enabled: true, running: false, url: null });
    expect(after.error).toMatch(new RegExp(`^Port ${port} is in use`));
    expect((await call(second, "conversations.list")).ok).toBe(true);
  });

  it("regenerates the key: the old one gets 401, the new one 200", async () => {
    const core = await startCore(testDir());
    const before = await status(core, "localServer.configure", { enabled: true, port: await freePort() });
    const after = await status(core, "localServer.regenerateKey");
    expect(after.apiKey).toMatch(/^[0-9a-f]{64}$/);
    expect(after.apiKey).not.toBe(before.apiKey);
    expect(after.running).toBe(true);
    expect((await models(after.url!, before.apiKey)).status).toBe(401);
    expect((await models(after.url!, after.apiKey)).status).toBe(200);
  });

  it("comes back on, on the same port and key, after a restart; stops when core closes", async () => {
    const dataDir = testDir();
    const first = await startCore(dataDir);
    const port = await freePort();
    const on = await status(first, "localServer.configure", { enabled: true, port });
    await first.close();
    await expect(models(on.url!, on.apiKey)).rejects.toThrow();

    const second = await startCore(dataDir);
    const again = await status(second, "localServer.status");
    expect(again).toMatchObject({ enabled: true, running: true, port, apiKey: on.apiKey });
    expect((await models(again.url!, on.apiKey)).status).toBe(200);
  });

  it("answers CORS for the saved origins only, on /v1 and Ollama's routes, across a restart", async () => {
    const ORIGIN = "http://localhost:5173";
    const dataDir = testDir();
    const first = await startCore(dataDir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // Off by default: no page gets CORS answers.
    const on = await status(first, "localServer.configure", { enabled: true, port });
    expect(on.corsOrigins).toEqual([]);
    expect((await corsPreflight(base, ORIGIN)).headers.get("access-control-allow-origin")).toBeNull();

    // As typed in the field: normalized to what browsers send as Origin.
    const listed = await status(first, "localServer.configure", { corsOrigins: ["http://LOCALHOST:5173/"] });
    expect(listed).toMatchObject({ running: true, corsOrigins: [ORIGIN] });
    const allowedEverywhere = async () => {
      for (const path of ["/v1/chat/completions", "/api/chat"]) {
        const res = await corsPreflight(base, ORIGIN, path);
        expect(res.status, path).toBe(204);
        expect(res.headers.get("access-control-allow-origin"), path).toBe(ORIGIN);
        expect(res.headers.get("access-control-allow-headers"), path).toBe("authorization, content-type");
        expect(res.headers.get("access-control-allow-methods"), path).toContain("POST");
      }
    };
    await allowedEverywhere();
    const other = await corsPreflight(base, "http://evil.example");
    expect(other.status).not.toBe(204);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    // The page's own request, with the key, may read the answer; without the key it is still refused.
    const answer = await fetch(`${listed.url}/models`, {
      headers: { origin: ORIGIN, authorization: `Bearer ${listed.apiKey}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect((await fetch(`${listed.url}/models`, { headers: { origin: ORIGIN } })).status).toBe(401);

    // Saved: the next app start serves with the same list.
    await first.close();
    const second = await startCore(dataDir);
    expect(await status(second, "localServer.status")).toMatchObject({
      running: true,
      corsOrigins: [ORIGIN],
    });
    await allowedEverywhere();

    // Emptied: the server restarts without CORS.
    expect((await status(second, "localServer.configure", { corsOrigins: [] })).corsOrigins).toEqual([]);
    expect((await corsPreflight(base, ORIGIN)).headers.get("access-control-allow-origin")).toBeNull();
  });

  it("refuses origins that are not exact scheme://host[:port], saying which, changing nothing", async () => {
    const core = await startCore(testDir());
    await status(core, "localServer.configure", { corsOrigins: ["https://ok.example"] });
    for (const [origins, why] of [
      [["*"], "corsOrigins.0: * (any web page) is not allowed here"],
      [["https://ok.example", "http://a.example/v1"], "corsOrigins.1: not an origin: http://a.example/v1"],
      [["file:///home/me/page.html"], "corsOrigins.0: not an origin: file:///home/me/page.html"],
      [["null"], "corsOrigins.0: not an origin: null"],
      ["http://localhost:5173", "corsOrigins: "],
    ] as const) {
      const result = await call(core, "localServer.configure", { corsOrigins: origins });
      expect(result.ok, JSON.stringify(origins)).toBe(false);
      if (!result.ok) {
        expect(result.error.code).toBe("invalid_input");
        expect(result.error.message).toContain(why);
      }
    }
    expect((await status(core, "localServer.status")).corsOrigins).toEqual(["https://ok.example"]);
  });

  it("refuses ports outside 1024..65535 and unknown fields, changing nothing", async () => {
    const core = await startCore(testDir());
    for (const input of [
      { port: 80 },
      { port: 70000 },
      { port: 1234.5 },
      { enabled: "yes" },
      { host: "0.0.0.0" },
    ]) {
      const result = await call(core, "localServer.configure", input);
      expect(result.ok, JSON.stringify(input)).toBe(false);
      if (!result.ok) expect(result.error.code).toBe("invalid_input");
    }
    expect(await status(core, "localServer.status")).toMatchObject({ enabled: false, port: 1234 });
  });

  it("answers a clear error where core was given no server", async () => {
    const dir = testDir();
    const core = await assembleCore({ dataDir: dir, log: () => undefined }, () => new FakeEngine());
    cleanups.push(() => core.close());
    const result = await call(core, "localServer.configure", { enabled: true });
    expect(result).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    if (!result.ok) expect(result.error.message).toMatch(/cannot serve the local API/);
  });
});
