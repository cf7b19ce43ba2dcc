/**
 * The local llama.cpp build's KV cells are zero-fill-on-demand pages (the app's patch,
 * electron/core/engine/llama-patches.ts): creating a context does not touch its KV memory, so the
 * process grows by what is used, not by every sequence's cells; and cells never written read as
 * zeros, so answers are what a fully cleared cache gives (the other engine tests compare answers).
 * Linux only: elsewhere the buffer is cleared as before.
 */
import { readGgufFileInfo, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, expect, it } from "vitest";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { suiteDir } from "../../testing/core/temp-dir";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";

const dir = suiteDir("macaron-kv-lazy-");
let fx: FixturePaths;
let backend: LlamaBackend;
let model: LlamaModel;
const contexts: LlamaContext[] = [];

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  backend = await loadLlamaBackend(1);
  model = await backend.llama.loadModel({ modelPath: fx.basePath });
});

afterAll(async () => {
  for (const context of contexts) await context.dispose();
  await model?.dispose();
  await backend?.llama.dispose();
});

/** Bytes of F16 K and V cells for `cells` cells of the fixture (every layer, all KV heads). */
async function kvBytes(cells: number): Promise<number> {
  const { metadata } = await readGgufFileInfo(fx.basePath, { readTensorInfo: false });
  const arch = (metadata as unknown as { general: { architecture: string } }).general.architecture;
  const m = (metadata as unknown as Record<string, Record<string, unknown>>)[arch]!;
  const attention = m.attention as { head_count: number; head_count_kv?: number };
  const embdKv =
    ((m.embedding_length as number) * (attention.head_count_kv ?? attention.head_count)) /
    attention.head_count;
  return cells * (m.block_count as number) * 2 * embdKv * 2;
}

it.runIf(process.platform === "linux")(
  "creating a context does not touch its KV cells, and it answers as usual",
  async (ctx) => {
    // The patch is in the app's local build (npm run setup); without one (no cmake or compiler),
    // llama.cpp's prebuilt binaries write every cell, as they always did.
    if (backend.llama.buildType !== "localBuild")
      ctx.skip("no local llama.cpp build: the patch is not in the prebuilt binaries");
    const sequences = 32;
    const expected = await kvBytes(sequences * model.trainContextSize);
    // Large enough that the difference is not the JS heap's noise.
    expect(expected).toBeGreaterThanOrEqual(64 * 2 ** 20);
    const before = process.memoryUsage().rss;
    const context = await model.createContext({ contextSize: model.trainContextSize, sequences });
    contexts.push(context);
    const grown = process.memoryUsage().rss - before;
    // 16–18 MB here (the rest of the context: compute and output buffers), against 72–84 MB with
    // llama.cpp's own clear, which writes over every cell (64 MiB of them).
    expect(grown).toBeLessThan(expected / 2);
    // Cells in use are real memory and hold what was evaluated: a greedy answer as usual.
    const sequence = context.getSequence();
    const tokens: number[] = [];
    for await (const token of sequence.evaluate(model.tokenize("Once upon a time"), { temperature: 0 })) {
      tokens.push(token);
      if (tokens.length >= 8) break;
    }
    expect(tokens).toHaveLength(8);
  },
);
