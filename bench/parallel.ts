/**
 * Issue 28: parallel clients through the app's /v1 against llama.cpp's own llama-server built
 * from the same bundle (bench/ttft-build.ts), both driven by the official `openai` client with
 * the same requests: c concurrent clients (default 1, 2, 4, 8) each stream one chat completion
 * of `--tokens` tokens per round (greedy; a different question per client), rounds interleaved
 * app / llama-server, the first side alternating. llama-server gets the app engine's settings
 * as the app reports them (per-sequence context, batch, flash attention, threads, `--no-mmap`
 * when the app read the weights into memory), each slot its own KV cells of the app's
 * per-sequence context (`--no-kv-unified`). Its slots (`--parallel N`): as many as clients in
 * the round (`--server-parallel clients`, the default: llama-server configured for each load,
 * started again for each client count with one uncounted round; with more clients than the app
 * has sequences it has more slots than the app) or as many as the app's context has sequences
 * (`--server-parallel app`: the same KV capacity). Its memory is reported with as many slots as
 * the app's sequences; its start-up rounds (`--starts`) with one slot (`app`: as many), the app
 * in one data folder for all its starts (`--start-folders new`: a new one each time). Per
 * client count and side: total tokens/s (all clients' completion tokens over the round's wall
 * time), p50/p95 request latency, median time to first token; the resident memory of the app's
 * engine and of llama-server once loaded (idle) and after the runs.
 * Where a step's time goes: the app engine's decodes are traced (native/engine/decode-trace.ts)
 * and reported per step size (the decode, and the engine's time between two decodes), beside
 * llama-server's own time per generated token (the `timings` of its last chunk).
 *
 *   npm run bench -- parallel [--size bench] [--tokens 64] [--clients 1,2,4,8] [--runs 3] [--threads 1]
 *                             [--sequences 8] [--server-parallel clients|app] [--server-mmap app|on|off]
 *
 * `--sequences`: the app engine's sequences (MACARON_ENGINE_SEQUENCES; the app's default is up
 * to 8), and the slots of the llama-server whose memory is reported. `--server-mmap`:
 * llama-server's weights mapped or read in as the app's (app, the default), always mapped (on,
 * llama-server's own default) or always read in (off).
 *
 * Writes bench/results/parallel.json.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { decodeSummary, parseDecodeTrace, type DecodeEntry } from "../native/engine/decode-trace";
import { DEFAULT_SEQUENCES } from "../native/engine/model-session";
import { writeFixtures } from "../native/gguf/fixtures";
import { isTinyModelSize } from "../native/gguf/tiny-model";
import { baseModelId, engineSettings, startModes, startServer, type Server } from "./serve";
import type { EngineSettings } from "./serve-direct";
import { median, percentile, report, type BenchRow } from "./stats";
import { ensureLlamaServer } from "./ttft-build";
import { running, startLlamaServer, type LlamaServer, type ServerSettings } from "./ttft-server";

type Side = "app" | "llama-server";

interface Target {
  side: Side;
  client: OpenAI;
  model: string;
}

interface Request {
  ms: number;
  ttftMs: number;
  tokens: number;
  /** llama-server's own time per generated token of this stream (its `timings`), else NaN. */
  stepMs: number;
}

interface Round {
  wallMs: number;
  requests: Request[];
}

const QUESTIONS = [
  "Write a short poem about the sea.",
  "Tell me a story about a cat.",
  "Explain how a bicycle works.",
  "Describe a walk in the mountains.",
  "What makes bread rise?",
  "Write a letter to a friend.",
  "Describe the city at night.",
  "Why is the sky blue?",
];

