/**
 * One speed measurement in its own process, with the node-llama-cpp package at argv[2] (the
 * app's, or a copy holding a local build): prompt tok/s (a fresh evaluation of a long prompt)
 * and generation tok/s (greedy, EOS ignored), warm (one untimed round first). Prints JSON.
 *
 *   tsx bench/llama-speed.ts <node-llama-cpp dir> <model.gguf> <threads> <promptTokens> <genTokens> <rounds>
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as NodeLlamaCpp from "node-llama-cpp";

const [dir, modelPath, threadsArg, promptArg, genArg, roundsArg] = process.argv.slice(2);
if (!dir || !modelPath) {
  console.error(
    "usage: tsx bench/llama-speed.ts <node-llama-cpp dir> <model.gguf> [threads] [prompt] [gen] [rounds]",
  );
  process.exit(2);
}
const threads = Number(threadsArg ?? 1);
const promptTokens = Number(promptArg ?? 512);
const genTokens = Number(genArg ?? 128);
const rounds = Number(roundsArg ?? 3);

const nlc = (await import(pathToFileURL(join(dir, "dist", "index.js")).href)) as typeof NodeLlamaCpp;
const llama = await nlc.getLlama({ gpu: false, maxThreads: threads, build: "never", progressLogs: false });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({
  contextSize: promptTokens + genTokens + 16,
  sequences: 1,
  threads,
  flashAttention: false,
});
const sequence = context.getSequence();
// Byte-level vocabulary: one token per character; a varied text, not one repeated token.
const text = Array.from(
  { length: promptTokens },
  (_, i) => "abcdefghij klmnopqrst uvwxyz,."[(i * 7) % 30],
).join("");
const prompt = model.tokenize(text).slice(0, promptTokens);

const promptRates: number[] = [];
const genRates: number[] = [];
for (let round = 0; round <= rounds; round++) {
  await sequence.clearHistory();
  let started = performance.now();
  await sequence.evaluateWithoutGeneratingNewTokens(prompt);
  const promptMs = performance.now() - started;
  started = performance.now();
  let generated = 0;
  for await (const token of sequence.evaluate([prompt.at(-1)!], { temperature: 0 })) {
    void token;
    if (++generated >= genTokens) break;
  }
  const genMs = performance.now() - started;
  // Round 0 warms the caches and the thread pool.
  if (round === 0) continue;
  promptRates.push((prompt.length / promptMs) * 1000);
  genRates.push((generated / genMs) * 1000);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  JSON.stringify({
    buildType: llama.buildType,
    promptTokens: prompt.length,
    genTokens,
    threads,
    promptTokPerS: median(promptRates),
    genTokPerS: median(genRates),
  }),
);
await context.dispose();
await model.dispose();
await llama.dispose();
