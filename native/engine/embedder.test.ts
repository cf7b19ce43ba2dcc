import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { tinyModelSpec } from "../gguf/tiny-model";
import { gv, writeGguf } from "../gguf/writer";
import { LlamaVocabularyType, type Token } from "node-llama-cpp";
import { EMBEDDING_SEQUENCES, Embedder, embeddingBatchSetting, packGroups, withMarkers } from "./embedder";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { ModelSession } from "./model-session";
import { suiteDir } from "../../testing/core/temp-dir";

// Embeddings from the real tiny demo model (mean pooling, llama.pooling_type=1).
const dir = suiteDir("macaron-embed-");
let session: ModelSession;
let fx: FixturePaths;
let backend: LlamaBackend;

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  backend = await loadLlamaBackend(1);
  session = await ModelSession.open(backend, fx.basePath, { contextSize: 512, sequences: 1 }, () => {});
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
    // The same text twice in one call: two rows of one decode, equal to rounding.
    expect(dot(again!, code1!)).toBeCloseTo(1, 6);
    // The same call again: the same numbers.
    expect(await session.embed(["Write a TypeScript function that reverses a string."])).toEqual(
      await session.embed(["Write a TypeScript function that reverses a string."]),
    );
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

const cosine = (a: number[], b: number[]) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));

/** `n` texts of 1 to ~90 words from a small vocabulary, different for each seed. */
function texts(n: number, seed: number): string[] {
  const words = "river stone quick blue lamp eleven paper write function sort cook dinner".split(" ");
  return Array.from({ length: n }, (_, i) =>
    Array.from(
      { length: 1 + ((i * 37 + seed) % 90) },
      (_, w) => words[(i * 5 + w * 3 + seed) % words.length],
    ).join(" "),
  );
}

describe("Embedder batching", () => {
  it("embeds texts together as it embeds each alone, whatever their lengths and order", async () => {
    const together = new Embedder(session.model, 1);
    const alone = new Embedder(session.model, 1, { batched: false });
    try {
      // The app's local build has the addon patch (llama-patches.ts); the prebuilt binaries do not
      // (and MACARON_EMBEDDING_BATCH=0 turns batching off).
      expect(await together.batched()).toBe(
        backend.llama.buildType === "localBuild" && embeddingBatchSetting(),
      );
      expect(await alone.batched()).toBe(false);
      // More texts than one decode takes, a repeated one, an empty one, and one long enough
      // that the texts of a group must be split by tokens as well.
      const batch = [...texts(2 * EMBEDDING_SEQUENCES + 5, 1), "", "word ".repeat(300)];
      batch.splice(7, 0, batch[3]!);
      const a = await together.embedCounted(batch);
      const b = await alone.embedCounted(batch);
      expect(a.tokens).toEqual(b.tokens);
      expect(a.tokens.reduce((x, y) => x + y, 0)).toBeGreaterThan(2048);
      for (const [i, v] of a.vectors.entries()) {
        if (batch[i] === "") {
          expect(v.every((x) => x === 0)).toBe(true);
          continue;
        }
        expect(cosine(v, b.vectors[i]!)).toBeGreaterThan(0.9999);
      }
      expect(cosine(a.vectors[7]!, a.vectors[3]!)).toBeGreaterThan(0.9999);
      // Distinct texts keep distinct vectors (nothing of one sequence leaks into another's).
      expect(cosine(a.vectors[0]!, a.vectors[1]!)).toBeLessThan(0.999);
      // The same texts in another order and another grouping give the same vectors.
      const reversed = await together.embed([...batch].reverse());
      for (const [i, v] of reversed.reverse().entries())
        if (batch[i] !== "") expect(cosine(v, a.vectors[i]!)).toBeGreaterThan(0.9999);
    } finally {
      await together.dispose();
      await alone.dispose();
    }
  });

  it("with truncate cuts a long text to its first tokens, counted as cut, as embed does", async () => {
    const embedder = new Embedder(session.model, 1);
    try {
      const long = "word ".repeat(embedder.maxTokens);
      await expect(embedder.embedCounted([long])).rejects.toMatchObject({ code: "context_length_exceeded" });
      const cut = await embedder.embedCounted(["short", long], undefined, true);
      expect(cut.tokens).toEqual([session.model.tokenize("short").length, embedder.maxTokens]);
      const [truncated] = await embedder.embed([long]);
      expect(cosine(cut.vectors[1]!, truncated!)).toBeGreaterThan(0.9999);
    } finally {
      await embedder.dispose();
    }
  });

  it("stops before its next decode once its signal is aborted, batched or one text at a time", async () => {
    for (const batched of [true, false]) {
      const embedder = new Embedder(session.model, 1, { batched });
      try {
        const stopped = new AbortController();
        stopped.abort();
        await expect(embedder.embedCounted(texts(3, 1), stopped.signal)).rejects.toMatchObject({
          code: "aborted",
        });
        // Aborted while it runs: many decodes' worth of texts, aborted on the next turn.
        const midway = new AbortController();
        const running = embedder.embedCounted(texts(8 * EMBEDDING_SEQUENCES, 1), midway.signal);
        setImmediate(() => midway.abort());
        await expect(running).rejects.toMatchObject({ code: "aborted" });
        expect((await embedder.embedCounted(texts(2, 1))).vectors).toHaveLength(2);
      } finally {
        await embedder.dispose();
      }
    }
  });

  it("pools a text longer than 512 tokens over all of it, in one decode", async () => {
    const embedder = new Embedder(session.model, 1);
    // node-llama-cpp's own embedding context with a batch that holds the whole text: one decode.
    const reference = await session.model.createEmbeddingContext({
      contextSize: 2048,
      batchSize: 2048,
      threads: 1,
    });
    try {
      const text = texts(6, 7).join(" ");
      const tokens = session.model.tokenize(text);
      expect(tokens.length).toBeGreaterThan(1200);
      expect(tokens.length).toBeLessThan(embedder.maxTokens);
      const [v] = await embedder.embed([text]);
      const r = (await reference.getEmbeddingFor(tokens)).vector;
      expect(cosine(v!, [...r])).toBeGreaterThan(0.9999);
    } finally {
      await reference.dispose();
      await embedder.dispose();
    }
  });
});

