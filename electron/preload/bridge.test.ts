import { describe, expect, it } from "vitest";
import { createPreloadBridge, type IpcPort } from "./bridge";
import { IpcChannel } from "../../common/ipc-channels";

type Listener = (event: unknown, ...args: unknown[]) => void;

/** Records invokes and lets the test emit events as main would. */
class FakeIpcRenderer implements IpcPort {
  readonly invoked: unknown[][] = [];
  readonly listeners = new Map<string, Set<Listener>>();
  reply: unknown = { ok: true, value: 1 };
  invoke(channel: string, ...args: unknown[]): Promise<unknown> {
    this.invoked.push([channel, ...args]);
    return Promise.resolve(this.reply);
  }
  on(channel: string, listener: Listener): this {
    const set = this.listeners.get(channel) ?? new Set();
    set.add(listener);
    this.listeners.set(channel, set);
    return this;
  }
  removeListener(channel: string, listener: Listener): this {
    this.listeners.get(channel)?.delete(listener);
    return this;
  }
  emit(channel: string, ...args: unknown[]): void {
    for (const l of this.listeners.get(channel) ?? []) l({ sender: "main" }, ...args);
  }
}

describe("preload bridge", () => {
  it("sends API methods over the invoke channel and returns the envelope", async () => {
    const ipc = new FakeIpcRenderer();
    const bridge = createPreloadBridge(ipc);
    await expect(bridge.invoke("conversations.create", { title: "a" })).resolves.toEqual({
      ok: true,
      value: 1,
    });
    expect(ipc.invoked).toEqual([[IpcChannel.invoke, "conversations.create", { title: "a" }]]);
  });

  it("refuses names that are not API methods without sending", async () => {
    const ipc = new FakeIpcRenderer();
    const bridge = createPreloadBridge(ipc);
    // The page may call with any string at runtime.
    const result = await bridge.invoke("__proto__" as never, {});
    expect(result).toEqual({
      ok: false,
      error: { code: "unknown_method", message: "Unknown method: __proto__" },
    });
    expect(ipc.invoked).toEqual([]);
  });

  it("delivers known events until the disposer runs, and drops unknown ones", () => {
    const ipc = new FakeIpcRenderer();
    const bridge = createPreloadBridge(ipc);
    const got: unknown[][] = [];
    const dispose = bridge.subscribe((name, payload) => got.push([name, payload]));
    ipc.emit(IpcChannel.event, "chat.delta", { delta: "a" });
    ipc.emit(IpcChannel.event, "not.an.event", {});
    dispose();
    dispose();
    ipc.emit(IpcChannel.event, "chat.delta", { delta: "b" });
    expect(got).toEqual([["chat.delta", { delta: "a" }]]);
    expect(ipc.listeners.get(IpcChannel.event)?.size).toBe(0);
  });

  it("picks a model file and opens links through their own channels", async () => {
    const ipc = new FakeIpcRenderer();
    const bridge = createPreloadBridge(ipc);
    ipc.reply = "/m/tiny.gguf";
    await expect(bridge.pickModelFile()).resolves.toBe("/m/tiny.gguf");
    ipc.reply = undefined;
    await expect(bridge.pickModelFile()).resolves.toBeNull();
    await bridge.openExternal("https://example.com");
    await expect(bridge.openExternal(5 as never)).rejects.toThrow(/URL string/);
    expect(ipc.invoked).toEqual([
      [IpcChannel.pickModel],
      [IpcChannel.pickModel],
      [IpcChannel.openExternal, "https://example.com"],
    ]);
  });
});
