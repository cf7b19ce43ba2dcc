/**
 * Issue 18: time to first token on a long prompt, node-llama-cpp against llama.cpp's own
 * server built from the same source. Three sides, same GGUF, threads, context, batch and the
 * same prompt token ids (tokenized once with the model's tokenizer):
 *   A  node-llama-cpp with its prebuilt binaries (the app's package, build "never");
 *   B  node-llama-cpp with a local build (a copy under node_modules/.macaron-native-build,
 *      built by the app's own build code; reused when one is kept there);
 *   C  llama-server built from node-llama-cpp's llama.cpp bundle with node-llama-cpp's CPU
 *      options (cached under node_modules/.macaron-llama-server per bundle commit).
 * Each measurement is a fresh process (model loaded, one short untimed warm-up, then the timed
 * run on an empty KV cache: no prompt cache anywhere), in rotating order A/B/C, B/C/A, C/A/B:
 * the shared machine's load drifts. Medians, and speed ratios against llama-server measured in
 * the same run.
 *
 *   npm run bench -- ttft [--runs 3] [--threads 1] [--prompt-tokens 2048] [--gen-tokens 128]
 *                         [--size bench] [--context 4096] [--batch 512] [--keep]
 *
 * Writes bench/results/ttft.json (ttft-<n>threads.json for other thread counts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { writeFixtures } from "../native/gguf/fixtures";
import { isTinyModelSize } from "../native/gguf/tiny-model";
import { hasLocalBuild, nodeLlamaCppDir } from "../electron/core/engine/native-build";
import { median, report, type BenchRow } from "./stats";
import { ensureLlamaServer, ensureLocalBuild, LOCAL_COPY } from "./ttft-build";
import { NodeRunResult } from "./ttft-node";
import { completion, running, startLlamaServer, type ServerSettings } from "./ttft-server";

export type Side = "prebuilt" | "local" | "llama-server";
const SIDES: readonly Side[] = ["prebuilt", "local", "llama-server"];

/** Round r starts at side r mod 3: every side goes first, second and last equally often. */
export function rotation(round: number): Side[] {
  return SIDES.map((_, i) => SIDES[(round + i) % SIDES.length]!);
}

export const TtftOptions = z.object({
  runs: z.coerce.number().int().min(1),
  threads: z.coerce.number().int().min(1),
  promptTokens: z.coerce.number().int().min(256),
  genTokens: z.coerce.number().int().min(2),
  size: z.string().refine(isTinyModelSize, "tiny, small or bench"),
  context: z.coerce.number().int().min(512),
  batch: z.coerce.number().int().min(32),
  keep: z.boolean(),
});
export type TtftOptions = z.infer<typeof TtftOptions>;

export function parseTtftArgs(argv: string[]): TtftOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: "string", default: "3" },
      threads: { type: "string", default: "1" },
      "prompt-tokens": { type: "string", default: "2048" },
      "gen-tokens": { type: "string", default: "128" },
      size: { type: "string", default: "bench" },
      context: { type: "string", default: "4096" },
      batch: { type: "string", default: "512" },
      keep: { type: "boolean", default: false },
    },
  });
  const options = TtftOptions.parse({
    ...values,
    promptTokens: values["prompt-tokens"],
    genTokens: values["gen-tokens"],
  });
  if (options.promptTokens + options.genTokens > options.context)
    throw new Error(`--context ${options.context} holds fewer than the prompt and generated tokens`);
  return options;
}

export interface Measured {
  ttftMs: number;
  promptTokPerS: number;
  genTokPerS: number;
}

/**
 * Medians per side, then each side's speed over llama-server's (TTFT inverted: >1 is faster):
 * of the medians, and the median of each round's own ratio. The per-round ratio compares runs
 * seconds apart, so a load spike on the shared machine that hits one round hits all its sides.
 */
export function summarize(results: Record<Side, Measured[]>): { rows: BenchRow[]; localVsServer: Measured } {
  const med = (rows: Measured[]): Measured => ({
    ttftMs: median(rows.map((r) => r.ttftMs)),
    promptTokPerS: median(rows.map((r) => r.promptTokPerS)),
    genTokPerS: median(rows.map((r) => r.genTokPerS)),
  });
  const vs = (m: Measured, server: Measured): Measured => ({
    ttftMs: server.ttftMs / m.ttftMs,
    promptTokPerS: m.promptTokPerS / server.promptTokPerS,
    genTokPerS: m.genTokPerS / server.genTokPerS,
  });
  const perRound = (side: Side): Measured =>
    med(results[side].map((m, round) => vs(m, results["llama-server"][round]!)));
  const server = med(results["llama-server"]);
  const prebuilt = med(results.prebuilt);
  const local = med(results.local);
  const localVsServer = perRound("local");
  return {
    rows: [
      { name: "A prebuilt (node-llama-cpp)", ...prebuilt },
      { name: "B local build (node-llama-cpp)", ...local },
      { name: "C llama-server (same source)", ...server },
      { name: "B / C speed, medians", ...vs(local, server) },
      { name: "A / C speed, medians", ...vs(prebuilt, server) },
      { name: "B / C speed, per round", ...localVsServer },
      { name: "A / C speed, per round", ...perRound("prebuilt") },
    ],
    localVsServer,
  };
}

const children = new Set<ChildProcess>();

