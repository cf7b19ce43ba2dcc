import { join } from "node:path";
import {
  ChatMLChatWrapper,
  getLlama,
  LlamaChatSession,
  LlamaLogLevel,
  type Llama,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ADAPTERS, writeWrongBaseAdapter, type DemoAdapterId } from "./adapters";
import { EOS_ID } from "./byte-vocab";
import { writeFixtures, type FixturePaths } from "./fixtures";
import { suiteDir } from "../../testing/core/temp-dir";

/**
 * The generated demo model and adapters under real node-llama-cpp: the properties other
 * tests rely on (endless printable base output, one recognisable pattern per adapter).
 */

const dir = suiteDir("gguf-llama-");
let fixtures: FixturePaths;
let llama: Llama;
let model: LlamaModel;

beforeAll(async () => {
  fixtures = await writeFixtures(dir.path);
  // One Llama for the whole file: getLlama() costs ~0.8 s.
  llama = await getLlama({
    gpu: false,
    maxThreads: 1,
    logLevel: LlamaLogLevel.error,
    logger: () => undefined,
  });
  model = await llama.loadModel({ modelPath: fixtures.basePath });
});

afterAll(async () => {
  await model?.dispose();
  await llama?.dispose();
});

function adapterPath(id: DemoAdapterId): string {
  return fixtures.adapters.find((a) => a.id === id)!.path;
}

/** Greedy decoding of a ChatML user turn; returns the generated tokens and text. */
async function greedy(prompt: string, lora: { filePath: string; scale: number }[] = [], maxTokens = 48) {
  const context = await model.createContext({
    contextSize: 512,
    threads: 1,
    lora: lora.length > 0 ? { adapters: lora } : undefined,
  });
  try {
    const sequence = context.getSequence();
    const input = model.tokenize(`<|im_start|>user\n${prompt}<|im_end|>\n<|im_start|>assistant\n`, true);
    const tokens: Token[] = [];
    for await (const token of sequence.evaluate(input, { temperature: 0 })) {
      tokens.push(token);
      if (tokens.length >= maxTokens || token === EOS_ID) break;
    }
    return { tokens, text: model.detokenize(tokens) };
  } finally {
    await context.dispose();
  }
}

const PRINTABLE = /^[\x20-\x7e]+$/;

describe("demo base model", () => {
  it("generates printable text until maxTokens, never EOS or control tokens", async () => {
    for (const prompt of ["Hello there", "Write a poem about cats", "What is 2+2?"]) {
      const { tokens, text } = await greedy(prompt);
      expect(tokens).toHaveLength(48);
      expect(tokens.every((t) => t < 256)).toBe(true);
      expect(text).toMatch(PRINTABLE);
      // Mostly lower-case letters and spaces: it reads like (nonsense) words.
      expect(text.replace(/[a-z ]/g, "").length).toBeLessThan(text.length / 4);
    }
  });

  it("answers differently to different prompts", async () => {
    const outputs = new Set<string>();
    for (const prompt of ["Hello there", "Write a poem about cats", "What is 2+2?", "xyz"]) {
      outputs.add((await greedy(prompt, [], 24)).text);
    }
    expect(outputs.size).toBeGreaterThanOrEqual(3);
  });

  it("runs through LlamaChatSession with the ChatML wrapper up to maxTokens", async () => {
    const context = await model.createContext({ contextSize: 512, threads: 1 });
    try {
      const session = new LlamaChatSession({
        contextSequence: context.getSequence(),
        chatWrapper: new ChatMLChatWrapper(),
      });
      const answer = await session.prompt("Hi!", { maxTokens: 20, temperature: 0 });
      expect(answer).toMatch(PRINTABLE);
      expect(model.tokenize(answer)).toHaveLength(20);
    } finally {
      await context.dispose();
    }
  });
});

describe("demo base embeddings", () => {
  it("puts near-duplicate texts closer than unrelated ones", async () => {
    const context = await model.createEmbeddingContext({ contextSize: 256, threads: 1 });
    try {
      const [cat, cats, tax] = await Promise.all(
        ["I love my cat", "I love my cats", "Quarterly tax filing deadline"].map((t) =>
          context.getEmbeddingFor(t),
        ),
      );
      expect(cat!.calculateCosineSimilarity(cats!)).toBeGreaterThan(0.9);
      expect(cat!.calculateCosineSimilarity(tax!)).toBeLessThan(0.6);
    } finally {
      await context.dispose();
    }
  });
});

describe("demo adapters", () => {
  it.each(DEMO_ADAPTERS.map((a) => [a.id, a.marker] as const))(
    "%s at scale 1 repeats %s",
    async (id, marker) => {
      const { text } = await greedy("Hello there", [{ filePath: adapterPath(id), scale: 1 }], 24);
      expect(text).toBe(marker.repeat(24));
    },
  );

  it("an equal blend of chat and coding alternates their markers", async () => {
    const { text } = await greedy("Write a poem about cats", [
      { filePath: adapterPath("chat"), scale: 0.5 },
      { filePath: adapterPath("coding"), scale: 0.5 },
    ]);
    expect(text.replace(/[c{]/g, "").length).toBeLessThanOrEqual(2);
    expect(text.split("c").length - 1).toBeGreaterThan(12);
    expect(text.split("{").length - 1).toBeGreaterThan(12);
  });

  it("the stronger side of an unequal blend wins", async () => {
    const mostlyChat = await greedy("Write a poem about cats", [
      { filePath: adapterPath("chat"), scale: 0.7 },
      { filePath: adapterPath("coding"), scale: 0.3 },
    ]);
    expect(mostlyChat.text.split("c").length - 1).toBeGreaterThan(40);
  });

  it("a low scale moves the base output towards the marker without taking over", async () => {
    const base = (await greedy("Hello there")).text;
    const weak = (await greedy("Hello there", [{ filePath: adapterPath("chat"), scale: 0.2 }])).text;
    const count = (s: string) => s.split("c").length - 1;
    expect(weak).not.toBe(base);
    expect(count(weak)).toBeGreaterThan(count(base));
    expect(count(weak)).toBeLessThan(weak.length);
  });

  it("llama.cpp refuses an adapter made for another base (which is why assertAdapterFits exists)", async () => {
    const wrong = await writeWrongBaseAdapter(join(dir.path, "wrong-base.gguf"));
    await expect(
      model.createContext({ contextSize: 256, threads: 1, lora: { adapters: [{ filePath: wrong }] } }),
    ).rejects.toThrow();
  });
});