/** One streamed chat completion; tokens from the usage chunk, else one per content chunk. */
async function request(target: Target, question: string, maxTokens: number): Promise<Request> {
  const started = performance.now();
  const stream = await target.client.chat.completions.create({
    model: target.model,
    messages: [{ role: "user", content: question }],
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  let ttftMs = NaN;
  let chunks = 0;
  let usage: number | null = null;
  let stepMs = NaN;
  for await (const chunk of stream) {
    if (chunk.choices.some((c) => c.delta?.content)) {
      if (Number.isNaN(ttftMs)) ttftMs = performance.now() - started;
      chunks++;
    }
    if (chunk.usage) usage = chunk.usage.completion_tokens;
    // llama-server adds its timings to the last chunk (not in the openai client's types).
    const timings = (chunk as { timings?: { predicted_per_token_ms?: unknown } }).timings;
    if (typeof timings?.predicted_per_token_ms === "number") stepMs = timings.predicted_per_token_ms;
  }
  return { ms: performance.now() - started, ttftMs, tokens: usage ?? chunks, stepMs };
}

/** `clients` requests at once, each with its own question. */
async function round(target: Target, clients: number, maxTokens: number): Promise<Round> {
  const started = performance.now();
  const requests = await Promise.all(
    Array.from({ length: clients }, (_, i) => request(target, QUESTIONS[i % QUESTIONS.length]!, maxTokens)),
  );
  return { wallMs: performance.now() - started, requests };
}

/** Resident memory (MiB) of the processes in `pid`'s process group, by pid. */
function groupRss(pid: number | undefined): Map<number, number> {
  const out = new Map<number, number>();
  if (pid === undefined) return out;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command's closing parenthesis: state, ppid, pgrp, …
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp !== pid) continue;
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1];
      if (kb) out.set(Number(entry), Number(kb) / 1024);
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

/** The app engine (pid, RSS in MiB): the largest process of the server's group other than the server. */
export function appEngine(server: Server): { pid: number | undefined; rss: number } {
  const rss = groupRss(server.pid);
  rss.delete(server.pid!);
  const [pid, mib] = [...rss.entries()].sort((a, b) => b[1] - a[1])[0] ?? [undefined, 0];
  return { pid, rss: mib };
}

/**
 * Transparent huge pages backing a process (MiB, AnonHugePages): whether the weights read into
 * memory got them (llama-patches.ts, weights-huge-pages) depends on the free 2 MiB blocks.
 */
function anonHugeMiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const kb = /AnonHugePages:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** A process's own RSS (MiB): llama-server is one process. */
export function rssOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return kb ? Number(kb) / 1024 : NaN;
}

export interface ParallelOptions {
  size: string;
  tokens: number;
  clients: number[];
  runs: number;
  threads: number;
  sequences: number;
  /** Cold starts per side: spawn → first streamed token (0: none). */
  starts: number;
  /**
   * The app's data folder in the start-up rounds: "kept", one for all its starts (a user's), or
   * "new", a new one at each start (each start is the first in its folder).
   */
  startFolders: "kept" | "new";
  /**
   * llama-server's weights: "app" mapped or read in as the app's engine reports (like for like,
   * the default), "on" always mapped (llama-server's own default), "off" always `--no-mmap`.
   */
  serverMmap: "app" | "on" | "off";
  /** llama-server's slots: as many as the round's clients, or as the app's sequences. */
  serverParallel: "clients" | "app";
}

/** llama-server's `mmap` setting for `--server-mmap` (see ParallelOptions). */
export function serverMmap(
  choice: ParallelOptions["serverMmap"],
  settings: EngineSettings,
): boolean | undefined {
  return choice === "app" ? settings.mmap : choice === "on";
}

