import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { Conversation } from "../../../electron/api";
import { AppController } from "../state/app-controller";
import { adapterInfo as adapter, message, readyEngine } from "../testing/fixtures";
import { ScriptedApi } from "../testing/scripted-api";

const engine = readyEngine({ path: "/m/base.gguf", name: "base", isDemo: false });

/** Core with a model loaded, no conversations and two adapters; each test adds what it needs. */
function scriptedApi(): ScriptedApi {
  return new ScriptedApi({
    "models.status": () => engine,
    "conversations.list": () => [],
    "adapters.list": () => [adapter("chat", "Chat"), adapter("coding", "Coding")],
  });
}

const conversation: Conversation = { id: "c1", title: "t", createdAt: 1, updatedAt: 1, adapters: "auto" };

let controller: AppController | undefined;
afterEach(() => controller?.dispose());

async function started(api: ScriptedApi, initialId: string | null = null): Promise<AppController> {
  controller = new AppController(api, (flush) => {
    flush();
    return () => {};
  });
  await controller.start(initialId);
  await flushPromises();
  return controller;
}

async function flushPromises(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
}

describe("AdapterController", () => {
  it("lists the adapters after start and again on adapters.changed", async () => {
    const api = scriptedApi();
    const c = await started(api);
    expect(c.adapters.store.getState().adapters?.map((a) => a.name)).toEqual(["Chat", "Coding"]);
    api.handlers["adapters.list"] = () => [adapter("chat", "Chat")];
    api.emit("adapters.changed", {});
    await flushPromises();
    expect(c.adapters.store.getState().adapters?.map((a) => a.id)).toEqual(["chat"]);
  });

  it("shows the server's message for a refused install and keeps the list", async () => {
    const api = scriptedApi();
    const c = await started(api);
    const before = c.adapters.store.getState().adapters;
    api.handlers["adapters.install"] = () => {
      throw new ApiError("invalid_input", "This adapter was made for another base model.");
    };
    expect(await c.adapters.install("/x/wrong.gguf")).toBe(false);
    expect(c.adapters.store.getState()).toMatchObject({
      installError: "This adapter was made for another base model.",
      installing: false,
      adapters: before,
    });
    expect(await c.adapters.install("   ")).toBe(false);
    expect(c.adapters.store.getState().installError).toMatch(/path/);
  });

  it("updates and removes adapters in the list", async () => {
    const api = scriptedApi();
    const c = await started(api);
    api.handlers["adapters.update"] = (input: { id: string; enabled?: boolean }) => ({
      ...adapter(input.id, "Chat"),
      enabled: input.enabled ?? true,
    });
    api.handlers["adapters.remove"] = () => ({ removed: true });
    await c.adapters.setEnabled("chat", false);
    expect(c.adapters.store.getState().adapters?.find((a) => a.id === "chat")?.enabled).toBe(false);
    await c.adapters.remove("coding");
    expect(c.adapters.store.getState().adapters?.map((a) => a.id)).toEqual(["chat"]);
    expect(c.adapters.store.getState().busyIds).toEqual([]);
  });

  it("shows a switch change at once and rolls it back when refused", async () => {
    const api = scriptedApi();
    const c = await started(api);
    api.handlers["adapters.update"] = () => {
      throw new ApiError("not_found", "No adapter with id chat.");
    };
    const pending = c.adapters.setEnabled("chat", false);
    expect(c.adapters.store.getState().adapters?.find((a) => a.id === "chat")?.enabled).toBe(false);
    expect(await pending).toBe(false);
    expect(c.adapters.store.getState().adapters?.find((a) => a.id === "chat")?.enabled).toBe(true);
    expect(c.adapters.store.getState().actionError).toBe("No adapter with id chat.");
  });

  it("compares one adapter with the base model", async () => {
    const api = scriptedApi();
    const c = await started(api);
    api.handlers["adapters.compare"] = () => ({ base: "xyz", adapter: "{{{{" });
    c.adapters.openCompare("coding");
    await c.adapters.compare("coding", "write code");
    expect(c.adapters.store.getState().compare).toMatchObject({
      adapterId: "coding",
      status: "done",
      base: "xyz",
      adapter: "{{{{",
    });
  });
});

describe("AppController adapters", () => {
  it("applies a new chat's adapter choice when the first send creates it", async () => {
    const api = scriptedApi();
    api.handlers["conversations.create"] = () => conversation;
    api.handlers["conversations.setAdapters"] = (input: { adapters: Conversation["adapters"] }) => ({
      ...conversation,
      adapters: input.adapters,
    });
    api.handlers["chat.send"] = () => ({
      userMessage: message({ id: "u1", role: "user", content: "hi" }),
      assistantMessage: message({ id: "a1", role: "assistant", status: "streaming", createdAt: 2 }),
    });
    const c = await started(api);
    await c.conversations.setAdapters({ pinned: "coding" });
    expect(c.conversations.currentAdapters()).toEqual({ pinned: "coding" });
    expect(await c.chat.send("hi")).toBe(true);
    const names = api.calls.map(([m]) => m).filter((m) => m.startsWith("c"));
    expect(names).toEqual([
      "conversations.list",
      "conversations.create",
      "conversations.setAdapters",
      "chat.send",
    ]);
    expect(c.conversations.currentAdapters()).toEqual({ pinned: "coding" });
    expect(c.store.getState().draftAdapters).toBe("auto");
  });

  it("changes an open conversation's adapters at once and rolls back when refused", async () => {
    const api = scriptedApi();
    api.handlers["conversations.list"] = () => [conversation];
    api.handlers["conversations.get"] = () => ({ conversation, messages: [] });
    let release: () => void = () => {};
    api.handlers["conversations.setAdapters"] = () =>
      new Promise((_, reject) => {
        release = () => reject(new ApiError("invalid_input", "No adapter with id nope."));
      });
    const c = await started(api, "c1");
    const pending = c.conversations.setAdapters({ pinned: "nope" });
    await flushPromises();
    expect(c.conversations.currentAdapters()).toEqual({ pinned: "nope" });
    release();
    expect(await pending).toBe(false);
    expect(c.conversations.currentAdapters()).toBe("auto");
    expect(c.store.getState().notice).toMatch(/No adapter with id nope/);
  });

  it("answers again with other adapters: the new answer takes the old one's place", async () => {
    const api = scriptedApi();
    api.handlers["conversations.list"] = () => [conversation];
    api.handlers["conversations.get"] = () => ({
      conversation,
      messages: [
        message({ id: "u1", role: "user", content: "q" }),
        message({ id: "a1", role: "assistant", content: "old", createdAt: 2 }),
      ],
    });
    api.handlers["chat.regenerate"] = () => ({
      assistantMessage: message({ id: "a2", role: "assistant", status: "streaming", createdAt: 3 }),
    });
    const c = await started(api, "c1");
    expect(await c.chat.regenerate({ pinned: "chat" })).toBe(true);
    expect(api.calls.at(-1)).toEqual([
      "chat.regenerate",
      { conversationId: "c1", adapters: { pinned: "chat" } },
    ]);
    expect(c.store.getState().messages.c1!.map((m) => m.id)).toEqual(["u1", "a2"]);
    // While it streams, a second request is refused locally.
    expect(await c.chat.regenerate()).toBe(false);
  });
});
