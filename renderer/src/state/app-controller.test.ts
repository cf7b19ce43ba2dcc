import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../../electron/api";
import type {
  Conversation,
  DatabaseStatus,
  EngineStatus,
  EventName,
  EventPayload,
  MethodInput,
  MethodName,
  MethodOutput,
} from "../../../electron/api";
import type { ConnectionState, RendererApi } from "../api";
import { EventFanout } from "../api/event-fanout";
import { AppController, NOTICE_MS, UNDO_DELETE_MS } from "./app-controller";
import { message, readyEngine } from "../testing/fixtures";

const demo = readyEngine({ path: "/m/demo.gguf", name: "demo", isDemo: true });

type FakeInput = {
  query?: string;
  title?: string;
  id?: string;
  conversationId?: string;
  text?: string;
  deleteMemories?: boolean;
};

/** A unit-test stand-in for core: a few methods over an in-memory list, and event emission. */
class FakeApi implements RendererApi {
  readonly platform = { kind: "browser" as const };
  readonly fanout = new EventFanout();
  readonly calls: Array<[MethodName, unknown]> = [];
  conversations: Conversation[] = [];
  engine: EngineStatus = { state: "idle", model: null, error: null, gpu: null, progress: null };
  failNext: ApiError | null = null;
  database: DatabaseStatus = { state: "ok", message: null, path: "/d/macaron.db", backups: [] };
  private seq = 0;
  private connectionListeners = new Set<(s: ConnectionState) => void>();
  connection = {
    state: "open" as ConnectionState,
    onChange: (l: (s: ConnectionState) => void) => {
      this.connectionListeners.add(l);
      return () => this.connectionListeners.delete(l);
    },
  };

  call<M extends MethodName>(method: M, input: MethodInput<M>): Promise<MethodOutput<M>> {
    this.calls.push([method, input]);
    // A promise chain so a thrown ApiError becomes a rejection, like a real transport's.
    return Promise.resolve().then(() => this.handle(method, input as FakeInput) as MethodOutput<M>);
  }

  private handle(method: MethodName, input: FakeInput): unknown {
    // Answers whatever failNext says: start() asks it before the calls those tests fail.
    if (method === "database.status") return this.database;
    if (method === "database.startFresh") {
      this.database = { ...this.database, state: "ok", message: null };
      return this.database;
    }
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = null;
      throw error;
    }
    switch (method) {
      case "models.status":
        return this.engine;
      case "models.openDemo":
        this.engine = demo;
        return demo;
      case "conversations.list":
        return input.query
          ? this.conversations.filter((c) => c.title.includes(input.query!))
          : this.conversations;
      case "conversations.create": {
        const c = {
          id: `c${++this.seq}`,
          title: input.title ?? "New chat",
          createdAt: this.seq,
          updatedAt: this.seq,
          adapters: "auto" as const,
        };
        this.conversations.push(c);
        return c;
      }
      case "conversations.get": {
        const conversation = this.conversations.find((c) => c.id === input.id);
        if (!conversation) throw new ApiError("not_found", "No such conversation");
        return { conversation, messages: [] };
      }
      case "conversations.delete":
        this.conversations = this.conversations.filter((c) => c.id !== input.id);
        return { deleted: true };
      case "chat.send": {
        const conversationId = input.conversationId!;
        return {
          userMessage: message({
            id: "u1",
            role: "user",
            conversationId,
            content: input.text!,
            createdAt: 10,
          }),
          assistantMessage: message({
            id: "a1",
            role: "assistant",
            conversationId,
            status: "streaming",
            createdAt: 11,
          }),
        };
      }
      case "chat.stop":
        return { stopped: true };
      case "conversations.search":
        return this.conversations
          .filter((c) => c.title.includes(input.query!))
          .map((c) => ({
            conversationId: c.id,
            conversationTitle: c.title,
            messageId: null,
            role: null,
            snippet: [{ text: c.title, match: true }],
            createdAt: c.createdAt,
          }));
      default:
        throw new ApiError("unknown_method", method);
    }
  }

  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    return this.fanout.add(event, listener);
  }

  emit(event: EventName, payload: unknown): void {
    this.fanout.dispatch(event, payload);
  }

  setConnection(state: ConnectionState): void {
    this.connection.state = state;
    for (const l of this.connectionListeners) l(state);
  }

  dispose(): void {}
}

// Deltas apply synchronously in tests: the batching itself is covered in delta-batcher.test.ts.
const immediate = (cb: () => void) => {
  cb();
  return () => {};
};

let controller: AppController | null = null;
afterEach(() => {
  controller?.dispose();
  controller = null;
  vi.useRealTimers();
});

