import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api";
import { FakeEngine, loadedModel } from "../../../testing/engine/fake-engine";
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

describe("EngineQueue with an engine that takes generations together", () => {
  it("passes consecutive generations on at once; a load waits for them, and generations behind it for the load", async () => {
    const fake = new FakeEngine({ concurrentGenerations: true });
    fake.loaded = loadedModel("/m.gguf");
    const queue = new EngineQueue(fake);
    fake.scripts.push({ tokens: ["a"], end: "hang" }, { tokens: ["b"], end: "hang" }, { tokens: ["c"] });
    const stops = [new AbortController(), new AbortController()];
    const running = stops.map((stop) => queue.generate(history, options, () => undefined, stop.signal));
    const load = queue.load("/other.gguf");
    const after = queue.generate(history, options, () => undefined);
    await vi.waitFor(() => expect(fake.calls).toHaveLength(2));
    expect(queue.loaded?.path).toBe("/m.gguf");
    for (const stop of stops) stop.abort();
    await Promise.all(running);
    expect((await load).path).toBe("/other.gguf");
    expect((await after).text).toBe("c");
    expect(fake.calls).toHaveLength(3);
  });
});

describe("EngineQueue background generations", () => {
  const json = { temperature: 0, maxTokens: 8 };

  it("run only when nothing else waits, and give way to work that arrives meanwhile", async () => {
    const { fake, queue } = setup();
    // The chat answer hangs until stopped; the background request waits behind it.
    fake.scripts.push(
      { tokens: ["a"], end: "hang" },
      { tokens: ["bg"], end: "hang" },
      { tokens: ["c"] },
      { tokens: ["bg2"] },
    );
    const chat = new AbortController();
    const first = queue.generate(history, options, () => undefined, chat.signal);
    const background = queue.generateInBackground(history, json, new AbortController().signal);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(fake.calls).toHaveLength(1);
    chat.abort();
    await first;
    // Now it runs ("bg" hangs) until a new request preempts it: that one goes first...
    await vi.waitFor(() => expect(fake.calls).toHaveLength(2));
    const next = await queue.generate(history, options, () => undefined);
    expect(next.text).toBe("c");
    // ...and the background one starts over afterwards and completes.
    expect((await background).text).toBe("bg2");
    expect(fake.calls).toHaveLength(4);
  });

  it("ends at once when aborted while waiting, without reaching the engine", async () => {
    const { fake, queue } = setup();
    fake.scripts.push({ tokens: ["a"], end: "hang" });
    const chat = new AbortController();
    const first = queue.generate(history, options, () => undefined, chat.signal);
    const stop = new AbortController();
    const background = queue.generateInBackground(history, json, stop.signal);
    stop.abort();
    expect(await background).toMatchObject({ stopReason: "abort", text: "" });
    chat.abort();
    await first;
    expect(fake.calls).toHaveLength(1);
  });
});
