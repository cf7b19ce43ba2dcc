/**
 * Mixture-of-LoRA through core's API: the demo adapters installed with the demo model, the
 * adapter choice of each turn (auto, base, pinned, blend, the conversation's pin), its turn
 * record, regenerate, compare and settings. Real SQLite file and GGUF files, scripted engine.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeCore } from "../../testing/core/fake-core";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AdapterInfo, AppSettings, Conversation, ConversationDetail, Message } from "../api";
import { sha256File } from "../../common/hashing";
import { writeFixtures } from "../../native/gguf/fixtures";
import { assembleCore, type Core } from "./index";
import { FakeEngine } from "../../testing/engine/fake-engine";
import { testDir } from "../../testing/core/temp-dir";
import { value } from "../../testing/core/result-value";

const ctx = { transport: "ipc" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(options: { demoAdapters?: boolean; adaptersDir?: string } = {}) {
  const { core, engine, events, dataDir, call } = await startFakeCore(options);
  const conv = await call<Conversation>("conversations.create", {});
  /** chat.send and wait for its chat.done. */
  const send = async (input: Record<string, unknown>, conversationId = conv.id) => {
    const done = events.next("chat.done", (d) => d.conversationId === conversationId);
    const sent = await call<{ userMessage: Message; assistantMessage: Message }>("chat.send", {
      conversationId,
      ...input,
    });
    return { ...sent, done: (await done).message };
  };
  const db = () => {
    const raw = new BetterSqlite3(join(dataDir, "macaron.db"), { readonly: true });
    cleanups.push(() => raw.close());
    return raw;
  };
  return { core, engine, events, call, conv, send, db, dataDir };
}

async function refused(
  core: Core,
  method: string,
  input: unknown,
): Promise<{ code: string; message: string }> {
  const result = await core.dispatch(method, input, ctx);
  if (result.ok) throw new Error(`${method} should have failed`);
  return result.error;
}

