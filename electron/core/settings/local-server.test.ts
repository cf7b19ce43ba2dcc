/**
 * LocalApiServer on a real SQLite settings table, with a real loopback listener standing in for
 * the v1 server (electron/server/local-server.test.ts runs the real one): what is saved, what
 * each change does to the listener (and what it is started with: the CORS allow-list), the
 * events, and failures that must not escape.
 */
import BetterSqlite3 from "better-sqlite3";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, type LocalServerStatus } from "../../api";
import type { LocalApiHandle, LocalApiOptions } from "../core-types";
import { DEFAULT_LOCAL_SERVER_PORT, LocalApiServer, type LocalApiStarter } from "./local-server";
import { SettingsStore } from "./settings-store";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function settingsDb(): SettingsStore {
  const db = new BetterSqlite3(":memory:");
  db.exec("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  cleanups.push(() => db.close());
  return new SettingsStore(db);
}

/** A loopback HTTP server answering 200 to the key and 401 to anything else, like the real one. */
const keyedListener: LocalApiStarter = async ({ port, apiKey }) => {
  const server: Server = createServer((req: IncomingMessage, res) => {
    res.statusCode = req.headers.authorization === `Bearer ${apiKey}` ? 200 : 401;
    res.end();
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", done);
  });
  const handle: LocalApiHandle = {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  cleanups.push(() => handle.close().catch(() => undefined));
  return handle;
};

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return address.port;
}

/** `null`: core was given no server. */
function service(settings: SettingsStore, start: LocalApiStarter | null = keyedListener) {
  const events: LocalServerStatus[] = [];
  const logged: string[] = [];
  const server = new LocalApiServer({
    settings,
    start: start ?? undefined,
    emit: (status) => events.push(status),
    log: (message) => logged.push(message),
  });
  cleanups.push(() => server.close());
  return { server, events, logged };
}

/** keyedListener, remembering what each start was given. */
function recordingListener(): { start: LocalApiStarter; started: LocalApiOptions[] } {
  const started: LocalApiOptions[] = [];
  return {
    started,
    start: (options) => {
      started.push(options);
      return keyedListener(options);
    },
  };
}

const get = (url: string, key: string) => fetch(url, { headers: { authorization: `Bearer ${key}` } });

describe("LocalApiServer", () => {
  it("starts off, on LM Studio's port, with one key kept across instances", async () => {
    const settings = settingsDb();
    const { server } = service(settings);
    const status = server.status();
    expect(status).toMatchObject({
      enabled: false,
      running: false,
      host: "127.0.0.1",
      port: DEFAULT_LOCAL_SERVER_PORT,
    });
    expect(status.apiKey).toMatch(/^[0-9a-f]{64}$/);
    expect(service(settings).server.status().apiKey).toBe(status.apiKey);
    // Not enabled: start() at core start-up listens nowhere and emits nothing.
    expect(await service(settings).server.start()).toMatchObject({ running: false });
  });

  it("listens when enabled, restarts on a port change, and stops when disabled or closed", async () => {
    const settings = settingsDb();
    const { server, events } = service(settings);
    const [a, b] = [await freePort(), await freePort()];
    const on = await server.configure({ enabled: true, port: a });
    expect(on).toMatchObject({ running: true, url: `http://127.0.0.1:${a}/v1` });
    expect((await get(on.url!, on.apiKey)).status).toBe(200);

    const moved = await server.configure({ port: b });
    expect(moved.url).toBe(`http://127.0.0.1:${b}/v1`);
    await expect(get(on.url!, on.apiKey)).rejects.toThrow();
    expect((await get(moved.url!, on.apiKey)).status).toBe(200);

    expect(events.map((e) => [e.running, e.port])).toEqual([
      [true, a],
      [true, b],
    ]);
    // Another instance on the same settings (a restart) comes back on at start().
    await server.close();
    await expect(get(moved.url!, on.apiKey)).rejects.toThrow();
    const restarted = service(settings).server;
    expect(await restarted.start()).toMatchObject({ enabled: true, running: true, port: b });
    await restarted.configure({ enabled: false });
    await expect(get(moved.url!, on.apiKey)).rejects.toThrow();
  });

  it("runs changes one after another: the last one wins, with one listener", async () => {
    const { server } = service(settingsDb());
    const ports = [await freePort(), await freePort(), await freePort()];
    const results = await Promise.all(ports.map((port) => server.configure({ enabled: true, port })));
    expect(results.map((r) => r.running)).toEqual([true, true, true]);
    expect(server.status().port).toBe(ports[2]);
    for (const port of ports.slice(0, 2)) await expect(get(`http://127.0.0.1:${port}`, "")).rejects.toThrow();
  });

  it("says which port is taken, keeps the setting, and recovers once the port is free", async () => {
    const settings = settingsDb();
    const { server, events, logged } = service(settings);
    const port = await freePort();
    const blocker = createNetServer();
    await new Promise<void>((done) => blocker.listen(port, "127.0.0.1", done));
    const taken = await server.configure({ enabled: true, port });
    expect(taken).toMatchObject({ enabled: true, running: false, url: null });
    expect(taken.error).toContain(`Port ${port} is in use by another program`);
    expect(events.at(-1)).toEqual(taken);
    expect(logged).toHaveLength(1);
    await new Promise<void>((done) => blocker.close(() => done()));
    expect(await server.configure({ enabled: true })).toMatchObject({ running: true, error: null });
  });

  it("a new key restarts the server: the old key gets 401", async () => {
    const { server } = service(settingsDb());
    const on = await server.configure({ enabled: true, port: await freePort() });
    const renewed = await server.regenerateKey();
    expect(renewed.apiKey).not.toBe(on.apiKey);
    expect((await get(renewed.url!, on.apiKey)).status).toBe(401);
    expect((await get(renewed.url!, renewed.apiKey)).status).toBe(200);
  });

  it("allows no web origin by default; saves origins as browsers send them, once each, and restarts with them", async () => {
    const settings = settingsDb();
    const { start, started } = recordingListener();
    const { server, events } = service(settings, start);
    expect(server.status().corsOrigins).toEqual([]);

    const port = await freePort();
    const on = await server.configure({
      enabled: true,
      port,
      corsOrigins: ["http://LOCALHOST:5173/", "http://localhost:5173", "https://app.example"],
    });
    const listed = ["http://localhost:5173", "https://app.example"];
    expect(on).toMatchObject({ running: true, corsOrigins: listed });
    expect(started).toEqual([{ port, apiKey: on.apiKey, corsOrigins: listed }]);
    expect(events.at(-1)?.corsOrigins).toEqual(listed);

    // Another change keeps the list; the server restarts with it.
    const moved = await server.configure({ port: await freePort() });
    expect(moved.corsOrigins).toEqual(listed);
    expect(started.at(-1)?.corsOrigins).toEqual(listed);

    // Saved: another instance on the same settings (the next app start) serves with the list.
    await server.close();
    const again = recordingListener();
    const restarted = service(settings, again.start).server;
    expect(await restarted.start()).toMatchObject({ running: true, corsOrigins: listed });
    expect(again.started.map((o) => o.corsOrigins)).toEqual([listed]);

    // Emptied: off again, and the running server restarts without CORS.
    expect((await restarted.configure({ corsOrigins: [] })).corsOrigins).toEqual([]);
    expect(again.started.at(-1)?.corsOrigins).toEqual([]);
    expect(service(settings).server.status().corsOrigins).toEqual([]);
  });

  it("refuses * and anything that is not an origin, naming it, and changes nothing", async () => {
    const settings = settingsDb();
    const { start, started } = recordingListener();
    const { server, events } = service(settings, start);
    await server.configure({ enabled: true, port: await freePort(), corsOrigins: ["http://localhost:5173"] });
    const before = { events: events.length, starts: started.length };
    for (const [bad, why] of [
      ["*", "* (any web page) is not allowed here"],
      ["http://a.example/path", "not an origin: http://a.example/path"],
      ["file:///x", "not an origin: file:///x"],
      ["localhost:5173", "not an origin: localhost:5173"],
      ["http://a.example, http://b.example", "one origin at a time"],
    ] as const) {
      let thrown: unknown;
      try {
        await server.configure({ corsOrigins: ["https://ok.example", bad] });
      } catch (err) {
        thrown = err;
      }
      expect(thrown, bad).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).code).toBe("invalid_input");
      expect((thrown as ApiError).message).toContain(`Allowed origins: ${why}`);
    }
    const tooMany = Array.from({ length: 33 }, (_, i) => `http://localhost:${3000 + i}`);
    expect(() => server.configure({ corsOrigins: tooMany })).toThrow(/at most 32/);
    expect(server.status().corsOrigins).toEqual(["http://localhost:5173"]);
    expect({ events: events.length, starts: started.length }).toEqual(before);
  });

  it("ignores unreadable saved settings and answers an error without a server to start", () => {
    const settings = settingsDb();
    settings.set("localServer", {
      enabled: "yes",
      port: 80,
      corsOrigins: ["*", 5, "http://a.example/path", "https://ok.example", "https://ok.example/"],
    });
    settings.set("localServer.apiKey", "short");
    const { server } = service(settings);
    const status = server.status();
    // Only entries the setting would accept are served; a hand-edited * lets nothing in.
    expect(status).toMatchObject({
      enabled: false,
      port: DEFAULT_LOCAL_SERVER_PORT,
      corsOrigins: ["https://ok.example"],
    });
    settings.set("localServer", { corsOrigins: "https://ok.example" });
    expect(service(settings).server.status().corsOrigins).toEqual([]);
    expect(status.apiKey).toMatch(/^[0-9a-f]{64}$/);

    const { server: none } = service(settingsDb(), null);
    expect(() => none.status()).toThrow(ApiError);
    expect(() => none.configure({ enabled: true })).toThrow(/cannot serve the local API/);
  });
});
