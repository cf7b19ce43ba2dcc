import { describe, expect, it } from "vitest";
import { ApiError } from "../../api";
import { FakeEngine, loadedModel } from "../testing/fake-engine";
import { EngineQueue } from "./engine-queue";

const options = { temperature: 0, maxTokens: 8 };
const history = [{ role: "user" as const, text: "hi" }];

function setup() {
  const fake = new FakeEngine();
  fake.loaded = loadedModel("/m.gguf");
  return { fake, queue: new EngineQueue(fake) };
}

describe("EngineQueue", () => {
  it("runs generations one after another, in call order (the engine refuses two at once)", async () => {
    const { fake, queue } = setup();
    fake.scripts.push({ tokens: ["a", "b"] }, { tokens: ["c"] }, { tokens: ["d"] });
    const order: string[] = [];
    const results = await Promise.all(
      [1, 2, 3].map((n) => queue.generate(history, options, (t) => order.push(`${n}:${t}`))),
    );
    expect(results.map((r) => r.text)).toEqual(["ab", "c", "d"]);
    expect(order).toEqual(["1:a", "1:b", "2:c", "3:d"]);
  });

  it("ends a waiting generation at once when it is aborted, without starting it", async () => {
    const { fake, queue } = setup();
    fake.scripts.push({ tokens: ["x"], end: "hang" });
    const running = new AbortController();
    const first = queue.generate(history, options, () => undefined, running.signal);
    const waiting = new AbortController();
    const second = queue.generate(history, options, () => undefined, waiting.signal);
    waiting.abort();
    expect(await second).toMatchObject({ text: "", stopReason: "abort", tokens: 0, contextSize: 512 });
    running.abort();
    expect((await first).stopReason).toBe("abort");
    expect(fake.calls).toHaveLength(1);
    const already = new AbortController();
    already.abort();
    expect((await queue.generate(history, options, () => undefined, already.signal)).stopReason).toBe(
      "abort",
    );
    expect(fake.calls).toHaveLength(1);
  });

  it("keeps going after a failure, and loads after the answer before it", async () => {
    const { fake, queue } = setup();
    fake.scripts.push({ tokens: [], end: new ApiError("engine_crashed", "crashed") }, { tokens: ["ok"] });
    const failed = queue.generate(history, options, () => undefined);
    const load = queue.load("/other.gguf");
    const next = queue.generate(history, options, () => undefined);
    await expect(failed).rejects.toMatchObject({ code: "engine_crashed" });
    expect((await load).path).toBe("/other.gguf");
    expect(queue.loaded?.path).toBe("/other.gguf");
    expect((await next).text).toBe("ok");
  });
});
