/**
 * The whole of core with the real engine: a child process running node-llama-cpp on the
 * generated demo model, a real SQLite file, restarted on the same data folder.
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Conversation, ConversationDetail, EngineStatus, Message, Result } from "../api";
import { spawnNodeEngine } from "./engine/spawn-node";
import { createCore, type Core } from "./index";
import { EventRecorder } from "./testing/events";
import { tempDir } from "./testing/temp-dir";

const ctx = { transport: "http" } as const;
const dir = tempDir("macaron-core-int-");
const cores: Core[] = [];
afterAll(async () => {
  for (const core of cores) await core.close();
  dir.remove();
});

function value<T>(result: Result<unknown>): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.value as T;
}

async function start(): Promise<Core> {
  // One compute thread: on 2 cores more threads make generation slower (see FACTS.md).
  const core = await createCore({
    dataDir: dir.path,
    spawnEngine: spawnNodeEngine({ env: { ...process.env, MACARON_ENGINE_THREADS: "1" } }),
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
});
