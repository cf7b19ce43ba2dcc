/**
 * Core assembled from real parts (SQLite file, GGUF reader, demo model writer) around a
 * scripted engine; the real engine is covered by core.integration.test.ts.
 */
import BetterSqlite3 from "better-sqlite3";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Conversation, ConversationDetail, EngineStatus, Message } from "../api";
import { assembleCore, type Core } from "./index";
import { EventRecorder } from "../../testing/core/events";
import { FakeEngine } from "../../testing/engine/fake-engine";
import type { LoadedModel } from "./engine/types";
import { testDir } from "../../testing/core/temp-dir";
import { value } from "../../testing/core/result-value";

const ctx = { transport: "ipc" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(
  dataDir: string,
  engine = new FakeEngine(),
): Promise<{ core: Core; engine: FakeEngine; events: EventRecorder }> {
  const core = await assembleCore({ dataDir, log: () => undefined }, () => engine);
  cleanups.push(() => core.close());
  return { core, engine, events: new EventRecorder((l) => core.subscribe(l)) };
}

describe("core (scripted engine)", () => {
  it("runs a conversation through dispatch, and keeps it across a restart", async () => {
    const dataDir = testDir();
    const { core, events } = await start(dataDir);

    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    const noModel = await core.dispatch("chat.send", { conversationId: conv.id, text: "Hi" }, ctx);
    expect(noModel).toEqual({
      ok: false,
      error: { code: "no_model", message: "No model is loaded. Open a .gguf model or try the demo model." },
    });

    const status = value<EngineStatus>(await core.dispatch("models.openDemo", {}, ctx));
    expect(status).toMatchObject({ state: "ready", model: { path: join(dataDir, "models", "demo.gguf") } });
    expect(core.engineStatus()).toEqual(status);

    const done = events.next("chat.done");
    const sent = value<{ userMessage: Message; assistantMessage: Message }>(
      await core.dispatch("chat.send", { conversationId: conv.id, text: "Hello there" }, ctx),
    );
    expect((await done).message).toMatchObject({
      id: sent.assistantMessage.id,
      status: "complete",
      content: "Hello world!",
    });
    expect(
      events
        .of("chat.delta")
        .map((d) => d.delta)
        .join(""),
    ).toBe("Hello world!");

    const detail = value<ConversationDetail>(await core.dispatch("conversations.get", { id: conv.id }, ctx));
    expect(detail.conversation.title).toBe("Hello there");
    expect(detail.messages.map((m) => [m.role, m.content, m.status])).toEqual([
      ["user", "Hello there", "complete"],
      ["assistant", "Hello world!", "complete"],
    ]);
    expect(
      value<Conversation[]>(await core.dispatch("conversations.list", { query: "world" }, ctx)),
    ).toHaveLength(1);
    expect(
      value<Conversation>(
        await core.dispatch("conversations.rename", { id: conv.id, title: "Greetings" }, ctx),
      ).title,
    ).toBe("Greetings");
    await core.close();
    await core.close(); // idempotent

    // Same data folder: the conversation is there and the demo model is reopened.
    const again = await start(dataDir);
    const list = value<Conversation[]>(await again.core.dispatch("conversations.list", {}, ctx));
    expect(list.map((c) => c.title)).toEqual(["Greetings"]);
    await vi.waitFor(() => expect(again.core.engineStatus().state).toBe("ready"));
    expect(again.engine.loads).toEqual([join(dataDir, "models", "demo.gguf")]);
  });

  it("marks answers left streaming by a killed process as interrupted on start-up", async () => {
    const dataDir = testDir();
    const first = await start(dataDir);
    const conv = value<Conversation>(await first.core.dispatch("conversations.create", { title: "T" }, ctx));
    await first.core.close();
    // What a process killed mid-answer leaves behind.
    const raw = new BetterSqlite3(join(dataDir, "macaron.db"));
    raw
      .prepare(
        "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES ('m1', ?, 'assistant', 'half an ans', 'streaming', 1, 1)",
      )
      .run(conv.id);
    raw.close();

    const { core } = await start(dataDir);
    const detail = value<ConversationDetail>(await core.dispatch("conversations.get", { id: conv.id }, ctx));
    expect(detail.messages[0]).toMatchObject({ status: "interrupted", content: "half an ans" });
  });

  it("deletes a conversation while it streams: the answer stops and nothing more is reported", async () => {
    const { core, engine, events } = await start(testDir());
    await core.dispatch("models.openDemo", {}, ctx);
    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    engine.scripts.push({ tokens: ["a", "b"], end: "hang" });
    const delta = events.next("chat.delta", (d) => d.delta === "b");
    await core.dispatch("chat.send", { conversationId: conv.id, text: "Go" }, ctx);
    await delta;
    expect(value(await core.dispatch("conversations.delete", { id: conv.id }, ctx))).toEqual({
      deleted: true,
    });
    expect(events.of("conversations.changed").at(-1)).toEqual({ conversation: null, deletedId: conv.id });
    await core.close();
    expect(events.of("chat.done")).toEqual([]);
    expect(engine.closed).toBe(true);
  });

  it("unloads the model: status idle, chats say no model is loaded, and the next start opens none", async () => {
    const dataDir = testDir();
    const first = await start(dataDir);
    expect(value<EngineStatus>(await first.core.dispatch("models.openDemo", {}, ctx)).state).toBe("ready");
    const conv = value<Conversation>(await first.core.dispatch("conversations.create", {}, ctx));
    const unloaded = value<EngineStatus>(await first.core.dispatch("models.unload", {}, ctx));
    expect(unloaded).toMatchObject({ state: "idle", model: null, error: null });
    expect(first.engine.unloads).toBe(1);
    expect(first.engine.loaded).toBeNull();
    expect(first.events.of("engine.status").at(-1)).toMatchObject({ state: "idle", model: null });
    const send = await first.core.dispatch("chat.send", { conversationId: conv.id, text: "Hi" }, ctx);
    expect(send).toMatchObject({ ok: false, error: { code: "no_model" } });
    // Again: nothing to unload, the same status.
    expect(value<EngineStatus>(await first.core.dispatch("models.unload", {}, ctx)).state).toBe("idle");
    expect(first.engine.unloads).toBe(1);
    await first.core.close();

    const second = await start(dataDir);
    expect(second.engine.loads).toEqual([]);
    expect(value<EngineStatus>(await second.core.dispatch("models.status", {}, ctx)).state).toBe("idle");
  });

  it("with deferStartup answers while the initial model loads, and says when it is in (started)", async () => {
    const dataDir = testDir();
    // The Local API server left on: at the next start it serves the model, so it starts after it.
    const serving: (string | null)[] = [];
    let startedCore: Core | null = null;
    const localApiFactory = (_core: Core, options: { port: number }) => {
      serving.push(startedCore?.engineStatus().model?.path ?? null);
      return Promise.resolve({ url: `http://127.0.0.1:${options.port}`, close: () => Promise.resolve() });
    };
    const first = await assembleCore(
      { dataDir, log: () => undefined, localApiFactory },
      () => new FakeEngine(),
    );
    const demo = value<EngineStatus>(await first.dispatch("models.openDemo", {}, ctx)).model!.path;
    value(await first.dispatch("localServer.configure", { enabled: true, port: 47391 }, ctx));
    await first.close();
    serving.length = 0;

    const engine = new GatedLoadEngine();
    const core = await assembleCore(
      { dataDir, log: () => undefined, initialModel: demo, deferStartup: true, localApiFactory },
      () => engine,
    );
    startedCore = core;
    cleanups.push(() => core.close());
    let started = false;
    void core.started.then(() => (started = true));
    await vi.waitFor(() => expect(core.engineStatus().state).toBe("loading"));
    // Core serves meanwhile: a conversation is made while the model is still loading.
    value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    expect(started).toBe(false);
    expect(serving).toEqual([]);
    engine.finishLoad();
    await core.started;
    expect(core.engineStatus()).toMatchObject({ state: "ready", model: { path: demo } });
    expect(serving).toEqual([demo]);
  });

  it("closed while a deferred start-up loads its model: the close waits for the load, then ends", async () => {
    const dataDir = testDir();
    const first = await start(dataDir);
    const demo = value<EngineStatus>(await first.core.dispatch("models.openDemo", {}, ctx)).model!.path;
    await first.core.close();

    const engine = new GatedLoadEngine();
    const core = await assembleCore(
      { dataDir, log: () => undefined, initialModel: demo, deferStartup: true },
      () => engine,
    );
    await vi.waitFor(() => expect(engine.loads).toEqual([demo]));
    let closed = false;
    const closing = core.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    engine.finishLoad();
    await closing;
    await core.started;
    expect(engine.closed).toBe(true);
  });

  it("reports an invalid model file and keeps serving", async () => {
    const { core } = await start(testDir());
    const result = await core.dispatch("models.open", { path: import.meta.filename }, ctx);
    expect(result).toMatchObject({ ok: false, error: { code: "model_invalid" } });
    expect(value<EngineStatus>(await core.dispatch("models.status", {}, ctx)).state).toBe("idle");
  });
});

/** A scripted engine whose load waits until the test lets it finish. */
class GatedLoadEngine extends FakeEngine {
  private release: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  finishLoad(): void {
    this.release();
  }

  override async load(path: string, onProgress?: (p: number) => void): Promise<LoadedModel> {
    this.loads.push(path);
    await this.gate;
    this.loads.pop();
    return super.load(path, onProgress);
  }
}
