import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors";
import { ensureFixtureModel } from "../../../native/gguf/fixtures";
import { spawnNodeEngine } from "./spawn-node";
import { EngineSupervisor } from "./supervisor";
import type { ChatTurn, EngineLifecycleEvent, GenerateOptions } from "./types";
import { suiteDir } from "../../../testing/core/temp-dir";

// Real engine processes running node-llama-cpp on the tiny generated demo model.
const hello: ChatTurn[] = [{ role: "user", text: "hello" }];
const greedy = (maxTokens: number): GenerateOptions => ({ temperature: 0, maxTokens });

const dir = suiteDir("macaron-engine-");
let model: string;
let engine: EngineSupervisor;

beforeAll(async () => {
  model = await ensureFixtureModel(dir.path);
  engine = new EngineSupervisor(spawnNodeEngine());
});

afterAll(async () => {
  await engine?.close();
});

/** Resolves once `count` tokens have streamed; the collected text is in `.text`. */
function tokenProbe(count: number) {
  let reached!: () => void;
  const probe = {
    text: "",
    pieces: 0,
    reached: new Promise<void>((resolve) => (reached = resolve)),
    onToken: (piece: string) => {
      probe.text += piece;
      if (++probe.pieces === count) reached();
    },
  };
  return probe;
}

