/**
 * Headless mode's numbers, measured in one run on one model:
 *
 * - start-up: spawning the server to "listening" and to the first streamed token, for each way
 *   of starting it, interleaved (built out/main/cli.js as `npm start`/`npm run serve` run it;
 *   the sources under tsx; with `--before DIR`, the sources of another checkout, e.g. an older
 *   commit's `git archive`, under this checkout's tsx);
 * - throughput: tokens/s through /v1 (SSE and non-streaming) against node-llama-cpp called
 *   directly in this process with what the engine uses (the same backend, context settings,
 *   chat wrapper, history and sampling; one warm sequence reused, as the engine reuses its
 *   slot), in interleaved rounds (direct, SSE, non-stream; then turned by one, …) after an uncounted
 *   warm-up;
 *   ratios per round, then their median. The ratio is the harness overhead: process hop, IPC,
 *   HTTP, SSE.
 *
 *   npm run bench -- serve [--size tiny|small|bench] [--runs N] [--tokens N] [--starts N] [--before DIR]
 *                          [--order server-first|direct-first|both]
 *
 * Every server runs in its own process group with a data folder named macaron-bench-*: it is
 * stopped with its engine however the benchmark ends (`pgrep -f macaron-bench` finds nothing).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { LlamaChat, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import type { ChatTurn, KvCacheType } from "../common/engine-protocol";
import { writeFixtures } from "../native/gguf/fixtures";
import type { TinyModelSize } from "../native/gguf/tiny-model";
import { chooseChatWrapper } from "../native/engine/chat-wrapper";
import { toChatHistory } from "../native/engine/history";
import { engineThreads, kvCacheTypes, loadLlamaBackend } from "../native/engine/llama-backend";
import { samplerSettings } from "../native/engine/sampling";
import { median, percentile, report, type BenchRow } from "./stats";

const root = resolve(import.meta.dirname, "..");
const PROMPT = "Write a short poem about the sea.";
/** What /v1/chat/completions hands the engine for one user message: no system turn is added. */
const HISTORY: ChatTurn[] = [{ role: "user", text: PROMPT }];
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
/** A server that is not listening by then counts as failed (a bench model loads in seconds). */
const START_TIMEOUT_MS = 120_000;

interface StartMode {
  name: string;
  /** Node arguments before the server's own. */
  entry: string[];
}

function startModes(before: string | undefined): StartMode[] {
  const built = join(root, "out", "main", "cli.js");
  if (!existsSync(built)) throw new Error("out/main/cli.js is missing: run `npm run build` first");
  const modes: StartMode[] = [
    { name: "built (node out/main/cli.js)", entry: [built] },
    {
      name: "sources (tsx electron/server/cli.ts)",
      entry: ["--import", tsxLoader, join(root, "electron/server/cli.ts")],
    },
  ];
  if (before) {
    const cli = join(resolve(before), "electron/server/cli.ts");
    if (!existsSync(cli)) throw new Error(`--before ${before}: no electron/server/cli.ts there`);
    modes.push({ name: `before (tsx ${before})`, entry: ["--import", tsxLoader, cli] });
  }
  return modes;
}

interface Server {
  url: string;
  key: string;
  startedAt: number;
  listeningAt: number;
  stop(): Promise<void>;
}

