import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors";
import { writeWrongBaseAdapter } from "../../../native/gguf/adapters";
import { writeFixtures, type FixturePaths } from "../../../native/gguf/fixtures";
import { spawnNodeEngine } from "./spawn-node";
import { EngineSupervisor } from "./supervisor";
import type { AdapterUse, ChatTurn, GenerateOptions } from "./types";
import { suiteDir } from "../../../testing/core/temp-dir";

// Adapters and embeddings through a real engine process, on the tiny fixtures.
const hello: ChatTurn[] = [{ role: "user", text: "hello" }];
const dir = suiteDir("macaron-engine-adapters-");
let fx: FixturePaths;
let engine: EngineSupervisor;
const use = (id: string, scale = 1): AdapterUse => ({
  path: fx.adapters.find((a) => a.id === id)!.path,
  scale,
});
const greedy = (maxTokens: number, adapters: AdapterUse[]): GenerateOptions => ({
  temperature: 0,
  maxTokens,
  adapters,
});

/** Resolves after the first streamed token. */
function firstToken() {
  let reached!: () => void;
  const probe = { text: "", reached: new Promise<void>((resolve) => (reached = resolve)) };
  return {
    probe,
    onToken: (piece: string) => {
      probe.text += piece;
      reached();
    },
  };
}

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  engine = new EngineSupervisor(spawnNodeEngine(), { contextSize: 4096 });
  await engine.load(fx.basePath);
});

afterAll(async () => {
  await engine?.close();
});

describe("EngineSupervisor: adapters and embeddings in a real engine process", () => {
  it("applies the requested adapters and KV policy per generation", async () => {
    expect((await engine.generate(hello, greedy(6, [use("chat")]), () => {})).text).toBe("cccccc");
    const coding = await engine.generate(
      hello,
      { ...greedy(6, [use("coding")]), kvPolicy: "reevaluate" },
      () => {},
    );
    expect(coding.text).toBe("{{{{{{");
    const blend = await engine.generate(hello, greedy(6, [use("chat", 0.5), use("coding", 0.5)]), () => {});
    expect(blend.text).toBe("c{c{c{");
    expect((await engine.generate(hello, greedy(6, []), () => {})).text).not.toMatch(/[c{]{6}/);
  });

  it("keeps the running generation's adapters when another turn asks for others: that one waits, then gets theirs", async () => {
    const controller = new AbortController();
    const { probe, onToken } = firstToken();
    const running = engine.generate(hello, greedy(3000, [use("chat")]), onToken, controller.signal);
    await probe.reached;
    let secondStreamed = false;
    const second = engine.generate(hello, greedy(6, [use("coding")]), () => (secondStreamed = true));
    // The first answer runs on until it is stopped; the second waits for it.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(secondStreamed).toBe(false);
    controller.abort();
    const first = await running;
    expect(first.stopReason).toBe("abort");
    // The first answer was never switched to coding's adapter mid-way.
    expect(first.text).toMatch(/^c+$/);
    expect((await second).text).toBe("{{{{{{");
  });

  it("reports an adapter for another base as invalid_input and keeps working", async () => {
    const wrong = await writeWrongBaseAdapter(join(dir.path, "wrong.gguf"));
    const error = await engine
      .generate(hello, greedy(4, [{ path: wrong, scale: 1 }]), () => {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("invalid_input");
    expect((error as ApiError).message).toMatch(/"wrong\.gguf" does not fit the loaded model/);
    expect((await engine.generate(hello, greedy(4, [use("ui")]), () => {})).text).toBe("uuuu");
  });

  it("embeds texts under the base model", async () => {
    const vectors = await engine.embed([
      "fix my TypeScript bug",
      "fix my JavaScript bug",
      "cook pasta tonight",
    ]);
    expect(vectors).toHaveLength(3);
    const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
    expect(dot(vectors[0]!, vectors[0]!)).toBeCloseTo(1, 5);
    expect(dot(vectors[0]!, vectors[1]!)).toBeGreaterThan(dot(vectors[0]!, vectors[2]!));
    expect(await engine.embed([])).toEqual([]);
  });

  it("after a crash, the next generation with adapters works (nothing to restore)", async () => {
    let reloaded!: () => void;
    const modelReloaded = new Promise<void>((resolve) => (reloaded = resolve));
    const unsubscribe = engine.onLifecycle((event) => event.type === "model-reloaded" && reloaded());
    const { probe, onToken } = firstToken();
    const running = engine.generate(hello, greedy(3000, [use("chat")]), onToken);
    await probe.reached;
    process.kill(engine.pid!, "SIGKILL");
    await expect(running).rejects.toMatchObject({ code: "engine_crashed" });
    await modelReloaded;
    unsubscribe();
    expect((await engine.generate(hello, greedy(6, [use("agent")]), () => {})).text).toBe("aaaaaa");
    expect((await engine.embed(["still here"]))[0]).toHaveLength(64);
  });
});