describe("Embedder on a model trained on a short context", () => {
  // A context that 8 sequences do not divide: llama.cpp aborted the process on the first decode.
  it.each([1001, 300])("embeds together under a training context of %i tokens", async (trained) => {
    const spec = tinyModelSpec();
    const path = join(dir.path, `ctx-${trained}.gguf`);
    await writeGguf(path, {
      metadata: { ...spec.metadata, "llama.context_length": gv.u32(trained) },
      tensors: spec.tensors,
    });
    const model = await backend.llama.loadModel({ modelPath: path });
    const together = new Embedder(model, 1);
    const alone = new Embedder(model, 1, { batched: false });
    try {
      expect(together.maxTokens).toBe(alone.maxTokens);
      expect(together.maxTokens).toBeLessThanOrEqual(trained - 3);
      // embed truncates: the long text is embedded at exactly the most an input may have.
      const batch = [...texts(12, 3), "word ".repeat(together.maxTokens)];
      expect(model.tokenize(batch.at(-1)!).length).toBeGreaterThan(together.maxTokens);
      const a = await together.embed(batch);
      const b = await alone.embed(batch);
      for (const [i, v] of a.entries()) expect(cosine(v, b[i]!)).toBeGreaterThan(0.9999);
    } finally {
      await together.dispose();
      await alone.dispose();
      await model.dispose();
    }
  });
});

describe("packGroups", () => {
  const input = (n: number) => ({ tokens: new Array<number>(n).fill(1) });

  it("keeps order and fills each decode up to its texts and tokens", () => {
    const sizes = (groups: { tokens: number[] }[][]) => groups.map((g) => g.map((x) => x.tokens.length));
    expect(sizes(packGroups([input(3), input(4), input(2), input(5)], 7))).toEqual([
      [3, 4],
      [2, 5],
    ]);
    expect(sizes(packGroups([input(7), input(1)], 7))).toEqual([[7], [1]]);
    const many = packGroups(
      Array.from({ length: EMBEDDING_SEQUENCES * 2 + 1 }, () => input(1)),
      10_000,
    );
    expect(many.map((g) => g.length)).toEqual([EMBEDDING_SEQUENCES, EMBEDDING_SEQUENCES, 1]);
    expect(packGroups([], 10)).toEqual([]);
  });
});

describe("withMarkers", () => {
  const tokens = { bos: 1, eos: 2, sep: 3, shouldPrependBosToken: true, shouldAppendEosToken: false };
  const model = (vocabularyType: LlamaVocabularyType, overrides: Partial<typeof tokens> = {}) => ({
    vocabularyType,
    tokens: { ...tokens, ...overrides } as never,
  });

  const mark = (m: ReturnType<typeof model>, tokens: number[]) => withMarkers(m, tokens as Token[]);

  it("adds what llama.cpp's tokenizer would for each vocabulary, once", () => {
    expect(mark(model(LlamaVocabularyType.bpe), [7, 8])).toEqual([1, 7, 8]);
    expect(mark(model(LlamaVocabularyType.bpe), [1, 7])).toEqual([1, 7]);
    expect(mark(model(LlamaVocabularyType.bpe, { shouldAppendEosToken: true }), [7])).toEqual([1, 7, 2]);
    expect(mark(model(LlamaVocabularyType.bpe, { shouldPrependBosToken: false }), [7])).toEqual([7]);
    expect(mark(model(LlamaVocabularyType.wpm, { shouldPrependBosToken: false }), [7])).toEqual([1, 7, 3]);
    expect(mark(model(LlamaVocabularyType.ugm), [7])).toEqual([7, 2]);
    expect(mark(model(LlamaVocabularyType.rwkv, { shouldAppendEosToken: true }), [7])).toEqual([7]);
  });
});
