/**
 * Issue 28: /v1/embeddings through the official `openai` client, the app against llama.cpp's own
 * llama-server built from the same bundle (bench/ttft-build.ts), on the ~99M bench model (F16,
 * generated: nothing was tuned on these texts). Three sides, rounds interleaved with the first
 * side rotating: the app as it ships (texts batched into shared decodes), the app with
 * MACARON_EMBEDDING_BATCH=0 (one text per decode, as before batching) and llama-server with
 * `--embeddings` and the app's embedding settings (2,048 cells shared by 8 slots, `-kvu`, batch
 * 2,048, flash attention auto, the same threads). Other llama-server settings gave wrong vectors
 * here: 32 slots in 2,048 cells (lowest cosine 0.88 on medium texts), a cache per slot (0.43),
 * its default slots on long texts (0.58); 8 unified slots and 1 slot agreed with the app (1.0). One request per round with all of a shape's
 * texts: many short ones, many medium ones, a few long ones. Per shape and side: texts/s
 * (median, min–max) and the app over llama-server; and, as a check that the answers are the same
 * and not only as fast, the lowest cosine between an app vector and llama-server's for the same
 * text (1 = the same direction); the resident memory of the app's engines and of llama-server
 * once loaded and after the runs.
 *
 *   npm run bench -- embeddings-server [--threads 1,2] [--runs 5]
 *
 * Writes bench/results/embeddings-server.json.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { writeFixtures } from "../native/gguf/fixtures";
import { baseModelId, startModes, startServer, type Server } from "./serve";
import { median, report, type BenchRow } from "./stats";
import { ensureLlamaServer } from "./ttft-build";
import { appEngine, rssOf } from "./parallel";
import { freePort, running } from "./ttft-server";
import { spawn } from "node:child_process";

type Side = "app" | "app, one per decode" | "llama-server";
const SIDES: readonly Side[] = ["app", "app, one per decode", "llama-server"];

const WORDS = (
  "river stone lamp paper window garden bread coffee morning music letter engine harbour " +
  "mountain question answer travel winter summer kitchen market street bridge forest"
).split(" ");

/** `n` texts of `min` to `max` words (deterministic, different per shape). */
function texts(n: number, min: number, max: number, seed: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const words = min + ((i * 37 + seed) % (max - min + 1));
    return Array.from({ length: words }, (_, w) => WORDS[(i * 11 + w * 7 + seed) % WORDS.length]).join(" ");
  });
}

export const SHAPES = [
  { name: "64 short texts (1–4 words)", input: texts(64, 1, 4, 1) },
  { name: "32 medium texts (8–30 words)", input: texts(32, 8, 30, 2) },
  { name: "4 long texts (120–180 words)", input: texts(4, 120, 180, 3) },
];

