/**
 * The Tall base's architecture path through core with the real engine: the tiny qwen3 base
 * opened as a model, its demo adapters installed (a llama or qwen3moe adapter refused with the
 * architectures named), pinned and auto-routed turns (the router embeds with the qwen base),
 * and the installed adapters marked as not fitting when a qwen3moe base is opened instead.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdapterInfo, Conversation, Message } from "../api";
import { writeFixtures, type FixturePaths } from "../../native/gguf/fixtures";
import { TINY_QWEN_NAMES } from "../../native/gguf/tiny-qwen";
import { createCore, type Core } from "./index";
import { EventRecorder } from "../../testing/core/events";
import { fixtureDemoDir } from "../../testing/core/fixture-demo";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { value } from "../../testing/core/result-value";
import { suiteDir } from "../../testing/core/temp-dir";

const ctx = { transport: "ipc" } as const;
const data = suiteDir("macaron-core-qwen-");
const files = suiteDir("macaron-core-qwen-files-");
let core: Core;
let events: EventRecorder;
let llama: FixturePaths;
let qwen3: FixturePaths;
let qwen3moe: FixturePaths;

const call = async <T>(method: string, input: unknown): Promise<T> =>
  value<T>(await core.dispatch(method, input, ctx));

async function refused(method: string, input: unknown): Promise<{ code: string; message: string }> {
  const result = await core.dispatch(method, input, ctx);
  if (result.ok) throw new Error(`${method} should have failed`);
  return result.error;
}

beforeAll(async () => {
  llama = await writeFixtures(files.path);
  qwen3 = await writeFixtures(files.path, { architecture: "qwen3" });
  qwen3moe = await writeFixtures(files.path, { architecture: "qwen3moe" });
  core = await createCore({
    dataDir: data.path,
    demoDir: await fixtureDemoDir(),
    spawnEngine: spawnTestEngine(),
    defaultMaxTokens: 8,
  });
  events = new EventRecorder((l) => core.subscribe(l));
  await call("models.open", { path: qwen3.basePath });
});
afterAll(async () => {
  await core?.close();
});

async function answer(text: string, adapters?: unknown): Promise<Message> {
  const conv = await call<Conversation>("conversations.create", {});
  const done = events.next("chat.done", (d) => d.conversationId === conv.id);
  await call("chat.send", {
    conversationId: conv.id,
    text,
    adapters,
    format: "text",
    sampling: { temperature: 0, maxTokens: 8 },
  });
  return (await done).message;
}

describe("core with the tiny qwen3 base (real engine)", () => {
  it("installs the qwen3 adapters and refuses a llama or qwen3moe adapter, naming the architectures", async () => {
    for (const adapter of qwen3.adapters) {
      const info = await call<AdapterInfo>("adapters.install", { path: adapter.path });
      expect(info).toMatchObject({
        id: adapter.id,
        fitsLoadedModel: true,
        base: { architecture: "qwen3", baseName: TINY_QWEN_NAMES.qwen3 },
      });
    }
    const wrongLlama = await refused("adapters.install", { path: llama.adapters[0]!.path });
    expect(wrongLlama.code).toBe("invalid_input");
    expect(wrongLlama.message).toContain(
      `"chat.gguf" was made for the llama architecture, but the loaded model is qwen3. ` +
        `The loaded model is "${TINY_QWEN_NAMES.qwen3}" (base-qwen3.gguf).`,
    );
    const wrongMoe = await refused("adapters.install", { path: qwen3moe.adapters[1]!.path });
    expect(wrongMoe.message).toContain(
      "was made for the qwen3moe architecture, but the loaded model is qwen3.",
    );
    expect((await call<AdapterInfo[]>("adapters.list", {})).map((a) => a.id)).toEqual([
      "chat",
      "coding",
      "agent",
      "ui",
    ]);
  });

  it("answers with a pinned adapter's pattern and routes a coding prompt to coding", async () => {
    expect((await answer("Hello", { pinned: "agent" })).content).toMatch(/^aaaa/);
    expect((await answer("Hello", "base")).content).not.toMatch(/^(cccc|\{\{\{\{|aaaa|uuuu)/);
    const routed = await answer("Write a TypeScript function that sorts an array.");
    expect(routed.routing?.mode).toBe("auto");
    expect(routed.routing?.adapters[0]?.id).toBe("coding");
    expect(routed.content).toMatch(/^\{\{/);
  });

  it("marks the qwen3 adapters as not fitting a qwen3moe base, with the reason", async () => {
    await call("models.open", { path: qwen3moe.basePath });
    const list = await call<AdapterInfo[]>("adapters.list", {});
    expect(list).toHaveLength(4);
    for (const a of list) {
      expect(a.fitsLoadedModel).toBe(false);
      expect(a.incompatibleReason).toContain(
        "was made for the qwen3 architecture, but the loaded model is qwen3moe.",
      );
    }
  });
});