async function expectApiError(promise: Promise<unknown>, code: string, message: RegExp): Promise<ApiError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected ApiError(${code}) but it resolved`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe(code);
  expect((error as ApiError).message).toMatch(message);
  return error as ApiError;
}

describe("EngineSupervisor with a real engine process", () => {
  it("loads a model, reporting progress, gpu and threads", async () => {
    const progress: number[] = [];
    const info = await engine.load(model, (p) => progress.push(p));
    expect(info.path).toBe(model);
    expect(info.contextSize).toBeLessThanOrEqual(info.trainContextSize);
    expect(info.contextSize).toBeGreaterThan(0);
    expect(info.threads).toBeGreaterThanOrEqual(1);
    expect(info.gpu === null || typeof info.gpu === "string").toBe(true);
    expect(progress.at(-1)).toBe(1);
    expect(engine.loaded).toEqual(info);
    expect(engine.pid).toBeTypeOf("number");
  });

  it("streams tokens whose concatenation is the result text, and respects maxTokens", async () => {
    const probe = tokenProbe(1);
    const result = await engine.generate(hello, greedy(24), probe.onToken);
    expect(result.text.length).toBeGreaterThan(0);
    expect(probe.text).toBe(result.text);
    expect(result.stopReason).toBe("maxTokens");
    expect(result.tokens).toBe(24);
    expect(result.ttftMs).toBeGreaterThanOrEqual(0);
    expect(result.durationMs).toBeGreaterThanOrEqual(result.ttftMs ?? 0);
    expect(result.contextTokens).toBeGreaterThan(result.tokens);
    expect(result.contextSize).toBe(engine.loaded?.contextSize);
  });

  it("is deterministic when greedy, and reuses the KV cache for a continued conversation", async () => {
    const first = await engine.generate(hello, greedy(16), () => {});
    const again = await engine.generate(hello, greedy(16), () => {});
    expect(again.text).toBe(first.text);
    expect(again.promptTokensEvaluated).toBeLessThanOrEqual(1);

    const continued: ChatTurn[] = [
      ...hello,
      { role: "assistant", text: first.text },
      { role: "user", text: "more" },
    ];
    const next = await engine.generate(continued, greedy(8), () => {});
    // Only the new turn is evaluated, not the whole conversation again.
    expect(next.promptTokensEvaluated).toBeGreaterThan(0);
    expect(next.promptTokensEvaluated).toBeLessThan(next.contextTokens - next.tokens - first.tokens);
  });

  it("stops at a stop string and leaves it out of the text", async () => {
    const sampled: GenerateOptions = { temperature: 1, maxTokens: 40, seed: 7 };
    const free = await engine.generate(hello, sampled, () => {});
    const stop = free.text.slice(10, 13);
    expect(stop).toHaveLength(3);
    const stopped = await engine.generate(hello, { ...sampled, stop: [stop] }, () => {});
    expect(stopped.stopReason).toBe("stop");
    expect(stopped.text).toBe(free.text.slice(0, free.text.indexOf(stop)));
  });

  it("aborts mid-generation quickly with the partial text", async () => {
    const controller = new AbortController();
    const probe = tokenProbe(5);
    const pending = engine.generate(hello, greedy(3000), probe.onToken, controller.signal);
    await probe.reached;
    controller.abort();
    const result = await pending;
    // Ended by the abort, not by running out its 3000 tokens.
    expect(result.stopReason).toBe("abort");
    expect(result.tokens).toBeLessThan(3000);
    expect(result.text.length).toBeGreaterThan(0);
    expect(probe.text.startsWith(result.text) || result.text.startsWith(probe.text)).toBe(true);
  });

  it("runs a second generation under the same adapters alongside a running one", async () => {
    const controller = new AbortController();
    const probe = tokenProbe(1);
    const running = engine.generate(hello, greedy(3000), probe.onToken, controller.signal);
    await probe.reached;
    // Ends while the first still runs (it has 3000 tokens to go and is only stopped after).
    const second = await engine.generate(hello, greedy(4), () => {});
    expect(second.stopReason).toBe("maxTokens");
    expect(second.tokens).toBe(4);
    controller.abort();
    expect((await running).stopReason).toBe("abort");
  });

  it("reports model_load_failed clearly and keeps working", async () => {
    await expectApiError(
      engine.load(join(dir.path, "missing.gguf")),
      "model_load_failed",
      /not found.*missing\.gguf/,
    );
    const notGguf = join(dir.path, "notes.gguf");
    await writeFile(notGguf, "just some text, not a model");
    await expectApiError(engine.load(notGguf), "model_load_failed", /notes\.gguf is not a GGUF model file/);
    // A failed load leaves no model behind (the old one was freed first).
    expect(engine.loaded).toBeNull();
    await expectApiError(
      engine.generate(hello, greedy(4), () => {}),
      "no_model",
      /No model is loaded/,
    );

    await engine.load(model);
    expect((await engine.generate(hello, greedy(4), () => {})).tokens).toBe(4);
  });

  it("leaves Ctrl-C (SIGINT to the process group) to its parent, which closes it in order", async () => {
    const pid = engine.pid!;
    process.kill(pid, "SIGINT");
    // Still the same process, still answering (the parent saves the caches, then stops it).
    const answer = await engine.generate(hello, greedy(4), () => {});
    expect(answer.tokens).toBe(4);
    expect(engine.pid).toBe(pid);
    expect(engine.state).toBe("ready");
  });

  it("survives SIGKILL mid-generation: rejects with engine_crashed, restarts and reloads", async () => {
    const events: EngineLifecycleEvent[] = [];
    let reloaded!: () => void;
    const modelReloaded = new Promise<void>((resolve) => (reloaded = resolve));
    const unsubscribe = engine.onLifecycle((event) => {
      events.push(event);
      if (event.type === "model-reloaded") reloaded();
    });
    const oldPid = engine.pid!;
    const probe = tokenProbe(3);
    const running = engine.generate(hello, greedy(3000), probe.onToken);
    await probe.reached;
    process.kill(oldPid, "SIGKILL");

    await expectApiError(
      running,
      "engine_crashed",
      /^The engine stopped unexpectedly \(signal SIGKILL\) while answering\. It has been restarted — send your message again\.$/,
    );
    await modelReloaded;
    unsubscribe();
    expect(events.map((e) => e.type)).toEqual(["crashed", "restarted", "model-reloaded"]);
    expect(events[0]).toEqual({ type: "crashed", reason: "signal SIGKILL" });
    expect(engine.pid).not.toBe(oldPid);
    expect(engine.loaded?.path).toBe(model);
    expect(engine.state).toBe("ready");

    const after = await engine.generate(hello, greedy(6), () => {});
    expect(after.tokens).toBe(6);
  });
});
