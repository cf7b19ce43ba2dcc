/**
 * Reopening a long conversation does not evaluate its history again: core passes the
 * conversation id as the engine's session key and `<dataDir>/kv` as its state folder, so after
 * a restart of core (and of the engine process) only the new turn is evaluated.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureFixtureModel } from "../../native/gguf/fixtures";
import type { Conversation, Message } from "../api";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { createCore, type Core } from "./index";
import { EventRecorder } from "../../testing/core/events";
import { suiteDir } from "../../testing/core/temp-dir";
import { promptTokensEvaluated } from "../../testing/core/turn-timings";
import { value } from "../../testing/core/result-value";

const ctx = { transport: "http" } as const;
const dir = suiteDir("macaron-core-kv-");
const cores: Core[] = [];
afterAll(async () => {
  for (const core of cores) await core.close();
});

async function start(model: string): Promise<Core> {
  const core = await createCore({
    dataDir: dir.path,
    spawnEngine: spawnTestEngine(),
    initialModel: model,
    defaultMaxTokens: 24,
  });
  cores.push(core);
  return core;
}

async function send(core: Core, conversationId: string, text: string): Promise<Message> {
  const events = new EventRecorder((l) => core.subscribe(l));
  const done = events.next("chat.done", (d) => d.conversationId === conversationId);
  value(await core.dispatch("chat.send", { conversationId, text, sampling: { temperature: 0 } }, ctx));
  const { message } = await done;
  expect(message.status).toBe("complete");
  return message;
}

const evaluatedFor = (messageId: string) => promptTokensEvaluated(dir.path, messageId);

describe("core with the real engine: KV cache across restarts", () => {
  it("reopening a long conversation does not re-evaluate its history", async () => {
    const model = await ensureFixtureModel(join(dir.path, "models"));
    const core = await start(model);
    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    let last: Message | null = null;
    const evaluated: number[] = [];
    for (let i = 0; i < 8; i++) {
      last = await send(core, conv.id, `Tell me more about topic number ${i}, please.`);
      evaluated.push(evaluatedFor(last.id));
    }
    const history = last!.stats!.contextTokens ?? 0;
    expect(history).toBeGreaterThan(500);
    // Within one run each turn already evaluates only what is new.
    expect(Math.max(...evaluated.slice(1))).toBeLessThan(80);
    await core.close();

    const again = await start(model);
    const next = await send(again, conv.id, "And one last question?");
    const afterRestart = evaluatedFor(next.id);
    expect(afterRestart).toBeLessThan(80);
    expect(afterRestart).toBeLessThan(history / 8);

    // Deleting the conversation drops its cache: the saved files hold its tokens.
    const sessionsOnDisk = () =>
      readdirSync(join(dir.path, "kv"))
        .filter((n) => n.endsWith(".json"))
        .map(
          (n) =>
            (JSON.parse(readFileSync(join(dir.path, "kv", n), "utf8")) as { sessionKey: string }).sessionKey,
        );
    expect(sessionsOnDisk()).toContain(conv.id);
    value(await again.dispatch("conversations.delete", { id: conv.id }, ctx));
    await again.close(); // saves every live cache: the deleted one must not come back
    expect(sessionsOnDisk()).not.toContain(conv.id);
  });
});
