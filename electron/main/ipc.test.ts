import type { IpcMainInvokeEvent } from "electron";
import { describe, expect, it } from "vitest";
import type { CallContext, EventListener } from "../core/core-types";
import type { Result } from "../api";
import { IpcChannel } from "../../common/ipc-channels";
import { createAppOrigin } from "./app-origin";
import { registerIpcTransport, type IpcRegistrar, type WindowContents } from "./ipc";

type Handler = (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown;

/** A minimal stand-in for ipcMain that lets the test call the registered handlers. */
class FakeIpcMain implements IpcRegistrar {
  readonly handlers = new Map<string, Handler>();
  handle(channel: string, listener: Handler): void {
    if (this.handlers.has(channel)) throw new Error(`second handler for ${channel}`);
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
  call(channel: string, event: unknown, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`no handler for ${channel}`);
    return Promise.resolve(handler(event as IpcMainInvokeEvent, ...args));
  }
}

function setup() {
  const rendererDir = "/app/out/renderer";
  const origin = createAppOrigin({ rendererDir });
  const ipcMain = new FakeIpcMain();
  const sent: unknown[][] = [];
  const contents: WindowContents = {
    id: 7,
    isDestroyed: () => false,
    send: (...args: unknown[]) => void sent.push(args),
  };
  const calls: [string, unknown, CallContext][] = [];
  const listeners = new Set<EventListener>();
  const opened: string[] = [];
  const core = {
    dispatch: (method: string, input: unknown, ctx: CallContext): Promise<Result<unknown>> => {
      calls.push([method, input, ctx]);
      return Promise.resolve({ ok: true, value: { echoed: input } });
    },
    subscribe: (listener: EventListener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
  let window: WindowContents | null = contents;
  const dispose = registerIpcTransport({
    ipcMain,
    core,
    origin,
    getContents: () => window,
    pickModelFile: () => Promise.resolve("/models/tiny.gguf"),
    openExternal: (url) => {
      opened.push(url);
      return Promise.resolve();
    },
  });
  const trustedEvent = {
    sender: { id: 7 },
    senderFrame: { url: "file:///app/out/renderer/index.html#/", parent: null },
  };
  return {
    ipcMain,
    sent,
    calls,
    listeners,
    opened,
    dispose,
    trustedEvent,
    closeWindow: () => (window = null),
  };
}

describe("IPC transport", () => {
  it("dispatches API calls from our window to core with the ipc transport", async () => {
    const t = setup();
    const result = await t.ipcMain.call(IpcChannel.invoke, t.trustedEvent, "conversations.list", {
      query: "x",
    });
    expect(result).toEqual({ ok: true, value: { echoed: { query: "x" } } });
    expect(t.calls).toEqual([["conversations.list", { query: "x" }, { transport: "ipc" }]]);
  });

  it("refuses unknown method names without reaching core", async () => {
    const t = setup();
    const result = await t.ipcMain.call(IpcChannel.invoke, t.trustedEvent, "constructor", {});
    expect(result).toEqual({
      ok: false,
      error: { code: "unknown_method", message: "Unknown method: constructor" },
    });
    expect(t.calls).toEqual([]);
  });

  it.each([
    [
      "another webContents",
      { sender: { id: 8 }, senderFrame: { url: "file:///app/out/renderer/index.html", parent: null } },
    ],
    [
      "a subframe",
      { sender: { id: 7 }, senderFrame: { url: "file:///app/out/renderer/index.html", parent: {} } },
    ],
    ["a foreign page", { sender: { id: 7 }, senderFrame: { url: "https://evil.example/", parent: null } }],
    [
      "a file outside the app",
      { sender: { id: 7 }, senderFrame: { url: "file:///tmp/x.html", parent: null } },
    ],
    ["a destroyed frame", { sender: { id: 7 }, senderFrame: null }],
  ])("refuses calls from %s", async (_name, event) => {
    const t = setup();
    const result = await t.ipcMain.call(IpcChannel.invoke, event, "models.status", {});
    expect(result).toMatchObject({ ok: false, error: { code: "forbidden" } });
    expect(t.calls).toEqual([]);
    await expect(t.ipcMain.call(IpcChannel.pickModel, event)).rejects.toThrow(/may not/);
    await expect(t.ipcMain.call(IpcChannel.openExternal, event, "https://example.com")).rejects.toThrow(
      /may not/,
    );
    expect(t.opened).toEqual([]);
  });

  it("refuses calls once the window is gone", async () => {
    const t = setup();
    t.closeWindow();
    const result = await t.ipcMain.call(IpcChannel.invoke, t.trustedEvent, "models.status", {});
    expect(result).toMatchObject({ ok: false, error: { code: "forbidden" } });
  });

  it("picks a model file through the injected dialog", async () => {
    const t = setup();
    await expect(t.ipcMain.call(IpcChannel.pickModel, t.trustedEvent)).resolves.toBe("/models/tiny.gguf");
  });

  it("opens only validated external links", async () => {
    const t = setup();
    await t.ipcMain.call(IpcChannel.openExternal, t.trustedEvent, "https://example.com/docs");
    await expect(
      t.ipcMain.call(IpcChannel.openExternal, t.trustedEvent, "file:///etc/passwd"),
    ).rejects.toThrow(/Only http, https and mailto/);
    expect(t.opened).toEqual(["https://example.com/docs"]);
  });

  it("forwards core events to the window and stops after dispose", () => {
    const t = setup();
    const payload = { conversationId: "c1", messageId: "m1", delta: "hi" };
    for (const listener of t.listeners) listener("chat.delta", payload);
    expect(t.sent).toEqual([[IpcChannel.event, "chat.delta", payload]]);

    t.dispose();
    expect(t.listeners.size).toBe(0);
    expect(t.ipcMain.handlers.size).toBe(0);
  });
});