/** Servers not stopped yet: killed, with their engines, when this process ends in any way. */
const live = new Set<ChildProcess>();
const killGroup = (proc: ChildProcess, signal: NodeJS.Signals) => {
  try {
    if (proc.pid !== undefined) process.kill(-proc.pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
};
process.once("exit", () => {
  for (const proc of live) killGroup(proc, "SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const proc of live) killGroup(proc, "SIGKILL");
    process.exit(130);
  });
}

/** Whether any process of the group led by `pid` is still alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function startServer(mode: StartMode, model: string, threads: number): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), "macaron-bench-"));
  const startedAt = performance.now();
  const proc = spawn(
    process.execPath,
    [...mode.entry, "--port", "0", "--data-dir", dataDir, "--model", model],
    {
      cwd: root,
      env: { ...process.env, MACARON_ENGINE_THREADS: String(threads) },
      stdio: ["ignore", "pipe", "inherit"],
      // Its own process group: the engine it forks is stopped with it (kill -PGID).
      detached: true,
    },
  );
  live.add(proc);
  const exited = new Promise<void>((ok) => proc.once("exit", () => ok()));
  const stop = async () => {
    if (live.has(proc)) {
      killGroup(proc, "SIGTERM");
      const timer = setTimeout(() => killGroup(proc, "SIGKILL"), 10_000);
      await exited;
      // The engine leaves after its parent: wait until the whole group is gone.
      while (proc.pid !== undefined && groupAlive(proc.pid)) await new Promise((ok) => setTimeout(ok, 20));
      clearTimeout(timer);
      live.delete(proc);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    let key = "";
    const url = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`${mode.name}: not listening after ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      createInterface({ input: proc.stdout }).on("line", (line) => {
        // The generated key is printed before the sign-in URL (which carries a code, not the key).
        key = /^api key: (\S+)/.exec(line)?.[1] ?? key;
        const m = /^listening on (\S+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          ok(m[1]!);
        }
      });
      void exited.then(() => fail(new Error(`${mode.name}: the server exited before listening`)));
    });
    return { url: new URL(url).origin, key, startedAt, listeningAt: performance.now(), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function call<T>(s: Server, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${s.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The base model's id as the server lists it (its file name): adapters have a domain, auto is the router. */
async function baseModelId(s: Server): Promise<string> {
  const { data } = await call<{ data: { id: string; domain?: string }[] }>(s, "/v1/models");
  const base = data.find((m) => m.id !== "auto" && m.domain === undefined);
  if (!base) throw new Error(`/v1/models lists no base model: ${JSON.stringify(data)}`);
  return base.id;
}

interface EngineSettings {
  contextSize: number;
  sequences: number;
  flashAttention: "auto" | "on" | "off";
  kvCacheType: KvCacheType;
  batchSize: number;
  threads: number;
}

async function engineSettings(s: Server): Promise<EngineSettings> {
  const status = await call<{ ok: boolean; value?: { settings?: EngineSettings | null } }>(
    s,
    "/api/call/models.status",
    {},
  );
  const settings = status.value?.settings;
  if (!settings) throw new Error(`models.status has no settings: ${JSON.stringify(status)}`);
  return settings;
}

interface Run {
  ms: number;
  ttftMs: number;
  tokens: number;
  promptTokens: number;
}

async function completion(s: Server, model: string, maxTokens: number, stream: boolean): Promise<Run> {
  const t0 = performance.now();
  const res = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model,
      messages: [{ role: "user", content: PROMPT }],
      max_tokens: maxTokens,
      temperature: 0,
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    }),
  });
  if (!res.ok) throw new Error(`completion failed: ${res.status} ${await res.text()}`);
  type Usage = { prompt_tokens: number; completion_tokens: number };
  if (!stream) {
    const body = (await res.json()) as { usage: Usage };
    const ms = performance.now() - t0;
    return { ms, ttftMs: NaN, tokens: body.usage.completion_tokens, promptTokens: body.usage.prompt_tokens };
  }
  // Counted from usage, not from chunks: one chunk may carry several tokens.
  let ttftMs = NaN;
  let usage: Usage | null = null;
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(part, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
        const chunk = JSON.parse(line.slice(6)) as {
          choices: { delta?: { content?: string } }[];
          usage?: Usage | null;
        };
        if (Number.isNaN(ttftMs) && chunk.choices.some((c) => c.delta?.content))
          ttftMs = performance.now() - t0;
        if (chunk.usage) usage = chunk.usage;
      }
    }
  }
  const ms = performance.now() - t0;
  if (!usage) throw new Error("the stream carried no usage (stream_options.include_usage)");
  return { ms, ttftMs, tokens: usage.completion_tokens, promptTokens: usage.prompt_tokens };
}

/** node-llama-cpp as the engine drives it, minus the process, IPC and HTTP in between. */
async function directModel(path: string, settings: EngineSettings) {
  const backend = await loadLlamaBackend(settings.threads);
  const model: LlamaModel = await backend.llama.loadModel({ modelPath: path });
  const flashAttention = settings.flashAttention === "on";
  const kv = kvCacheTypes(settings.kvCacheType, flashAttention);
  const context: LlamaContext = await model.createContext({
    contextSize: settings.contextSize,
    sequences: settings.sequences,
    threads: settings.threads,
    batchSize: settings.batchSize,
    flashAttention,
    experimentalKvCacheKeyType: kv.key,
    experimentalKvCacheValueType: kv.value,
  });
  const wrapper = chooseChatWrapper(model);
  // One sequence kept across runs: the engine reuses its slot, so the prompt's prefix is cached.
  const chat = new LlamaChat({ contextSequence: context.getSequence(), chatWrapper: wrapper });
  const history = toChatHistory(HISTORY);
  const promptTokens = wrapper
    .generateContextState({ chatHistory: history })
    .contextText.tokenize(model.tokenizer).length;
  const sampling = samplerSettings(model, { temperature: 0, maxTokens: 1 });
  return {
    promptTokens,
    async run(maxTokens: number): Promise<Run> {
      const t0 = performance.now();
      let ttftMs = NaN;
      let tokens = 0;
      await chat.generateResponse(history, {
        maxTokens,
        ...sampling,
        onTextChunk: () => {
          if (Number.isNaN(ttftMs)) ttftMs = performance.now() - t0;
        },
        onToken: (t) => (tokens += t.length),
      });
      return { ms: performance.now() - t0, ttftMs, tokens, promptTokens };
    },
    async dispose() {
      chat.dispose();
      await context.dispose();
      await model.dispose();
      await backend.llama.dispose();
    },
  };
}