/** llama-server with --embeddings and the app's embedding context's settings. */
async function startEmbeddingServer(binary: string, model: string, threads: number) {
  const port = await freePort();
  const args = [
    ["-m", model, "--host", "127.0.0.1", "--port", String(port)],
    ["-t", String(threads), "-tb", String(threads)],
    ["-c", "2048", "-b", "2048", "-ub", "2048", "-np", "8", "-kvu", "-fa", "auto"],
    ["--embeddings", "--cache-ram", "0", "--fit", "off", "--no-webui"],
  ].flat();
  const child = spawn(binary, args, { stdio: ["ignore", "ignore", "ignore"] });
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
  const server = {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      running.delete(server);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
  running.add(server);
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`llama-server exited (${child.exitCode})`);
    if (
      await fetch(`${server.url}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return server;
    if (tries > 1200) throw new Error("llama-server not ready in 120 s");
    await new Promise((r) => setTimeout(r, 100));
  }
}

const cosine = (a: number[], b: number[]) => {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb);
};

export async function benchEmbeddingsServer(options: { threads: number[]; runs: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-embeddings-server-"));
  const stops: (() => Promise<void>)[] = [];
  const rows: BenchRow[] = [];
  try {
    const { basePath: model } = await writeFixtures(dir, { size: "bench" });
    const built = await ensureLlamaServer();
    for (const threads of options.threads) {
      const start = async (batch: string): Promise<Server> => {
        process.env.MACARON_EMBEDDING_BATCH = batch;
        const server = await startServer(startModes(undefined)[0]!, model, threads);
        stops.push(() => server.stop());
        return server;
      };
      const app = await start("1");
      const single = await start("0");
      delete process.env.MACARON_EMBEDDING_BATCH;
      const llama = await startEmbeddingServer(built.binary, model, threads);
      stops.push(() => llama.stop());
      const appClient = (s: Server) => ({
        client: new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.key }),
        model: "",
      });
      const sides: Record<Side, { client: OpenAI; model: string }> = {
        app: { ...appClient(app), model: await baseModelId(app) },
        "app, one per decode": { ...appClient(single), model: await baseModelId(single) },
        "llama-server": {
          client: new OpenAI({ baseURL: `${llama.url}/v1`, apiKey: "none" }),
          model: "bench",
        },
      };
      const rss = (): Record<Side, number> => ({
        app: appEngine(app).rss,
        "app, one per decode": appEngine(single).rss,
        "llama-server": rssOf(llama.pid),
      });
      const idle = rss();
      let turn = 0;
      for (const shape of SHAPES) {
        const embed = async (side: Side) =>
          (await sides[side].client.embeddings.create({ model: sides[side].model, input: shape.input })).data
            .sort((a, b) => a.index - b.index)
            .map((d) => d.embedding);
        // Uncounted: the embedding contexts are created on first use; the answers compared.
        const vectors = Object.fromEntries(
          await Promise.all(SIDES.map(async (s) => [s, await embed(s)])),
        ) as Record<Side, number[][]>;
        const agree = (side: Side) =>
          Math.min(...vectors[side].map((v, i) => cosine(v, vectors["llama-server"][i]!)));
        const rates: Record<Side, number[]> = { app: [], "app, one per decode": [], "llama-server": [] };
        for (let r = 0; r < options.runs; r++) {
          const first = turn++ % SIDES.length;
          for (const side of [...SIDES.slice(first), ...SIDES.slice(0, first)]) {
            const started = performance.now();
            await embed(side);
            rates[side].push(shape.input.length / ((performance.now() - started) / 1000));
          }
        }
        const tokens = (
          await sides["llama-server"].client.embeddings.create({ model: "bench", input: shape.input })
        ).usage.prompt_tokens;
        for (const side of SIDES)
          rows.push({
            name: `${threads} thread${threads > 1 ? "s" : ""}, ${shape.name}, ${side}`,
            tokens,
            textsPerS: median(rates[side]),
            min: Math.min(...rates[side]),
            max: Math.max(...rates[side]),
            vsLlamaServer: median(rates[side]) / median(rates["llama-server"]),
            minCosineToLlamaServer: side === "llama-server" ? 1 : agree(side),
          });
        console.error(`embeddings-server: ${threads} threads, ${shape.name} done`);
      }
      const after = rss();
      for (const side of SIDES)
        rows.push({
          name: `${threads} thread${threads > 1 ? "s" : ""}, RSS MiB, ${side} (app: its engine)`,
          idle: idle[side],
          afterRuns: after[side],
        });
      while (stops.length > 0) await stops.pop()!();
    }
  } finally {
    while (stops.length > 0) await stops.pop()!().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  report("embeddings-server", rows, {
    ...options,
    llamaServer: "--embeddings -c 2048 -b 2048 -ub 2048 -np 8 -kvu -fa auto",
  });
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { threads: { type: "string", default: "1,2" }, runs: { type: "string", default: "5" } },
    allowPositionals: true,
  });
  await benchEmbeddingsServer({
    threads: values.threads.split(",").map(Number),
    runs: Math.max(1, Number(values.runs)),
  });
}
