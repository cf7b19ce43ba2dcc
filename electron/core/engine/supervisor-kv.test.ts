import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureFixtureModel } from "../../../native/gguf/fixtures";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { EngineSupervisor } from "./supervisor";
import type { ChatTurn, GenerateResult } from "./types";
import { suiteDir } from "../../../testing/core/temp-dir";

// Conversations' KV caches across engine processes: a clean close and a kill -9 (real engine
// processes, the tiny demo model, one state folder).
const dir = suiteDir("macaron-engine-kv-");
let model: string;
let stateDir: string;
const engines: EngineSupervisor[] = [];

beforeAll(async () => {
  model = await ensureFixtureModel(dir.path);
  stateDir = join(dir.path, "kv");
});

afterAll(async () => {
  for (const engine of engines) await engine.close();
});

async function start(): Promise<EngineSupervisor> {
  const engine = new EngineSupervisor(spawnTestEngine(), {
    stateDir,
    contextSize: 2048,
  });
  engines.push(engine);
  await engine.load(model);
  return engine;
}

const ask = (text: string): ChatTurn => ({ role: "user", text });
const system: ChatTurn = { role: "system", text: "You are Macaron, a helpful local assistant." };

function answer(engine: EngineSupervisor, history: ChatTurn[], sessionKey: string): Promise<GenerateResult> {
  return engine.generate(history, { temperature: 0, maxTokens: 24, sessionKey }, () => {});
}

/** Tokens saved for `sessionKey` (0 when none), read from the sidecars. */
async function savedTokens(sessionKey: string): Promise<number> {
  for (const name of await readdir(stateDir).catch(() => [] as string[])) {
    if (!name.endsWith(".json")) continue;
    const sidecar = JSON.parse(await readFile(join(stateDir, name), "utf8")) as {
      sessionKey: string;
      tokens: number[];
    };
    if (sidecar.sessionKey === sessionKey) return sidecar.tokens.length;
  }
  return 0;
}

describe("conversation KV caches across engine processes", () => {
  it("a new engine process reopening a conversation evaluates only its new turn", async () => {
    const first = await start();
    let history: ChatTurn[] = [system, ask("tell me about cats")];
    for (let i = 0; i < 3; i++) {
      const result = await answer(first, history, "conv-a");
      history = [...history, { role: "assistant", text: result.text }, ask(`and then, part ${i + 2}?`)];
    }
    const live = await answer(first, history, "conv-a");
    await first.close();

    const second = await start();
    // The same question again (a regenerate): everything but one token comes from the state,
    // and the bytes restored are those the first process answered from, so is the answer.
    const again = await answer(second, history, "conv-a");
    expect(again.promptTokensEvaluated).toBeLessThanOrEqual(2);
    expect(again.text).toBe(live.text);
    const fullPrompt = (await answer(second, history, "other-conversation")).promptTokensEvaluated;
    expect(fullPrompt).toBeGreaterThan(100);
  });

  it("after kill -9 the restarted engine still reuses the state saved after the last answer", async () => {
    const engine = await start();
    let history: ChatTurn[] = [system, ask("tell me about boats")];
    const first = await answer(engine, history, "conv-b");
    history = [...history, { role: "assistant", text: first.text }, ask("and what else?")];
    const second = await answer(engine, history, "conv-b");
    // Saved in the background right after the answer: wait until it holds the whole answer.
    await vi.waitFor(async () => expect(await savedTokens("conv-b")).toBe(second.contextTokens), {
      timeout: 5000,
    });
    const reloaded = new Promise<void>((resolve) =>
      engine.onLifecycle((event) => event.type === "model-reloaded" && resolve()),
    );
    process.kill(engine.pid!, "SIGKILL");
    await reloaded;
    history = [...history, { role: "assistant", text: second.text }, ask("one more")];
    const after = await answer(engine, history, "conv-b");
    expect(after.promptTokensEvaluated).toBeLessThan(40);
    expect(after.promptTokensEvaluated).toBeLessThan(after.contextTokens / 4);
  });
});