export function parseParallelArgs(argv: string[]): ParallelOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      size: { type: "string", default: "bench" },
      tokens: { type: "string", default: "64" },
      clients: { type: "string", default: "1,2,4,8" },
      runs: { type: "string", default: "3" },
      threads: { type: "string", default: "1" },
      sequences: { type: "string", default: String(DEFAULT_SEQUENCES) },
      starts: { type: "string", default: "3" },
      "start-folders": { type: "string", default: "kept" },
      "server-mmap": { type: "string", default: "app" },
      "server-parallel": { type: "string", default: "clients" },
    },
  });
  if (!isTinyModelSize(values.size)) throw new Error(`--size ${values.size}: tiny, small or bench`);
  const clients = values.clients.split(",").map(Number);
  const positive = (n: number) => Number.isInteger(n) && n > 0;
  if (!clients.every(positive))
    throw new Error(`--clients ${values.clients}: positive integers, comma-separated`);
  const options = {
    size: values.size,
    tokens: Number(values.tokens),
    clients,
    runs: Number(values.runs),
    threads: Number(values.threads),
    sequences: Number(values.sequences),
    starts: Number(values.starts),
    startFolders: values["start-folders"] as ParallelOptions["startFolders"],
    serverMmap: values["server-mmap"] as ParallelOptions["serverMmap"],
    serverParallel: values["server-parallel"] as ParallelOptions["serverParallel"],
  };
  if (!["kept", "new"].includes(options.startFolders))
    throw new Error(`--start-folders ${values["start-folders"]}: kept or new`);
  if (!["clients", "app"].includes(options.serverParallel))
    throw new Error(`--server-parallel ${values["server-parallel"]}: clients or app`);
  if (!["app", "on", "off"].includes(options.serverMmap))
    throw new Error(`--server-mmap ${values["server-mmap"]}: app, on or off`);
  if (![options.tokens, options.runs, options.threads, options.sequences].every(positive))
    throw new Error("--tokens, --runs, --threads and --sequences take positive integers");
  if (!Number.isInteger(options.starts) || options.starts < 0)
    throw new Error("--starts takes a whole number (0: no start-up rounds)");
  return options;
}

/** Rows per client count: each side's numbers, then the app's over llama-server's. */
export function summarize(results: Map<number, Record<Side, Round[]>>): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const [clients, sides] of results) {
    const of = (side: Side) => {
      const rounds = sides[side];
      const requests = rounds.flatMap((r) => r.requests);
      const tokens = (r: Round) => r.requests.reduce((sum, q) => sum + q.tokens, 0);
      return {
        tokPerS: median(rounds.map((r) => (tokens(r) / r.wallMs) * 1000)),
        p50Ms: median(requests.map((q) => q.ms)),
        p95Ms: percentile(
          requests.map((q) => q.ms),
          95,
        ),
        ttftMs: median(requests.map((q) => q.ttftMs)),
        tokensPerRequest: median(requests.map((q) => q.tokens)),
      };
    };
    const app = of("app");
    const server = of("llama-server");
    rows.push(
      { name: `${clients} clients, app /v1`, ...app },
      { name: `${clients} clients, llama-server`, ...server },
      {
        name: `${clients} clients, app / llama-server`,
        tokPerS: app.tokPerS / server.tokPerS,
        p50Ms: app.p50Ms / server.p50Ms,
        p95Ms: app.p95Ms / server.p95Ms,
        ttftMs: app.ttftMs / server.ttftMs,
        tokensPerRequest: null,
      },
    );
    const serverSteps = sides["llama-server"].flatMap((r) => r.requests.map((q) => q.stepMs));
    const reported = serverSteps.filter((ms) => Number.isFinite(ms));
    if (reported.length > 0)
      rows.push({
        name: `${clients} clients, llama-server: ms per generated token of a stream (its timings)`,
        median: median(reported),
        mean: reported.reduce((a, b) => a + b, 0) / reported.length,
      });
  }
  return rows;
}

/**
 * Rows of the app engine's decode trace (native/engine/decode-trace.ts), for the batch sizes of
 * generation steps (1 to `sequences` tokens) with at least 20 decodes: the decode itself and the
 * engine's time between two such decodes, and of that time the part until the last token sampled
 * from the decode before came back (node-llama-cpp's sampling: a thread-pool job per sequence).
 * Decode and gap means added are the app's time per step, to set beside llama-server's own time
 * per generated token.
 */
