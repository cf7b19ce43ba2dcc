/**
 * The decode trace on node-llama-cpp's real context (the tiny fixture): every decode is recorded
 * with the tokens its batch held, so the tokens of all entries are exactly those the sequences
 * evaluated, and two generations decoded together show as 2-token steps.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { LlamaContext, LlamaModel } from "node-llama-cpp";
import { writeFixtures } from "../gguf/fixtures";
import { suiteDir } from "../../testing/core/temp-dir";
import { alignDecodes } from "./decode-barrier";
import { decodeSummary, DecodeTrace, parseDecodeTrace, traceDecodes } from "./decode-trace";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";

const dir = suiteDir("macaron-decode-trace-");
let backend: LlamaBackend;
let model: LlamaModel;
let context: LlamaContext;

beforeAll(async () => {
  const fx = await writeFixtures(dir.path);
  backend = await loadLlamaBackend(1);
  model = await backend.llama.loadModel({ modelPath: fx.basePath });
  context = await model.createContext({ contextSize: 256, sequences: 2 });
});

afterAll(async () => {
  await context?.dispose();
  await model?.dispose();
  await backend?.llama.dispose();
});

it("records each decode of a real context with the tokens of its batch", async () => {
  const file = join(dir.path, "trace.txt");
  const trace = new DecodeTrace(file);
  traceDecodes(context, trace);
  // A second wrap of the same context changes nothing (each decode is written once).
  traceDecodes(context, trace);
  let active = 0;
  alignDecodes(context, () => active);
  const sequences = [context.getSequence(), context.getSequence()];
  const generate = async (text: string, tokens: number): Promise<number> => {
    const sequence = sequences[active++]!;
    let n = 0;
    for await (const token of sequence.evaluate(model.tokenize(text), { temperature: 0 })) {
      void token;
      if (++n >= tokens) break;
    }
    return n;
  };
  const generated = await Promise.all([generate("Once upon a time", 12), generate("The sea is", 12)]);
  trace.flush();
  const entries = parseDecodeTrace(readFileSync(file, "utf8"));
  const evaluated = sequences.reduce(
    (sum, s) => sum + s.tokenMeter.usedInputTokens + s.tokenMeter.usedOutputTokens,
    0,
  );
  expect(generated).toEqual([12, 12]);
  expect(entries.reduce((sum, e) => sum + e.tokens, 0)).toBe(evaluated);
  for (const e of entries) expect(e.end).toBeGreaterThanOrEqual(e.start);
  // In order: each decode starts after the one before it ended (one context decodes one batch at a time).
  for (let i = 1; i < entries.length; i++)
    expect(entries[i]!.start).toBeGreaterThanOrEqual(entries[i - 1]!.end);
  const twoToken = decodeSummary(entries).find((s) => s.tokens === 2);
  // 12 tokens each: the prompts' last tokens give the first, the rest are 11 steps of both.
  expect(twoToken?.decodes).toBeGreaterThanOrEqual(10);
  // Each generation step's tokens were sampled from the decode before it: after that decode
  // ended and before the next began. The last step's sample ends the generations.
  const stepsOfBoth = entries.filter((e) => e.tokens === 2);
  for (const e of stepsOfBoth) {
    expect(e.sampled).toBeGreaterThanOrEqual(e.end);
    const next = entries[entries.indexOf(e) + 1];
    if (next) expect(e.sampled).toBeLessThanOrEqual(next.start);
  }
  expect(twoToken!.sampleMedianMs).toBeGreaterThanOrEqual(0);
  expect(twoToken!.sampleMedianMs).toBeLessThanOrEqual(twoToken!.gapMedianMs);
});