describe("core adapters (scripted engine)", () => {
  it("installs the four demo adapters when the demo model opens, once", async () => {
    const s = await start();
    const list = await s.call<AdapterInfo[]>("adapters.list", {});
    expect(list.map((a) => [a.id, a.enabled, a.fitsLoadedModel])).toEqual([
      ["chat", true, true],
      ["coding", true, true],
      ["agent", true, true],
      ["ui", true, true],
    ]);
    expect(s.events.of("adapters.changed").length).toBeGreaterThanOrEqual(4);
    await s.call("models.openDemo", {});
    expect(await s.call<AdapterInfo[]>("adapters.list", {})).toHaveLength(4);
  });

  it("pins an adapter: engine options, Message.routing everywhere, the turn record and usage", async () => {
    const s = await start();
    const coding = (await s.call<AdapterInfo[]>("adapters.list", {})).find((a) => a.id === "coding");
    const sent = await s.send({
      text: "Fix my loop",
      adapters: { pinned: "coding" },
      sampling: { temperature: 0 },
    });
    const routing = {
      mode: "pinned",
      adapters: [{ id: "coding", version: "1.0.0", scale: 1 }],
      confidence: 1,
      reason: "pinned: coding",
      latencyMs: expect.any(Number) as unknown,
    };
    expect(sent.assistantMessage.routing).toEqual(routing);
    expect(sent.userMessage.routing).toBeNull();
    expect(sent.done.routing).toEqual(routing);
    const detail = await s.call<ConversationDetail>("conversations.get", { id: s.conv.id });
    expect(detail.messages[1]?.routing).toEqual(routing);

    const options = s.engine.calls[0]?.options;
    expect(options?.adapters).toEqual([
      { path: expect.stringMatching(/adapters[/\\]coding-[0-9a-f]{12}\.gguf$/) as unknown, scale: 1 },
    ]);
    expect(options?.kvPolicy).toBe("sequence-per-set");
    expect(coding?.sha256).toBe(await sha256File(options?.adapters?.[0]?.path ?? ""));

    const demoSha = await sha256File(join(s.dataDir, "models", "demo.gguf"));
    const row = () =>
      s.db().prepare("SELECT * FROM turns WHERE message_id = ?").get(sent.assistantMessage.id) as Record<
        string,
        string
      >;
    await vi.waitFor(() => expect(row().model_sha256).toBe(demoSha));
    const turn = row();
    expect(turn.harness_version).toMatch(/^0\.1\.0\+[0-9a-f]{12}$/);
    expect(JSON.parse(turn.adapters_json ?? "")).toEqual([{ id: "coding", version: "1.0.0", scale: 1 }]);
    expect(JSON.parse(turn.router_json ?? "")).toMatchObject({
      mode: "pinned",
      confidence: 1,
      scores: { chat: 0, coding: 1, agent: 0, ui: 0 },
      skipped: [],
    });
    expect(JSON.parse(turn.sampling_json ?? "")).toEqual({ temperature: 0, maxTokens: 1024 });
    expect(JSON.parse(turn.timings_json ?? "")).toMatchObject({
      tokens: 3,
      stopReason: "eos",
      promptTokensEvaluated: 10,
    });
    expect(turn.kv_policy).toBe("sequence-per-set");
    const after = await s.call<AdapterInfo[]>("adapters.list", {});
    expect(after.map((a) => [a.id, a.usageCount])).toEqual([
      ["chat", 0],
      ["coding", 1],
      ["agent", 0],
      ["ui", 0],
    ]);
  });

  it("answers with the base, a blend, the conversation's pin, or the router's choice", async () => {
    const s = await start();
    const base = await s.send({ text: "one", adapters: "base" });
    expect(base.done.routing).toMatchObject({ mode: "base", adapters: [], confidence: 1 });
    expect(s.engine.calls.at(-1)?.options.adapters).toBeUndefined();

    const blend = await s.send({ text: "two", adapters: { blend: { ui: 0.5, chat: 1 } } });
    expect(blend.done.routing?.adapters).toEqual([
      { id: "chat", version: "1.0.0", scale: 1 },
      { id: "ui", version: "1.0.0", scale: 0.5 },
    ]);
    expect(s.engine.calls.at(-1)?.options.adapters?.map((a) => a.scale)).toEqual([1, 0.5]);

    const pinned = await s.call<Conversation>("conversations.setAdapters", {
      id: s.conv.id,
      adapters: { pinned: "agent" },
    });
    expect(pinned.adapters).toEqual({ pinned: "agent" });
    expect((await s.send({ text: "three" })).done.routing?.adapters.map((a) => a.id)).toEqual(["agent"]);
    // The turn's own choice wins over the conversation's.
    expect((await s.send({ text: "four", adapters: "base" })).done.routing?.mode).toBe("base");

    await s.call("conversations.setAdapters", { id: s.conv.id, adapters: "auto" });
    const auto = await s.send({ text: "Write a TypeScript function that reverses an array." });
    expect(auto.done.routing?.mode).toBe("auto");
    expect(auto.done.routing?.adapters.length).toBeGreaterThan(0);
    expect(auto.done.routing?.reason).toMatch(/^auto: /);
  });

  it("installs the adapters of a folder at start-up (--adapters), skipping what is installed", async () => {
    const fx = testDir();
    const fixtures = await writeFixtures(fx);
    writeFileSync(join(fixtures.adaptersDir, "junk.gguf"), "not a gguf");
    const logged: string[] = [];
    const dir = testDir();
    const open = async () => {
      const core = await assembleCore(
        { dataDir: dir, adaptersDir: fixtures.adaptersDir, log: (m) => logged.push(m) },
        () => new FakeEngine(),
      );
      const list = value<AdapterInfo[]>(await core.dispatch("adapters.list", {}, ctx));
      await core.close();
      return list.map((a) => a.id).sort();
    };
    expect(await open()).toEqual(["agent", "chat", "coding", "ui"]);
    expect(logged.filter((m) => m.includes("junk.gguf"))).toHaveLength(1);
    expect(await open()).toEqual(["agent", "chat", "coding", "ui"]);
    expect(logged.filter((m) => m.includes("already"))).toEqual([]);
  });

  it("deletes at start-up the unfinished copy a killed install left in the adapters folder", async () => {
    const dir = testDir();
    const adapters = join(dir, "adapters");
    mkdirSync(adapters, { recursive: true });
    writeFileSync(join(adapters, ".copy-0123456789ab.tmp"), "half an adapter");
    const core = await assembleCore({ dataDir: dir, log: () => undefined }, () => new FakeEngine());
    cleanups.push(() => core.close());
    expect(readdirSync(adapters)).not.toContain(".copy-0123456789ab.tmp");
  });

  it("uses the base alone with reason 'no adapters installed' when there are none", async () => {
    const s = await start({ demoAdapters: false });
    const { done } = await s.send({ text: "hi" });
    expect(done.routing).toEqual({
      mode: "base",
      adapters: [],
      confidence: 1,
      reason: "no adapters installed",
      latencyMs: 0,
    });
  });

  it("refuses an unknown or disabled adapter before committing anything", async () => {
    const s = await start();
    const unknown = await refused(s.core, "chat.send", {
      conversationId: s.conv.id,
      text: "x",
      adapters: { pinned: "poetry" },
    });
    expect(unknown).toEqual({
      code: "invalid_input",
      message: expect.stringMatching(/"poetry" is not installed/) as unknown,
    });
    await s.call("adapters.update", { id: "ui", enabled: false });
    const disabled = await refused(s.core, "chat.send", {
      conversationId: s.conv.id,
      text: "x",
      adapters: { blend: { ui: 1, chat: 1 } },
    });
    expect(disabled.message).toMatch(/"ui" is disabled/);
    expect(
      (await refused(s.core, "conversations.setAdapters", { id: s.conv.id, adapters: { pinned: "ui" } }))
        .code,
    ).toBe("invalid_input");
    expect((await s.call<ConversationDetail>("conversations.get", { id: s.conv.id })).messages).toEqual([]);
    // A disabled adapter is never chosen by auto.
    const auto = await s.send({ text: "Show me a form to sign up." });
    expect(auto.done.routing?.adapters.map((a) => a.id)).not.toContain("ui");
  });

  it("skips an adapter whose file vanished, says why, and still answers", async () => {
    const s = await start();
    const before = s.engine.calls.length;
    await s.send({ text: "warm up", adapters: { pinned: "coding" } });
    const path = s.engine.calls[before]?.options.adapters?.[0]?.path ?? "";
    rmSync(path);
    const { done } = await s.send({ text: "again", adapters: { blend: { coding: 1, chat: 0.5 } } });
    expect(done.status).toBe("complete");
    expect(done.routing?.adapters.map((a) => a.id)).toEqual(["chat"]);
    expect(done.routing?.reason).toMatch(/skipped coding: the adapter file is missing/);
    expect(s.engine.calls.at(-1)?.options.adapters?.map((a) => a.path)).not.toContain(path);
  });

  it("regenerates the last answer: the old one leaves the transcript, a pin teaches the router", async () => {
    const s = await start();
    const empty = await refused(s.core, "chat.regenerate", { conversationId: s.conv.id });
    expect(empty).toEqual({
      code: "invalid_input",
      message: expect.stringMatching(/Only the last answer/) as unknown,
    });
    const first = await s.send({ text: "Draw my sales numbers", adapters: "base" });
    s.engine.scripts.push({ tokens: ["Second"] });
    const done = s.events.next("chat.done");
    const { assistantMessage } = await s.call<{ assistantMessage: Message }>("chat.regenerate", {
      conversationId: s.conv.id,
      // Not "ui": answering again with the UI adapter is a GenUI turn (see electron/core/genui).
      adapters: { pinned: "coding" },
    });
    expect(assistantMessage.routing?.adapters.map((a) => a.id)).toEqual(["coding"]);
    expect((await done).message).toMatchObject({
      id: assistantMessage.id,
      content: "Second",
      status: "complete",
    });
    const detail = await s.call<ConversationDetail>("conversations.get", { id: s.conv.id });
    expect(detail.messages.map((m) => m.id)).toEqual([first.userMessage.id, assistantMessage.id]);
    // The engine saw the question, not the replaced answer.
    expect(s.engine.calls.at(-1)?.history.slice(1)).toEqual([
      { role: "user", text: "Draw my sales numbers" },
    ]);
    const db = s.db();
    // The replaced answer is kept as an earlier version of the new one (migration 0011).
    expect(assistantMessage.versions).toEqual([first.assistantMessage.id, assistantMessage.id]);
    expect(db.prepare("SELECT shown FROM messages WHERE id = ?").pluck().get(first.assistantMessage.id)).toBe(
      0,
    );
    expect(db.prepare("SELECT text, adapter_id FROM router_learned").all()).toEqual([
      { text: "Draw my sales numbers", adapter_id: "coding" },
    ]);
    // Pinning the conversation teaches the router too, with its last user text.
    await s.call("conversations.setAdapters", { id: s.conv.id, adapters: { pinned: "agent" } });
    expect(db.prepare("SELECT adapter_id FROM router_learned").pluck().all()).toEqual(["agent"]);
  });

  it("compares base and adapter without writing anything, and keeps settings", async () => {
    const s = await start();
    const before = s.engine.calls.length;
    s.engine.scripts.push({ tokens: ["base"] }, { tokens: ["{{{{"] });
    expect(await s.call("adapters.compare", { adapterId: "coding", prompt: "Hi", maxTokens: 8 })).toEqual({
      base: "base",
      adapter: "{{{{",
    });
    const [a, b] = s.engine.calls.slice(before);
    expect(a?.options).toMatchObject({ temperature: 0, maxTokens: 8, adapters: [] });
    expect(b?.options.adapters?.[0]?.path).toMatch(/coding-/);
    expect((await s.call<ConversationDetail>("conversations.get", { id: s.conv.id })).messages).toEqual([]);
    expect((await refused(s.core, "adapters.compare", { adapterId: "nope", prompt: "x" })).code).toBe(
      "not_found",
    );

    const defaults = { memoryEnabled: true, contextStrategy: "sliding-window", theme: "system" };
    expect(await s.call<AppSettings>("settings.get", {})).toEqual({
      kvPolicy: "sequence-per-set",
      ...defaults,
    });
    expect(await s.call<AppSettings>("settings.update", { kvPolicy: "reevaluate" })).toEqual({
      kvPolicy: "reevaluate",
      ...defaults,
    });
    expect(await s.call<AppSettings>("settings.get", {})).toEqual({ kvPolicy: "reevaluate", ...defaults });
    await s.send({ text: "x", adapters: { pinned: "chat" } });
    expect(s.engine.calls.at(-1)?.options.kvPolicy).toBe("reevaluate");
    expect((await refused(s.core, "settings.update", { kvPolicy: "fast" })).code).toBe("invalid_input");
  });
});