async function started(api: FakeApi, initialId: string | null = null) {
  controller = new AppController(api, immediate);
  await controller.start(initialId);
  return controller;
}

describe("AppController", () => {
  it("becomes loaded after models.status and conversations.list, or reports why not", async () => {
    const api = new FakeApi();
    const app = await started(api);
    expect(app.store.getState().phase).toBe("loaded");

    const down = new FakeApi();
    down.failNext = new ApiError("internal", "Cannot reach the Macaron server.");
    controller?.dispose();
    controller = new AppController(down, immediate);
    await controller.start(null);
    expect(controller.store.getState()).toMatchObject({
      phase: "error",
      loadError: "Cannot reach the Macaron server.",
    });
  });

  it("creates the conversation on the first send, then streams deltas and the final message", async () => {
    const api = new FakeApi();
    api.engine = demo;
    const app = await started(api);
    expect(await app.chat.send("  Hello there  ")).toBe(true);
    expect(api.calls.map(([m]) => m)).toContain("conversations.create");
    const id = app.store.getState().currentId!;
    expect(id).toBe("c1");
    expect(api.calls.find(([m]) => m === "chat.send")?.[1]).toEqual({
      conversationId: "c1",
      text: "Hello there",
    });

    api.emit("chat.delta", { conversationId: id, messageId: "a1", delta: "Hi" });
    api.emit("chat.delta", { conversationId: id, messageId: "a1", delta: " you" });
    expect(app.store.getState().messages[id]?.map((m) => m.content)).toEqual(["Hello there", "Hi you"]);

    const final = message({
      id: "a1",
      role: "assistant",
      conversationId: id,
      content: "Hi you.",
      createdAt: 11,
    });
    api.emit("chat.done", { conversationId: id, message: final });
    expect(app.store.getState().messages[id]?.[1]).toEqual(final);
  });

  it("drops events whose payload does not match the contract", async () => {
    const api = new FakeApi();
    const app = await started(api);
    api.emit("chat.delta", { conversationId: "c1", messageId: "a1" });
    api.emit("engine.status", { state: "bogus" });
    expect(app.store.getState().messages).toEqual({});
    expect(app.store.getState().engine?.state).toBe("idle");
  });

  it("says why nothing was sent when no model is loaded", async () => {
    const api = new FakeApi();
    const app = await started(api);
    expect(await app.chat.send("hi")).toBe(false);
    expect(app.store.getState().composerError).toMatch(/No model is loaded/);
    expect(api.calls.map(([m]) => m)).not.toContain("chat.send");
  });

  it("keeps the failure as composerError (the composer keeps the text)", async () => {
    const api = new FakeApi();
    api.engine = demo;
    const app = await started(api);
    api.failNext = new ApiError("no_model", "No model is loaded.");
    expect(await app.chat.send("hi")).toBe(false);
    expect(app.store.getState().composerError).toBe("No model is loaded.");
    expect(app.store.getState().sending).toBe(false);
  });

  it("deletes only after the undo window, and Undo keeps the conversation", async () => {
    vi.useFakeTimers();
    const api = new FakeApi();
    api.conversations = [
      { id: "x", title: "keep me", createdAt: 1, updatedAt: 1, adapters: "auto" },
      { id: "y", title: "drop me", createdAt: 2, updatedAt: 2, adapters: "auto" },
    ];
    const app = await started(api, "y");
    app.deletes.request("x");
    app.deletes.request("y");
    expect(app.store.getState().pendingDeletes.map((c) => c.id)).toEqual(["x", "y"]);
    expect(app.store.getState().currentId).toBeNull();
    app.deletes.undo("x");
    await vi.advanceTimersByTimeAsync(UNDO_DELETE_MS);
    expect(api.calls.filter(([m]) => m === "conversations.delete")).toEqual([
      ["conversations.delete", { id: "y" }],
    ]);
    expect(app.store.getState().conversations.map((c) => c.id)).toEqual(["x"]);
    expect(app.store.getState().pendingDeletes).toEqual([]);
  });

  it("a server that does not know this browser shows the signed-out screen, not a load error", async () => {
    const api = new FakeApi();
    api.failNext = new ApiError("unauthorized", "Not signed in.");
    const app = await started(api);
    expect(app.store.getState().phase).toBe("signedOut");
    // Once a new link was opened, checking again loads the app.
    await app.start(null);
    expect(app.store.getState().phase).toBe("loaded");
  });

  it("gives Undo at least 10 s, and a notice dismisses itself (a newer one starts its own time)", async () => {
    expect(UNDO_DELETE_MS).toBeGreaterThanOrEqual(10_000);
    vi.useFakeTimers();
    const app = await started(new FakeApi());
    app.store.setState({ notice: "Imported 1 conversation" });
    await vi.advanceTimersByTimeAsync(NOTICE_MS - 1000);
    app.store.setState({ notice: "Imported 2 conversations" });
    await vi.advanceTimersByTimeAsync(NOTICE_MS - 1000);
    expect(app.store.getState().notice).toBe("Imported 2 conversations");
    await vi.advanceTimersByTimeAsync(1000);
    expect(app.store.getState().notice).toBeNull();
  });

  it("falls back to a new chat when the linked conversation no longer exists", async () => {
    const app = await started(new FakeApi(), "gone");
    expect(app.store.getState().currentId).toBeNull();
    expect(app.store.getState().notice).toMatch(/no longer exists/);
  });

  it("applies conversations.changed and engine.status events", async () => {
    const api = new FakeApi();
    const app = await started(api);
    api.emit("conversations.changed", {
      conversation: { id: "n", title: "New", createdAt: 1, updatedAt: 5 },
      deletedId: null,
    });
    expect(app.store.getState().conversations.map((c) => c.id)).toEqual(["n"]);
    api.emit("conversations.changed", { conversation: null, deletedId: "n" });
    expect(app.store.getState().conversations).toEqual([]);
    api.emit("engine.status", demo);
    expect(app.store.getState().engine).toEqual(demo);
  });

  it("refetches state after the event channel reconnects", async () => {
    const api = new FakeApi();
    const app = await started(api);
    api.engine = demo;
    api.setConnection("reconnecting");
    expect(app.store.getState().connection).toBe("reconnecting");
    api.setConnection("open");
    await vi.waitFor(() => expect(app.store.getState().engine).toEqual(demo));
  });

  it("stops only a streaming conversation", async () => {
    const api = new FakeApi();
    api.engine = demo;
    const app = await started(api);
    await app.chat.stop();
    expect(api.calls.some(([m]) => m === "chat.stop")).toBe(false);
    await app.chat.send("hi");
    await app.chat.stop();
    expect(api.calls.find(([m]) => m === "chat.stop")?.[1]).toEqual({ conversationId: "c1" });
  });

  it("opens the demo model and reports load errors", async () => {
    const api = new FakeApi();
    const app = await started(api);
    api.failNext = new ApiError("model_invalid", "Not a GGUF file: /tmp/x");
    expect(await app.models.open("/tmp/x")).toBe(false);
    expect(app.store.getState().modelError).toBe("Not a GGUF file: /tmp/x");
    expect(await app.models.open("   ")).toBe(false);
    expect(await app.models.openDemo()).toBe(true);
    expect(app.store.getState()).toMatchObject({ engine: demo, modelError: null, modelBusy: false });
  });

  it("shows the database screen for a damaged database, and loads after a fresh start", async () => {
    const api = new FakeApi();
    api.database = {
      state: "corrupt",
      message: "file is not a database",
      path: "/d/macaron.db",
      backups: [],
    };
    const app = await started(api);
    expect(app.store.getState().phase).toBe("database");
    expect(api.calls.map(([m]) => m)).not.toContain("conversations.list");
    expect(await app.database.startFresh()).toBe(true);
    expect(app.store.getState().phase).toBe("loaded");
  });

  it("searches with conversations.search and shows the plain list again for an empty query", async () => {
    const api = new FakeApi();
    api.conversations = [{ id: "x", title: "metric units", createdAt: 1, updatedAt: 1, adapters: "auto" }];
    const app = await started(api);
    await app.conversations.search("metric");
    expect(api.calls).toContainEqual(["conversations.search", { query: "metric", limit: 50 }]);
    expect(app.store.getState().searchHits?.map((h) => h.conversationId)).toEqual(["x"]);
    await app.conversations.search("  ");
    expect(app.store.getState().searchHits).toBeNull();
  });

  it("deletes the conversation's memories too when asked in the Undo toast", async () => {
    vi.useFakeTimers();
    const api = new FakeApi();
    api.conversations = [{ id: "x", title: "with memories", createdAt: 1, updatedAt: 1, adapters: "auto" }];
    const app = await started(api);
    app.deletes.request("x");
    await vi.advanceTimersByTimeAsync(UNDO_DELETE_MS - 1000);
    // Deciding restarts the countdown.
    app.deletes.setDeleteMemories("x", true);
    await vi.advanceTimersByTimeAsync(UNDO_DELETE_MS - 1000);
    expect(api.calls.filter(([m]) => m === "conversations.delete")).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(api.calls.filter(([m]) => m === "conversations.delete")).toEqual([
      ["conversations.delete", { id: "x", deleteMemories: true }],
    ]);
    expect(app.store.getState().deleteMemoryIds).toEqual([]);
  });
});