export function traceRows(entries: readonly DecodeEntry[], sequences: number): BenchRow[] {
  return decodeSummary(entries)
    .filter((s) => s.tokens <= sequences && s.decodes >= 20)
    .map((s) => ({
      name: `app engine, ${s.tokens}-token steps, all client counts: decode, between decodes, of which sampling (ms)`,
      decodes: s.decodes,
      decodeMedian: s.decodeMedianMs,
      decodeMean: s.decodeMeanMs,
      gapMedian: s.gapMedianMs,
      gapMean: s.gapMeanMs,
      sampledMedian: s.sampleMedianMs,
      sampledMean: s.sampleMeanMs,
      stepMean: s.decodeMeanMs + s.gapMeanMs,
    }));
}

/** One cold start's phases (ms from spawn): ready to take requests, first streamed token. */
interface Start {
  readyMs: number;
  firstTokenMs: number;
}

/** The counted starts of each side, and the first start of each (not counted). */
interface Starts {
  counted: Record<Side, Start[]>;
  first: Record<Side, Start>;
  /** The app's data folder in the counted starts (ParallelOptions.startFolders). */
  folders: ParallelOptions["startFolders"];
}

/**
 * Spawn → first streamed token, each side started cold `starts` times, interleaved with the
 * first side alternating: the app's built server (spawn → "listening", then the base model's id
 * from /v1/models and a streamed request, as a client does) and llama-server (spawn → /health
 * 200 polled every 5 ms, then /v1/models and the same request). The app loads its model before it
 * listens; the phases say where its time goes. The model file is in the page cache for both.
 * The app keeps one data folder across its starts, as a user's machine does (what it keeps there
 * between starts: the chat format of the model, native/engine/chat-format-cache.ts); its first
 * start, in the new folder, and llama-server's first are run before the counted ones and
 * reported on their own. With `startFolders` "new", each counted start of the app is in a new
 * folder too.
 */