const rate = (r: Run) => r.tokens / (r.ms / 1000);
const stat = (name: string, values: number[], extra: Partial<BenchRow> = {}): BenchRow => ({
  name,
  p50: median(values),
  p95: percentile(values, 95),
  ...extra,
});

async function measureStarts(
  modes: StartMode[],
  model: string,
  threads: number,
  starts: number,
): Promise<BenchRow[]> {
  const listen = new Map(modes.map((m) => [m.name, [] as number[]]));
  const first = new Map(modes.map((m) => [m.name, [] as number[]]));
  for (let i = 0; i < starts; i++) {
    // Interleaved, the order rotated each round: no mode always runs on a cooler machine.
    for (let j = 0; j < modes.length; j++) {
      const mode = modes[(i + j) % modes.length]!;
      const s = await startServer(mode, model, threads);
      try {
        // As a client would: list the models, ask for the base one.
        const id = await baseModelId(s);
        const sentAt = performance.now();
        const r = await completion(s, id, 16, true);
        listen.get(mode.name)!.push(s.listeningAt - s.startedAt);
        first.get(mode.name)!.push(sentAt + r.ttftMs - s.startedAt);
      } finally {
        await s.stop();
      }
    }
  }
  const baseline = modes[modes.length > 2 ? 2 : 1]!.name;
  return modes.flatMap((m) => [
    stat(`start → listening, ${m.name} (ms)`, listen.get(m.name)!, {
      ratio: median(listen.get(m.name)!) / median(listen.get(baseline)!),
    }),
    stat(`start → first token, ${m.name} (ms)`, first.get(m.name)!, {
      ratio: median(first.get(m.name)!) / median(first.get(baseline)!),
    }),
  ]);
}

/**
 * Which copy of the model is loaded first: the server's engine (as before) or the direct one.
 * In one process (the engine's ModelSession against node-llama-cpp direct on the bench model,
 * same options, interleaved, 2-core VM under load) the copy loaded first took 14–25% more CPU
 * time per 64-token answer, whichever code drove it, and the two were even with the order
 * swapped. Across processes it does not explain the /v1 gap: with the direct copy loaded first
 * /v1 stayed 0.86× (bench model, 64 tokens, quiet machine). `--order both` keeps that check.
 */
export type LoadOrder = "server-first" | "direct-first";
export const LOAD_ORDERS: readonly LoadOrder[] = ["server-first", "direct-first"];

async function measureThroughput(
  mode: StartMode,
  model: string,
  threads: number,
  runs: number,
  tokens: number,
  order: LoadOrder,
): Promise<{
  ratios: { sse: number[]; json: number[] };
  got: Record<Kind, Run[]>;
  extra: Record<string, unknown>;
}> {
  let direct: Awaited<ReturnType<typeof directModel>> | null = null;
  let s: Server | null = null;
  try {
    if (order === "direct-first") {
      // The engine's settings first (a server that is stopped again), then the direct copy.
      const probe = await startServer(mode, model, threads);
      try {
        direct = await directModel(model, await engineSettings(probe));
      } finally {
        await probe.stop();
      }
    }
    s = await startServer(mode, model, threads);
    const id = await baseModelId(s);
    const settings = await engineSettings(s);
    direct ??= await directModel(model, settings);
    const server = s;
    const kinds: Record<Kind, () => Promise<Run>> = {
      direct: (): Promise<Run> => direct!.run(tokens),
      sse: (): Promise<Run> => completion(server, id, tokens, true),
      json: (): Promise<Run> => completion(server, id, tokens, false),
    };
    // Warm-up, not counted: first evaluation of the prompt, first SSE connection, JIT.
    for (const run of Object.values(kinds)) await run();
    const got: Record<Kind, Run[]> = { direct: [], sse: [], json: [] };
    // The order turns each round (direct, SSE, JSON; SSE, JSON, direct; …): a server request
    // right after another waits for that one's KV state to be saved, so none may always come second.
    const kindOrder = ["direct", "sse", "json"] as const;
    for (let i = 0; i < runs; i++) {
      for (let j = 0; j < kindOrder.length; j++) {
        const kind = kindOrder[(i + j) % kindOrder.length]!;
        got[kind].push(await kinds[kind]());
      }
    }
    const promptTokens = { direct: direct.promptTokens, server: got.json[0]!.promptTokens };
    if (promptTokens.direct !== promptTokens.server)
      console.error(
        `warning: prompt tokens differ: direct ${promptTokens.direct}, server ${promptTokens.server}`,
      );
    const pairRatios = (side: Run[]) => side.map((r, i) => rate(r) / rate(got.direct[i]!));
    return {
      ratios: { sse: pairRatios(got.sse), json: pairRatios(got.json) },
      got,
      extra: {
        modelId: id,
        settings,
        promptTokens,
        generatedTokens: Object.fromEntries(
          Object.entries(got).map(([k, rs]) => [k, rs.map((r) => r.tokens)]),
        ),
      },
    };
  } finally {
    await direct?.dispose();
    await s?.stop();
  }
}

