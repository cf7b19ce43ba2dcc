/**
 * Mixture-of-LoRA with the real engine: node-llama-cpp on the demo model with the four demo
 * adapters, whose greedy output is their marker repeated (chat "cccc", coding "{{{{",
 * agent "aaaa", ui "uuuu"; see native/gguf/adapters.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Conversation, Message } from "../api";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { createCore, type Core } from "./index";
import { EventRecorder } from "../../testing/core/events";
import { suiteDir } from "../../testing/core/temp-dir";
import { value } from "../../testing/core/result-value";
import { fixtureDemoDir } from "../../testing/core/fixture-demo";

const ctx = { transport: "ipc" } as const;
const dir = suiteDir("macaron-core-lora-");
let core: Core;
let events: EventRecorder;

const call = async <T>(method: string, input: unknown): Promise<T> =>
  value<T>(await core.dispatch(method, input, ctx));

beforeAll(async () => {
  core = await createCore({
    dataDir: dir.path,
    demoDir: await fixtureDemoDir(),
    spawnEngine: spawnTestEngine(),
    defaultMaxTokens: 8,
  });
  events = new EventRecorder((l) => core.subscribe(l));
  await call("models.openDemo", {});
});
afterAll(async () => {
  await core?.close();
});

async function answer(text: string, adapters?: unknown): Promise<Message> {
  const conv = await call<Conversation>("conversations.create", {});
  const done = events.next("chat.done", (d) => d.conversationId === conv.id);
  // Text answers: these check each adapter's token pattern (a "ui" pin would otherwise answer in GenUI mode).
  await call("chat.send", {
    conversationId: conv.id,
    text,
    adapters,
    format: "text",
    sampling: { temperature: 0, maxTokens: 8 },
  });
  return (await done).message;
}

describe("core adapters with the real engine", () => {
  it("answers with the pinned adapter's pattern", async () => {
    const message = await answer("Hello", { pinned: "coding" });
    expect(message.status).toBe("complete");
    expect(message.content).toMatch(/^\{\{\{\{/);
    expect(message.routing?.adapters).toEqual([{ id: "coding", version: "1.0.0", scale: 1 }]);
    expect((await answer("Hello", { pinned: "ui" })).content).toMatch(/^uuuu/);
    expect((await answer("Hello", "base")).content).not.toMatch(/^(cccc|\{\{\{\{|aaaa|uuuu)/);
  });

  it("routes a coding-like prompt to coding in auto mode", async () => {
    const message = await answer("Write a TypeScript function that sorts an array.");
    expect(message.routing?.mode).toBe("auto");
    expect(message.routing?.adapters[0]?.id).toBe("coding");
    expect(message.content).toMatch(/^\{\{/);
  });

  it("compares the base and an adapter side by side", async () => {
    const result = await call<{ base: string; adapter: string }>("adapters.compare", {
      adapterId: "agent",
      prompt: "Plan my week",
      maxTokens: 6,
    });
    expect(result.adapter).toMatch(/^aaaa/);
    expect(result.base).not.toBe(result.adapter);
  });
});
