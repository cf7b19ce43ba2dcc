import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { loadLlamaBackend } from "./llama-backend";
import { ModelSession } from "./model-session";
import { suiteDir } from "../../testing/core/temp-dir";

// Embeddings from the real tiny demo model (mean pooling, llama.pooling_type=1).
const dir = suiteDir("macaron-embed-");
let session: ModelSession;
let fx: FixturePaths;

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  session = await ModelSession.open(
    await loadLlamaBackend(1),
    fx.basePath,
    { contextSize: 512, sequences: 1 },
    () => {},
  );
});

afterAll(async () => {
  await session?.dispose();
});

const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describe("ModelSession.embed", () => {
  it("returns one unit-length vector of the model's width per text", async () => {
    const vectors = await session.embed(["hello", "a longer sentence about the weather", ""]);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) expect(v).toHaveLength(session.model.embeddingVectorSize);
    expect(dot(vectors[0]!, vectors[0]!)).toBeCloseTo(1, 5);
    expect(dot(vectors[1]!, vectors[1]!)).toBeCloseTo(1, 5);
    expect(vectors[2]!.every((x) => x === 0)).toBe(true);
    expect(await session.embed([])).toEqual([]);
  });

  it("is deterministic and puts similar texts closer than unrelated ones", async () => {
    const [code1, code2, food, again] = await session.embed([
      "Write a TypeScript function that reverses a string.",
      "Write a TypeScript function that sorts an array.",
      "What should I cook for dinner tonight?",
      "Write a TypeScript function that reverses a string.",
    ]);
    expect(again).toEqual(code1);
    expect(dot(code1!, code2!)).toBeGreaterThan(dot(code1!, food!));
    expect(dot(code2!, code1!)).toBeGreaterThan(dot(code2!, food!));
  });

  it("is computed under the base model whatever adapters the chat context applies", async () => {
    const before = await session.embed(["adapters must not leak"]);
    const coding = { path: fx.adapters.find((a) => a.id === "coding")!.path, scale: 1 };
    const { text } = await session.generate(
      [{ role: "user", text: "hi" }],
      { temperature: 0, maxTokens: 2, adapters: [coding] },
      () => {},
      new AbortController().signal,
    );
    expect(text).toBe("{{");
    expect(session.adapters.key).not.toBe("");
    expect(await session.embed(["adapters must not leak"])).toEqual(before);
  });

  it("truncates a text longer than the embedding context instead of failing", async () => {
    const [v] = await session.embed(["word ".repeat(1000)]);
    expect(dot(v!, v!)).toBeCloseTo(1, 5);
  });
});
