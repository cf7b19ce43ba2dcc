/**
 * One TTFT measurement through node-llama-cpp, in its own process, with the package at argv[3]
 * (the app's, running its prebuilt binaries, or a copy holding a local build). Prints one JSON
 * line. Two modes:
 *
 *   tsx bench/ttft-node.ts tokenize <node-llama-cpp dir> <model.gguf> <promptTokens>
 *     the bench prompt's token ids (the model's own tokenizer, no BOS), so that node-llama-cpp
 *     and llama-server evaluate exactly the same tokens;
 *   tsx bench/ttft-node.ts run <node-llama-cpp dir> <model.gguf> <tokens.json> <threads> <contextSize> <batchSize> <genTokens>
 *     load, one short untimed warm-up (thread pool, weights paged in), then the timed run on an
 *     empty KV cache: TTFT (prompt evaluated + first token sampled), prompt tok/s over that time,
 *     generation tok/s over the tokens after the first (greedy, EOS not special).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as NodeLlamaCpp from "node-llama-cpp";
import { z } from "zod";

/** A deterministic English-like text: words picked by a fixed linear congruential sequence. */
export function promptText(chars: number): string {
  const words =
    "the a of and to in is that it for on with as was by at from this be are or an have not which one all were when there can more their if will each about how up out them then she many some so these would other into has two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know".split(
      " ",
    );
  let state = 12345;
  let text = "";
  while (text.length < chars) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text += `${words[state % words.length]!}${state % 13 === 0 ? ". " : " "}`;
  }
  return text;
}

export const NodeRunResult = z.object({
  buildType: z.string(),
  promptTokens: z.number().int(),
  genTokens: z.number().int(),
  threads: z.number().int(),
  ttftMs: z.number(),
  promptTokPerS: z.number(),
  genTokPerS: z.number(),
});
export type NodeRunResult = z.infer<typeof NodeRunResult>;

async function load(dir: string, threads: number) {
  const nlc = (await import(pathToFileURL(join(dir, "dist", "index.js")).href)) as typeof NodeLlamaCpp;
  // build "never": a missing binary is an error here, not a build started in the middle of a run.
  return nlc.getLlama({
    gpu: false,
    maxThreads: threads,
    build: "never",
    progressLogs: false,
    logLevel: nlc.LlamaLogLevel.error,
  });
}

async function tokenize(dir: string, modelPath: string, count: number): Promise<void> {
  const llama = await load(dir, 1);
  const model = await llama.loadModel({ modelPath, vocabOnly: true });
  // Byte-level vocabulary: about a token per character; a margin, then exactly `count`.
  const tokens = model.tokenize(promptText(count * 2)).slice(0, count);
  if (tokens.length !== count) throw new Error(`the prompt gave ${tokens.length} tokens, not ${count}`);
  console.log(JSON.stringify(tokens.map(Number)));
  await model.dispose();
  await llama.dispose();
}

async function measure(args: string[]): Promise<void> {
  const [dir, modelPath, tokensFile, threadsArg, contextArg, batchArg, genArg] = args;
  const threads = Number(threadsArg);
  const genTokens = Number(genArg);
  const ids = z.array(z.number().int()).parse(JSON.parse(readFileSync(tokensFile!, "utf8")));
  const llama = await load(dir!, threads);
  const model = await llama.loadModel({ modelPath: modelPath! });
  const context = await model.createContext({
    contextSize: Number(contextArg),
    batchSize: Number(batchArg),
    sequences: 1,
    threads,
    // llama-server is started with -fa off: the same attention code on both sides.
    flashAttention: false,
  });
  const sequence = context.getSequence();
  const prompt = ids as unknown as NodeLlamaCpp.Token[];

  const generate = async (tokens: NodeLlamaCpp.Token[], count: number) => {
    await sequence.clearHistory();
    const started = performance.now();
    let first = NaN;
    let generated = 0;
    for await (const token of sequence.evaluate(tokens, { temperature: 0 })) {
      void token;
      if (++generated === 1) first = performance.now();
      if (generated >= count) break;
    }
    return { started, first, last: performance.now(), generated };
  };
  await generate(prompt.slice(0, 256), 8);
  const run = await generate(prompt, genTokens);
  const ttftMs = run.first - run.started;
  console.log(
    JSON.stringify({
      buildType: llama.buildType,
      promptTokens: prompt.length,
      genTokens: run.generated,
      threads,
      ttftMs,
      promptTokPerS: (prompt.length / ttftMs) * 1000,
      genTokPerS: ((run.generated - 1) / (run.last - run.first)) * 1000,
    } satisfies NodeRunResult),
  );
  await context.dispose();
  await model.dispose();
  await llama.dispose();
}

if (process.argv[1] && import.meta.filename === (await import("node:path")).resolve(process.argv[1])) {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === "tokenize") await tokenize(rest[0]!, rest[1]!, Number(rest[2]));
  else if (mode === "run") await measure(rest);
  else {
    console.error("usage: tsx bench/ttft-node.ts tokenize|run …");
    process.exit(2);
  }
}