/** A tsx child's last stdout line, as JSON. */
function tsxJson(script: string, args: string[]): Promise<unknown> {
  const tsx = createRequire(import.meta.url).resolve("tsx");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", tsx, join(import.meta.dirname, script), ...args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.add(child);
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (out += chunk));
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      children.delete(child);
      if (code !== 0) return reject(new Error(`${script} ${args[0]} exited ${signal ?? code}`));
      try {
        resolve(JSON.parse(out.trim().split("\n").at(-1)!));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

async function stopAll(): Promise<void> {
  for (const child of children) child.kill("SIGKILL");
  await Promise.all([...running].map((s) => s.stop()));
}

export async function main(argv: string[]): Promise<void> {
  const options = parseTtftArgs(argv);
  const prebuiltDir = nodeLlamaCppDir();
  if (hasLocalBuild(prebuiltDir))
    throw new Error(
      "The app's node-llama-cpp has a local build: side A would not run the prebuilt binaries.",
    );
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-ttft-"));
  // Ctrl-C skips finally blocks: kill llama-server and the measuring children first.
  const onSignal = () => void stopAll().finally(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let builtLocal = false;
  try {
    const model = (await writeFixtures(dir, { size: options.size })).basePath;
    const server = await ensureLlamaServer();
    console.log(
      `llama-server ${server.binary} (bundle ${server.commit.slice(0, 12)})` +
        (server.buildSeconds === null ? ", cached" : `, built in ${server.buildSeconds.toFixed(0)} s`),
    );
    const local = await ensureLocalBuild();
    builtLocal = local.buildSeconds !== null;
    console.log(
      `local build ${local.packageDir}` +
        (local.buildSeconds === null
          ? ", kept from before"
          : `, built in ${local.buildSeconds.toFixed(0)} s`),
    );

    const ids = z
      .array(z.number().int())
      .parse(await tsxJson("ttft-node.ts", ["tokenize", prebuiltDir, model, String(options.promptTokens)]));
    const tokensFile = join(dir, "prompt-tokens.json");
    writeFileSync(tokensFile, JSON.stringify(ids));

    const settings: ServerSettings = {
      binary: server.binary,
      model,
      threads: options.threads,
      contextSize: options.context,
      batchSize: options.batch,
    };
    const node = async (side: "prebuilt" | "local"): Promise<Measured> => {
      const result = NodeRunResult.parse(
        await tsxJson("ttft-node.ts", [
          "run",
          side === "prebuilt" ? prebuiltDir : local.packageDir,
          model,
          tokensFile,
          String(options.threads),
          String(options.context),
          String(options.batch),
          String(options.genTokens),
        ]),
      );
      // The point of A and B: make sure each ran the binaries it is named after.
      const expected = side === "prebuilt" ? "prebuilt" : "localBuild";
      if (result.buildType !== expected)
        throw new Error(`side ${side} ran ${result.buildType}, not ${expected}`);
      if (result.promptTokens !== ids.length)
        throw new Error(`side ${side} evaluated ${result.promptTokens} tokens`);
      return result;
    };
    const llamaServer = async (): Promise<
      Measured & { serverPromptTokPerS: number; serverGenTokPerS: number }
    > => {
      const s = await startLlamaServer(settings);
      try {
        await completion(s, ids.slice(0, 256), 8);
        return await completion(s, ids, options.genTokens);
      } finally {
        await s.stop();
      }
    };

    const results: Record<Side, Measured[]> = { prebuilt: [], local: [], "llama-server": [] };
    const raw: Array<{ round: number; side: Side } & Measured> = [];
    for (let round = 0; round < options.runs; round++) {
      for (const side of rotation(round)) {
        const result = side === "llama-server" ? await llamaServer() : await node(side);
        results[side].push(result);
        raw.push({ round, side, ...result });
        console.log(
          `round ${round + 1}/${options.runs} ${side.padEnd(12)} TTFT ${(result.ttftMs / 1000).toFixed(2)} s,` +
            ` prompt ${result.promptTokPerS.toFixed(0)} tok/s, gen ${result.genTokPerS.toFixed(1)} tok/s`,
        );
      }
    }
    const { rows, localVsServer } = summarize(results);
    const goal = 0.95;
    report(options.threads === 1 ? "ttft" : `ttft-${options.threads}threads`, rows, {
      runs: options.runs,
      threads: options.threads,
      promptTokens: ids.length,
      genTokens: options.genTokens,
      contextSize: options.context,
      batchSize: options.batch,
      model: `base-${options.size}.gguf`,
      llamaCppBundleCommit: server.commit,
      goal: {
        text: `local build >= ${goal}x llama-server (TTFT, prompt and generation speed; median of per-round ratios)`,
        met: Object.values(localVsServer).every((v) => v >= goal),
      },
      raw,
    });
    console.log(
      `goal local >= ${goal}x llama-server: TTFT ${localVsServer.ttftMs.toFixed(2)}x, prompt ` +
        `${localVsServer.promptTokPerS.toFixed(2)}x, gen ${localVsServer.genTokPerS.toFixed(2)}x`,
    );
  } finally {
    await stopAll();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    rmSync(dir, { recursive: true, force: true });
    // A copy found kept is someone's: left as found. One built here goes unless --keep.
    if (builtLocal && !options.keep) rmSync(join(LOCAL_COPY, "..", ".."), { recursive: true, force: true });
  }
}