async function measureStarts(
  model: string,
  settings: EngineSettings,
  binary: string,
  options: ParallelOptions,
): Promise<Starts> {
  const dataDir = mkdtempSync(join(tmpdir(), "macaron-bench-starts-"));
  // One request: llama-server with one slot (configured for the load, as in the rounds), or as
  // many as the app's sequences with --server-parallel app (then it allocates them all at start,
  // where the app starts with one and grows).
  const slots = startSlots(options, settings);
  let counting = false;
  const start = async (side: Side): Promise<Start> => {
    if (side === "app") {
      const folder = options.startFolders === "new" && counting ? undefined : dataDir;
      const s = await startServer(startModes(undefined)[0]!, model, options.threads, folder);
      try {
        const target: Target = {
          side,
          client: new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.key }),
          model: await baseModelId(s),
        };
        const sent = performance.now();
        const r = await request(target, QUESTIONS[0]!, 8);
        return { readyMs: s.listeningAt - s.startedAt, firstTokenMs: sent + r.ttftMs - s.startedAt };
      } finally {
        await s.stop();
      }
    }
    const spawned = performance.now();
    const server = await startLlamaServer(
      serverSettings(binary, model, options, settings, slots),
      120_000,
      5,
    );
    try {
      const ready = performance.now();
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none" });
      // As on the app's side: the model's id from /v1/models first, as a client does.
      const listed = await client.models.list();
      const target: Target = { side, client, model: listed.data[0]?.id ?? "bench" };
      const sent = performance.now();
      const r = await request(target, QUESTIONS[0]!, 8);
      return { readyMs: ready - spawned, firstTokenMs: sent + r.ttftMs - spawned };
    } finally {
      await server.stop();
    }
  };
  try {
    const first = { app: await start("app"), "llama-server": await start("llama-server") };
    const counted: Record<Side, Start[]> = { app: [], "llama-server": [] };
    counting = true;
    for (let i = 0; i < options.starts; i++) {
      const order: Side[] = i % 2 === 0 ? ["app", "llama-server"] : ["llama-server", "app"];
      for (const side of order) counted[side].push(await start(side));
    }
    return { counted, first, folders: options.startFolders };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** llama-server with the app engine's settings and `parallel` slots of its per-sequence context. */
function serverSettings(
  binary: string,
  model: string,
  options: ParallelOptions,
  settings: EngineSettings,
  parallel: number,
): ServerSettings {
  return {
    binary,
    model,
    threads: options.threads,
    contextSize: settings.contextSize * parallel,
    batchSize: settings.batchSize,
    parallel,
    flashAttention: settings.flashAttention,
    mmap: serverMmap(options.serverMmap, settings),
  };
}

/** llama-server's slots for the start-up rounds (see measureStarts). */
export function startSlots(
  options: Pick<ParallelOptions, "serverParallel">,
  settings: EngineSettings,
): number {
  return options.serverParallel === "clients" ? 1 : settings.sequences;
}

/** Rows of the start-up rounds: medians per side, then the app's over llama-server's. */
export function startRows({ counted: starts, first, folders }: Starts): BenchRow[] {
  const app = folders === "new" ? "app, each start in a new data folder" : "app";
  const med = (side: Side, key: keyof Start) => median(starts[side].map((s) => s[key]));
  const row = (name: string, side: Side): BenchRow => ({
    name,
    p50: med(side, "firstTokenMs"),
    p95: percentile(
      starts[side].map((s) => s.firstTokenMs),
      95,
    ),
    ready: med(side, "readyMs"),
  });
  return [
    row(`spawn → first token, ${app} (ms; ready = listening)`, "app"),
    row("spawn → first token, llama-server (ms; ready = /health 200)", "llama-server"),
    {
      name: `spawn → first token, ${app} / llama-server`,
      p50: med("app", "firstTokenMs") / med("llama-server", "firstTokenMs"),
      ready: med("app", "readyMs") / med("llama-server", "readyMs"),
    },
    {
      name: "first start (app: in a new data folder), app / llama-server (ms)",
      app: first.app.firstTokenMs,
      llamaServer: first["llama-server"].firstTokenMs,
      p50: first.app.firstTokenMs / first["llama-server"].firstTokenMs,
    },
  ];
}

export async function benchParallel(options: ParallelOptions): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-parallel-"));
  let app: Server | null = null;
  let llama: LlamaServer | null = null;
  try {
    const { basePath: model } = await writeFixtures(dir, { size: options.size as "bench" });
    const built = await ensureLlamaServer();
    // The server's engine inherits it (native/engine/model-session.ts, sequencesSetting).
    process.env.MACARON_ENGINE_SEQUENCES = String(options.sequences);
    // Its decodes, written when it ends (decode-trace.ts); the start-up rounds are not traced.
    const traceFile = join(dir, "decode-trace.txt");
    process.env.MACARON_ENGINE_DECODE_TRACE = traceFile;
    app = await startServer(startModes(undefined)[0]!, model, options.threads);
    const settings: EngineSettings = await engineSettings(app);
    const startServerWith = (parallel: number) =>
      startLlamaServer(serverSettings(built.binary, model, options, settings, parallel));
    const serverTarget = (server: LlamaServer): Target => ({
      side: "llama-server",
      client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none" }),
      model: "bench",
    });
    // The same KV capacity as the app's context: its memory is the one reported.
    llama = await startServerWith(settings.sequences);
    const targets: Record<Side, Target> = {
      app: { side: "app", client: new OpenAI({ baseURL: `${app.url}/v1`, apiKey: app.key }), model: "" },
      "llama-server": serverTarget(llama),
    };
    targets.app.model = await baseModelId(app);
    const engine = appEngine(app);
    const idle = { app: engine.rss, "llama-server": rssOf(llama.pid) };
    const hugePages = { app: anonHugeMiB(engine.pid), "llama-server": anonHugeMiB(llama.pid) };
    // Uncounted warm-up, two rounds on each side with the most clients. The app's context starts
    // with one sequence and grows to its count when a request finds it taken
    // (native/engine/model-session.ts, grow): the first round pays for that, and is reported.
    const most = Math.max(...options.clients);
    const firstRound = {
      app: await round(targets.app, most, options.tokens),
      "llama-server": await round(targets["llama-server"], most, options.tokens),
    };
    for (const side of ["app", "llama-server"] as const) await round(targets[side], most, options.tokens);
    const warmedUp = performance.timeOrigin + performance.now();
    const results = new Map<number, Record<Side, Round[]>>();
    let turn = 0;
    for (const clients of options.clients) {
      const got: Record<Side, Round[]> = { app: [], "llama-server": [] };
      const parallel = options.serverParallel === "clients" ? clients : settings.sequences;
      const own = parallel === settings.sequences ? null : await startServerWith(parallel);
      try {
        const sides: Record<Side, Target> = {
          ...targets,
          ...(own ? { "llama-server": serverTarget(own) } : {}),
        };
        // A server started for this client count gets one uncounted round first (the first
        // server had two, with the most clients).
        if (own) await round(sides["llama-server"], clients, options.tokens);
        for (let r = 0; r < options.runs; r++) {
          // Interleaved, the first side alternating: neither always runs on a cooler machine.
          const order: Side[] = turn++ % 2 === 0 ? ["app", "llama-server"] : ["llama-server", "app"];
          for (const side of order) got[side].push(await round(sides[side], clients, options.tokens));
        }
      } finally {
        await own?.stop();
      }
      results.set(clients, got);
      console.error(`parallel: ${clients} clients done (llama-server --parallel ${parallel})`);
    }
    const after = { app: appEngine(app).rss, "llama-server": rssOf(llama.pid) };
    const rows = summarize(results);
    await app.stop();
    await llama.stop();
    app = null;
    llama = null;
    delete process.env.MACARON_ENGINE_DECODE_TRACE;
    // The warm-up rounds are left out (the trace's times are since the epoch, as warmedUp is).
    const decodes = parseDecodeTrace(existsSync(traceFile) ? readFileSync(traceFile, "utf8") : "");
    const stepRows = traceRows(
      decodes.filter((d) => d.start >= warmedUp),
      settings.sequences,
    );
    if (stepRows.length === 0) console.error(`parallel: no decodes traced in ${traceFile}`);
    rows.push(...stepRows);
    if (options.starts > 0) {
      // After the load rounds, with nothing else of the benchmark running.
      const starts = await measureStarts(model, settings, built.binary, options);
      console.error("parallel: start-up rounds done");
      rows.push(...startRows(starts));
    }
    const wall = (side: Side) => firstRound[side].wallMs;
    rows.push(
      {
        name: `first round of ${most} clients after the load, wall ms (app: the context grows)`,
        app: wall("app"),
        llamaServer: wall("llama-server"),
        p50: wall("app") / wall("llama-server"),
      },
      { name: "RSS idle, MiB (app engine / llama-server)", app: idle.app, llamaServer: idle["llama-server"] },
      { name: "RSS after the runs, MiB", app: after.app, llamaServer: after["llama-server"] },
      {
        name: "transparent huge pages once loaded, MiB (AnonHugePages)",
        app: hugePages.app,
        llamaServer: hugePages["llama-server"],
      },
    );
    report("parallel", rows, {
      ...options,
      engineSettings: settings,
      llamaServer: {
        commit: built.commit,
        parallel: options.serverParallel === "clients" ? "as many as clients" : settings.sequences,
        // The server whose memory the RSS rows report: the app's KV capacity.
        rssServerParallel: settings.sequences,
        startParallel: startSlots(options, settings),
        mmap: serverMmap(options.serverMmap, settings) ?? true,
      },
      rss: { idle, after },
      hugePages,
    });
  } finally {
    await app?.stop();
    await llama?.stop();
    await Promise.all([...running].map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function main(argv: string[]): Promise<void> {
  await benchParallel(parseParallelArgs(argv));
}
