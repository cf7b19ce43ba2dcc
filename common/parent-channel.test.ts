import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { detectParentChannel } from "./parent-channel";

describe("detectParentChannel", () => {
  it("uses Electron's parentPort when present", () => {
    const port = new EventEmitter() as EventEmitter & { postMessage(m: unknown): void; sent: unknown[] };
    port.sent = [];
    port.postMessage = (m) => port.sent.push(m);
    const proc = Object.assign(new EventEmitter(), {
      parentPort: port,
      send: () => true,
    }) as unknown as NodeJS.Process;
    const channel = detectParentChannel(proc);
    expect(channel?.kind).toBe("utility");
    const received: unknown[] = [];
    channel?.onMessage((m) => received.push(m));
    port.emit("message", { data: { id: 1, type: "ping" } });
    channel?.send({ type: "ready", pid: 1 });
    expect(received).toEqual([{ id: 1, type: "ping" }]);
    expect(port.sent).toEqual([{ type: "ready", pid: 1 }]);
  });

  it("uses process.send under child_process.fork", () => {
    const sent: unknown[] = [];
    const proc = Object.assign(new EventEmitter(), { connected: true, send: (m: unknown) => sent.push(m) });
    const channel = detectParentChannel(proc as unknown as NodeJS.Process);
    expect(channel?.kind).toBe("fork");
    const received: unknown[] = [];
    channel?.onMessage((m) => received.push(m));
    proc.emit("message", { id: 2, type: "ping" });
    channel?.send({ type: "ready", pid: 2 });
    proc.connected = false;
    channel?.send({ type: "ready", pid: 3 });
    expect(received).toEqual([{ id: 2, type: "ping" }]);
    expect(sent).toEqual([{ type: "ready", pid: 2 }]);
  });

  it("a send that fails because the parent just went away does not crash the child", () => {
    const proc = Object.assign(new EventEmitter(), {
      connected: true,
      // Node's process.send with a callback: the error goes to it, not to an 'error' event.
      send: (_m: unknown, _h: unknown, _o: unknown, callback?: (error: Error | null) => void) => {
        const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
        if (callback) callback(epipe);
        else proc.emit("error", epipe);
        return false;
      },
    });
    const channel = detectParentChannel(proc as unknown as NodeJS.Process);
    expect(() => channel?.send({ type: "ready", pid: 4 })).not.toThrow();
  });

  it("returns null without a parent", () => {
    expect(detectParentChannel(new EventEmitter() as unknown as NodeJS.Process)).toBeNull();
  });
});
