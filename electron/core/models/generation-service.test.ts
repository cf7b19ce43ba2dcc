import { describe, expect, it } from "vitest";
import type { EngineClient, GenerateResult, LoadedModel } from "../engine/types";
import { GenerationService } from "./generation-service";

/** An engine whose generations end when the test says so; counts how many it holds at once. */
function fakeEngine(sequences: number, concurrentGenerations: boolean) {
  const held: (() => void)[] = [];
  let most = 0;
  const loaded = { settings: { sequences } } as unknown as LoadedModel;
  const engine = {
    loaded,
    concurrentGenerations,
    generate: () =>
      new Promise<GenerateResult>((resolve) => {
        held.push(() => resolve({ text: "ok" } as GenerateResult));
        most = Math.max(most, held.length);
      }),
  } as unknown as EngineClient;
  return {
    engine,
    held,
    most: () => most,
    /** End the oldest generation the engine holds. */
    finishOne: () => held.shift()!(),
  };
}

const ask = (service: GenerationService) =>
  service.generate(
    [{ role: "user", text: "hi" }],
    { temperature: 0, maxTokens: 8 },
    undefined,
    new AbortController().signal,
  );

/** Let every pending promise chain settle (the queue hands jobs over in microtasks). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("GenerationService", () => {
  it("gives a batching engine twice its sequences: a waiting request is already there when one ends", async () => {
    const fake = fakeEngine(2, true);
    const service = new GenerationService(() => fake.engine);
    const answers = Array.from({ length: 6 }, () => ask(service));
    await settle();
    // 2 sequences: 2 generate, 2 wait in the engine (its adapter groups), 2 wait here.
    expect(fake.held.length).toBe(4);
    fake.finishOne();
    await settle();
    expect(fake.held.length).toBe(4);
    while (fake.held.length > 0) {
      fake.finishOne();
      await settle();
    }
    await expect(Promise.all(answers)).resolves.toHaveLength(6);
    expect(fake.most()).toBe(4);
  });

  it("gives an engine that runs one generation at a time one request at a time", async () => {
    const fake = fakeEngine(4, false);
    const service = new GenerationService(() => fake.engine);
    const answers = Array.from({ length: 3 }, () => ask(service));
    await settle();
    expect(fake.held.length).toBe(1);
    while (fake.held.length > 0) {
      fake.finishOne();
      await settle();
    }
    await expect(Promise.all(answers)).resolves.toHaveLength(3);
    expect(fake.most()).toBe(1);
  });
});
