/**
 * The whole of core with the real engine: a child process running node-llama-cpp on the
 * generated demo model, a real SQLite file, restarted on the same data folder.
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Conversation, ConversationDetail, EngineStatus, Message } from "../api";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { createCore, type Core } from "./index";
import { EventRecorder } from "../../testing/core/events";
import { suiteDir } from "../../testing/core/temp-dir";
import { value } from "../../testing/core/result-value";
import { fixtureDemoDir } from "../../testing/core/fixture-demo";

const ctx = { transport: "http" } as const;
const dir = suiteDir("macaron-core-int-");
const cores: Core[] = [];
afterAll(async () => {
  for (const core of cores) await core.close();
});

async function start(env: NodeJS.ProcessEnv = {}): Promise<Core> {
  const core = await createCore({
    dataDir: dir.path,
    demoDir: await fixtureDemoDir(),
    spawnEngine: spawnTestEngine(env),
    defaultMaxTokens: 24,
  });
  cores.push(core);
  return core;
}

describe("core with the real engine", () => {
  it("opens the demo model, streams an answer, and keeps the conversation after a restart", async () => {
    const core = await start();
    const events = new EventRecorder((l) => core.subscribe(l));

    const status = value<EngineStatus>(await core.dispatch("models.openDemo", {}, ctx));
    expect(status.state).toBe("ready");
    expect(status.model?.isDemo).toBe(true);
    expect(events.of("engine.status").map((s) => s.state)).toContain("loading");

    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    const done = events.next("chat.done", (d) => d.conversationId === conv.id);
    const sent = value<{ userMessage: Message; assistantMessage: Message }>(
      await core.dispatch(
        "chat.send",
        { conversationId: conv.id, text: "Hello, Macaron", sampling: { temperature: 0 } },
        ctx,
      ),
    );
    const { message } = await done;
    expect(message.id).toBe(sent.assistantMessage.id);
    expect(message.status).toBe("complete");
    const deltas = events.of("chat.delta").filter((d) => d.messageId === message.id);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.map((d) => d.delta).join("")).toBe(message.content);
    expect(message.stats?.tokens).toBeGreaterThan(0);
    expect(message.stats?.contextSize).toBeGreaterThan(0);
    expect(message.stats?.contextTokens).toBeGreaterThan(0);
    await core.close();

    const again = await start();
    const detail = value<ConversationDetail>(await again.dispatch("conversations.get", { id: conv.id }, ctx));
    expect(detail.conversation.title).toBe("Hello, Macaron");
    expect(detail.messages.map((m) => [m.role, m.status])).toEqual([
      ["user", "complete"],
      ["assistant", "complete"],
    ]);
    expect(detail.messages[1]?.content).toBe(message.content);
    // The demo model was remembered and is reopened in the background.
    await vi.waitFor(
      () => expect(again.engineStatus()).toMatchObject({ state: "ready", model: { isDemo: true } }),
      {
        timeout: 30_000,
      },
    );
  });

  it("a model too big for the memory it may use is refused with a clear message; nothing is lost", async () => {
    // The engine may use no RAM at all (MACARON_ENGINE_RAM_RESERVE_MB larger than any machine):
    // even the tiny demo model's context does not fit, as a too-big model would not.
    const core = await start({ MACARON_ENGINE_RAM_RESERVE_MB: String(1024 * 1024 * 1024) });
    const before = value<Conversation[]>(await core.dispatch("conversations.list", {}, ctx));
    expect(before.length).toBeGreaterThan(0);
    // The previous test's demo model is reopened in the background at start: wait for that.
    await vi.waitFor(() => expect(core.engineStatus().state).toBe("error"), { timeout: 30_000 });
    const opened = await core.dispatch("models.openDemo", {}, ctx);
    expect(opened.ok).toBe(false);
    if (opened.ok) return;
    expect(opened.error.code).toBe("model_load_failed");
    expect(opened.error.message).toMatch(
      /Not enough memory to create a context for .*\. Try a smaller model/,
    );
    expect(core.engineStatus()).toMatchObject({ state: "error", model: null });
    // The app keeps running and its data is intact.
    expect(value<Conversation[]>(await core.dispatch("conversations.list", {}, ctx))).toEqual(before);
    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    const sent = await core.dispatch("chat.send", { conversationId: conv.id, text: "anyone there?" }, ctx);
    expect(sent.ok).toBe(false);
    if (!sent.ok) expect(sent.error.code).toBe("no_model");
  });
});
