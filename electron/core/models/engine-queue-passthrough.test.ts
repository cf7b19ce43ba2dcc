/**
 * EngineQueue passes issue 14's complete and embedCounted through in line with the rest: a
 * completion waits for the answer before it (the engine runs one generation at a time), an
 * aborted waiting one ends at once, and an engine without them is refused clearly.
 */
import { describe, expect, it } from "vitest";
import { EMBEDDING_MAX_TOKENS } from "../../../common/engine-protocol";
import { FakeEngine, loadedModel } from "../../../testing/engine/fake-engine";
import type { EngineClient } from "../engine/types";
import { EngineQueue } from "./engine-queue";

const options = { temperature: 0, maxTokens: 8 };
const history = [{ role: "user" as const, text: "hi" }];

function setup() {
  const fake = new FakeEngine();
  fake.loaded = loadedModel("/m.gguf");
  return { fake, queue: new EngineQueue(fake) };
}

describe("EngineQueue complete and embedCounted", () => {
  it("runs a completion after the generation before it, streaming its tokens", async () => {
    const { fake, queue } = setup();
    fake.scripts.push({ tokens: ["a", "b"] }, { tokens: [" upon", " a", " time"] });
    const order: string[] = [];
    const [chat, raw] = await Promise.all([
      queue.generate(history, options, (t) => order.push(`g:${t}`)),
      queue.complete("Once", { ...options, stop: [" a"] }, (t) => order.push(`c:${t}`)),
    ]);
    expect(chat.text).toBe("ab");
    expect(raw).toMatchObject({ text: " upon", stopReason: "stop", promptTokens: 1 });
    expect(order).toEqual(["g:a", "g:b", "c: upon"]);
    expect(fake.completeCalls).toEqual([{ prompt: "Once", options: { ...options, stop: [" a"] } }]);
  });

  it("ends a waiting completion at once when it is aborted, without starting it", async () => {
    const { fake, queue } = setup();
    fake.scripts.push({ tokens: ["x"], end: "hang" });
    const running = new AbortController();
    const first = queue.generate(history, options, () => undefined, running.signal);
    const waiting = new AbortController();
    const second = queue.complete("p", options, () => undefined, waiting.signal);
    waiting.abort();
    expect(await second).toMatchObject({ text: "", stopReason: "abort", tokens: 0 });
    running.abort();
    await first;
    expect(fake.completeCalls).toHaveLength(0);
  });

  it("counts embedding tokens in line, and passes the engine's refusal of a long input on", async () => {
    const { queue } = setup();
    const counted = await queue.embedCounted(["two words", ""]);
    expect(counted.tokens).toEqual([2, 0]);
    expect(counted.vectors[1]!.every((x) => x === 0)).toBe(true);
    await expect(queue.embedCounted(["w ".repeat(EMBEDDING_MAX_TOKENS + 1)])).rejects.toMatchObject({
      code: "context_length_exceeded",
      message: expect.stringMatching(/^Input 0 has 2046 tokens/) as unknown,
    });
    // The caller's signal reaches the engine (a /v1 client that went away stops its work there).
    const gone = new AbortController();
    gone.abort();
    await expect(queue.embedCounted(["a"], gone.signal)).rejects.toMatchObject({ code: "aborted" });
  });

  it("refuses both when the engine behind it has neither", async () => {
    const fake = new FakeEngine();
    const bare: EngineClient = {
      load: fake.load.bind(fake),
      generate: fake.generate.bind(fake),
      embed: fake.embed.bind(fake),
      loaded: null,
      onLifecycle: fake.onLifecycle.bind(fake),
      close: fake.close.bind(fake),
    };
    const queue = new EngineQueue(bare);
    await expect(queue.complete("p", options, () => undefined)).rejects.toThrow(
      /cannot complete raw prompts/,
    );
    await expect(queue.embedCounted(["a"])).rejects.toThrow(/cannot count embedding tokens/);
  });
});
