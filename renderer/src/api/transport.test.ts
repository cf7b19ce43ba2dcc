import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../../electron/api";
import type { EventName, PreloadBridge } from "../../../electron/api";
import { EventSocket } from "./event-socket";
import type { SocketLike } from "./event-socket";
import { HttpApiClient, eventsUrl } from "./http-client";
import { IpcApiClient } from "./ipc-client";

class FakeSocket implements SocketLike {
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {}
  open() {
    this.onopen?.({});
  }
  send(frame: unknown) {
    this.onmessage?.({ data: typeof frame === "string" ? frame : JSON.stringify(frame) });
  }
  drop() {
    this.onerror?.({});
    this.onclose?.({});
  }
  close() {
    this.closed = true;
  }
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

afterEach(() => vi.useRealTimers());

describe("HttpApiClient", () => {
  it("posts JSON with same-origin credentials and unwraps the envelope", async () => {
    const fetch = vi.fn(() => Promise.resolve(json({ ok: true, value: { deleted: true } })));
    const client = new HttpApiClient({
      origin: "http://127.0.0.1:9000",
      fetch,
      createSocket: (u) => new FakeSocket(u),
    });
    await expect(client.call("conversations.delete", { id: "a" })).resolves.toEqual({ deleted: true });
    const [url, init] = fetch.mock.calls[0] as unknown as [URL, RequestInit];
    expect(String(url)).toBe("http://127.0.0.1:9000/api/call/conversations.delete");
    expect(init).toMatchObject({ method: "POST", credentials: "same-origin", body: '{"id":"a"}' });
    client.dispose();
  });

  it("rejects with the server's ApiError, also on non-200 statuses", async () => {
    const client = new HttpApiClient({
      origin: "http://h",
      fetch: () =>
        Promise.resolve(
          json({ ok: false, error: { code: "busy", message: "A reply is being written." } }, 409),
        ),
    });
    const error = await client.call("models.status", {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "busy", message: "A reply is being written." });
  });

  it("turns network failures and bodies without an envelope into clear errors", async () => {
    const down = new HttpApiClient({
      origin: "http://h",
      fetch: () => Promise.reject(new TypeError("fetch failed")),
    });
    await expect(down.call("models.status", {})).rejects.toThrow(/Cannot reach the Macaron server/);
    const locked = new HttpApiClient({
      origin: "http://h",
      fetch: () => Promise.resolve(new Response("nope", { status: 401 })),
    });
    await expect(locked.call("models.status", {})).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("opens the event socket on the first subscription and delivers only valid events", () => {
    const sockets: FakeSocket[] = [];
    const client = new HttpApiClient({
      origin: "https://example.test:8443",
      fetch: () => Promise.resolve(json({ ok: true, value: null })),
      createSocket: (u) => {
        const s = new FakeSocket(u);
        sockets.push(s);
        return s;
      },
    });
    expect(sockets).toHaveLength(0);
    const deltas: string[] = [];
    client.on("chat.delta", (p) => deltas.push(p.delta));
    expect(sockets[0]?.url).toBe("wss://example.test:8443/api/events");
    sockets[0]!.open();
    expect(client.connection.state).toBe("open");
    sockets[0]!.send({ event: "chat.delta", payload: { conversationId: "c", messageId: "m", delta: "ok" } });
    sockets[0]!.send({ event: "chat.delta", payload: { conversationId: "c" } });
    sockets[0]!.send({ event: "no.such", payload: {} });
    sockets[0]!.send("not json");
    expect(deltas).toEqual(["ok"]);
    client.dispose();
    expect(sockets[0]!.closed).toBe(true);
  });
});

describe("eventsUrl", () => {
  it("uses ws: for http pages and the same host", () => {
    expect(eventsUrl("http://127.0.0.1:5000")).toBe("ws://127.0.0.1:5000/api/events");
  });
});

describe("EventSocket", () => {
  it("reconnects with growing delays and reports the state", async () => {
    vi.useFakeTimers();
    const sockets: FakeSocket[] = [];
    const states: string[] = [];
    const socket = new EventSocket({
      url: "ws://h/api/events",
      createSocket: (u) => {
        const s = new FakeSocket(u);
        sockets.push(s);
        return s;
      },
      onEvent: () => {},
      initialDelayMs: 100,
      maxDelayMs: 1000,
      random: () => 0.5, // no jitter
    });
    socket.onChange((s) => states.push(s));
    socket.start();
    sockets[0]!.open();
    sockets[0]!.drop();
    expect(socket.state).toBe("reconnecting");
    await vi.advanceTimersByTimeAsync(99);
    expect(sockets).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sockets).toHaveLength(2);
    sockets[1]!.drop();
    await vi.advanceTimersByTimeAsync(199);
    expect(sockets).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    sockets[2]!.open();
    expect(states).toEqual(["open", "reconnecting", "open"]);
    expect(socket.delayFor(10)).toBe(1000);
    socket.dispose();
    sockets[2]!.drop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(sockets).toHaveLength(3);
  });
});

describe("IpcApiClient", () => {
  it("unwraps envelopes, rejects with ApiError and fans out validated events", async () => {
    let push: ((event: EventName, payload: unknown) => void) | null = null;
    const bridge: PreloadBridge = {
      invoke: (method) =>
        Promise.resolve(
          method === "models.status"
            ? { ok: false, error: { code: "engine_crashed", message: "The engine stopped." } }
            : { ok: true, value: [] },
        ),
      subscribe: (listener) => {
        push = listener;
        return () => {
          push = null;
        };
      },
      pickModelFile: () => Promise.resolve("/m.gguf"),
      openExternal: () => Promise.resolve(),
    };
    const client = new IpcApiClient(bridge);
    expect(client.platform.kind).toBe("electron");
    await expect(client.call("conversations.list", {})).resolves.toEqual([]);
    await expect(client.call("models.status", {})).rejects.toMatchObject({ code: "engine_crashed" });
    const got: unknown[] = [];
    client.on("conversations.changed", (p) => got.push(p.deletedId));
    push!("conversations.changed", { conversation: null, deletedId: "x" });
    push!("conversations.changed", { conversation: 5 });
    expect(got).toEqual(["x"]);
    client.dispose();
    expect(push).toBeNull();
  });
});
