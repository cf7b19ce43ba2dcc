/**
 * Conversation settings on the real engine (the demo model): the seed makes a sampled answer
 * repeatable, max tokens cuts the answer, and the settings are what the answer records.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Conversation, ConversationSettings, Message } from "../../api";
import { createCore, type Core } from "../index";
import { EventRecorder } from "../../../testing/core/events";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { value } from "../../../testing/core/result-value";
import { suiteDir } from "../../../testing/core/temp-dir";

const ctx = { transport: "ipc" } as const;
const dir = suiteDir("macaron-settings-engine-");
let core: Core | undefined;
afterAll(async () => {
  await core?.close();
});

describe("conversation settings on the real engine", () => {
  it("the seed repeats a sampled answer, max tokens cuts it, and the answer records both", async () => {
    core = await createCore({ dataDir: join(dir.path, "data"), spawnEngine: spawnTestEngine() });
    const call = async <T>(method: string, input: unknown): Promise<T> =>
      value<T>(await core!.dispatch(method, input, ctx));
    const events = new EventRecorder((l) => core!.subscribe(l));
    await call("models.openDemo", {});
    await call("settings.update", { memoryEnabled: false });

    /** One answer in a new conversation with `settings`. */
    const ask = async (settings: ConversationSettings): Promise<Message> => {
      const conv = await call<Conversation>("conversations.create", {});
      await call("conversations.setSettings", { id: conv.id, ...settings });
      const done = events.next("chat.done", (p) => p.conversationId === conv.id);
      // Base model: the router must not pick a different adapter for either of the two runs.
      await call("chat.send", { conversationId: conv.id, text: "Tell me about the sea.", adapters: "base" });
      return (await done).message;
    };

    // Temperature 1.5 samples widely: without the seed the two answers would differ.
    const sampled = { temperature: 1.5, topK: 0, topP: 1, maxTokens: 48, seed: 1234 };
    const a = await ask({ systemPrompt: "You talk about boats.", sampling: sampled });
    const b = await ask({ systemPrompt: "You talk about boats.", sampling: sampled });
    const c = await ask({ systemPrompt: "You talk about boats.", sampling: { ...sampled, seed: 99 } });
    console.log(`seed 1234: ${JSON.stringify(a.content)}; seed 99: ${JSON.stringify(c.content)}`);
    expect(a.status).toBe("complete");
    expect(a.content.length).toBeGreaterThan(0);
    expect(b.content).toBe(a.content);
    // Another seed gives another answer: the seed is what made the two equal.
    expect(c.content).not.toBe(a.content);
    expect(a.generation).toEqual({ sampling: sampled, systemPrompt: "You talk about boats." });

    const short = await ask({ systemPrompt: null, sampling: { temperature: 0, maxTokens: 3 } });
    expect(short.stats?.tokens).toBeLessThanOrEqual(3);
    const long = await ask({ systemPrompt: null, sampling: { temperature: 0, maxTokens: 48 } });
    // Greedy: the longer answer starts with the cut one.
    expect(long.content.length).toBeGreaterThan(short.content.length);
    expect(long.content.startsWith(short.content)).toBe(true);
    expect(short.generation).toEqual({ sampling: { temperature: 0, maxTokens: 3 }, systemPrompt: null });
  }, 180_000);
});