type Kind = "direct" | "sse" | "json";

/** Rows per load order, then over both: tok/s medians, ratios as medians of per-round ratios. */
function throughputRows(
  byOrder: { order: LoadOrder; got: Record<Kind, Run[]>; ratios: { sse: number[]; json: number[] } }[],
): BenchRow[] {
  const rows: BenchRow[] = [];
  const block = (label: string, got: Record<Kind, Run[]>, ratios: { sse: number[]; json: number[] }) => [
    stat(`node-llama-cpp direct (tok/s)${label}`, got.direct.map(rate), { ratio: 1 }),
    stat(`/v1 stream SSE (tok/s)${label}`, got.sse.map(rate), { ratio: median(ratios.sse) }),
    stat(`/v1 non-stream (tok/s)${label}`, got.json.map(rate), { ratio: median(ratios.json) }),
    stat(
      `node-llama-cpp direct TTFT (ms)${label}`,
      got.direct.map((r) => r.ttftMs),
    ),
    stat(
      `/v1 stream SSE TTFT (ms)${label}`,
      got.sse.map((r) => r.ttftMs),
    ),
  ];
  for (const b of byOrder) rows.push(...block(`, ${b.order}`, b.got, b.ratios));
  if (byOrder.length > 1) {
    const all = (k: Kind) => byOrder.flatMap((b) => b.got[k]);
    const ratios = { sse: byOrder.flatMap((b) => b.ratios.sse), json: byOrder.flatMap((b) => b.ratios.json) };
    rows.push(
      ...block(", both orders", { direct: all("direct"), sse: all("sse"), json: all("json") }, ratios),
    );
  }
  return rows;
}

export async function benchServe(args: {
  size: string;
  runs: number;
  tokens: number;
  starts?: number;
  before?: string;
  order?: LoadOrder | "both";
}): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-fixtures-"));
  try {
    const { basePath: model } = await writeFixtures(dir, { size: args.size as TinyModelSize });
    const threads = engineThreads();
    const modes = startModes(args.before);
    const starts = args.starts ?? args.runs;
    const startRows = await measureStarts(modes, model, threads, starts);
    const orders = args.order === undefined || args.order === "both" ? LOAD_ORDERS : [args.order];
    const byOrder = [];
    for (const order of orders) {
      const t = await measureThroughput(modes[0]!, model, threads, args.runs, args.tokens, order);
      byOrder.push({ order, ...t });
    }
    const throughput = {
      rows: throughputRows(byOrder),
      extra: {
        ...byOrder[0]!.extra,
        loadOrders: orders,
        pairRatios: Object.fromEntries(byOrder.map((b) => [b.order, b.ratios])),
      },
    };
    report(`serve-${args.size}`, [...startRows, ...throughput.rows], {
      size: args.size,
      threads,
      maxTokens: args.tokens,
      runs: args.runs,
      starts,
      startModes: modes.map((m) => m.name),
      ...throughput.extra,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `npm run bench -- serve …`: the options after the name. */
export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      size: { type: "string", default: "tiny" },
      runs: { type: "string", default: "3" },
      tokens: { type: "string", default: "256" },
      starts: { type: "string" },
      before: { type: "string" },
      order: { type: "string", default: "server-first" },
    },
    strict: true,
  });
  const order = values.order as LoadOrder | "both";
  if (order !== "both" && !LOAD_ORDERS.includes(order))
    throw new Error(`--order ${values.order}: expected both, ${LOAD_ORDERS.join(" or ")}`);
  await benchServe({
    size: values.size,
    runs: Number(values.runs),
    tokens: Number(values.tokens),
    starts: values.starts === undefined ? undefined : Number(values.starts),
    before: values.before,
    order,
  });
}
