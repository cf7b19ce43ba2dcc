/**
 * Headless mode's numbers, measured in one run on one model:
 *
 * - start-up: spawning the server to "listening" and to the first streamed token, for each way
 *   of starting it, interleaved (built out/main/cli.js as `npm start`/`npm run serve` run it;
 *   the sources under tsx; with `--before DIR`, the sources of another checkout, e.g. an older
 *   commit's `git archive`, under this checkout's tsx);
 * - throughput: tokens/s through /v1 (SSE and non-streaming) against node-llama-cpp called
 *   directly with what the engine uses (bench/serve-direct.ts: the same backend, context
 *   settings, chat wrapper, history and sampling; one warm sequence reused, as the engine reuses
 *   its slot), in a process started like the engine's, plus a second such process (A/A: the
 *   noise floor of the comparison), in interleaved rounds (direct, A/A, SSE, non-stream; then
 *   turned by one, …) after an uncounted warm-up; ratios per round, then their median. The
 *   ratio is the harness overhead: process hop, IPC, HTTP, SSE.
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
import type { ChatTurn } from "../common/engine-protocol";
import { build, HEADLESS_BUILD, isStale } from "../scripts/build-freshness.mjs";
import { writeFixtures } from "../native/gguf/fixtures";
import type { TinyModelSize } from "../native/gguf/tiny-model";
import { engineThreads } from "../native/engine/llama-backend";
import { startDirect, type DirectProcess, type EngineSettings, type Run } from "./serve-direct";
import { median, percentile, report, type BenchRow } from "./stats";

const root = resolve(import.meta.dirname, "..");
const PROMPT = "Write a short poem about the sea.";
/** What /v1/chat/completions hands the engine for one user message: no system turn is added. */
const HISTORY: ChatTurn[] = [{ role: "user", text: PROMPT }];
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
/** A server that is not listening by then counts as failed (a bench model loads in seconds). */
const START_TIMEOUT_MS = 120_000;

export interface StartMode {
  name: string;
  /** Node arguments before the server's own. */
  entry: string[];
}

/**
 * The built server and engine, rebuilt first when older than their sources (as `npm start`
 * does): a stale bundle measures other code than the checkout (it once hid the engine's huge
 * pages from this bench).
 */
function ensureBuilt(): string {
  if (isStale(HEADLESS_BUILD)) {
    console.error("serve: out/ is older than the sources: building (electron-vite build)…");
    const status = build();
    if (status !== 0) throw new Error(`electron-vite build failed (exit ${status})`);
  }
  return join(root, "out", "main", "cli.js");
}

export function startModes(before: string | undefined): StartMode[] {
  const built = ensureBuilt();
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

export interface Server {
  url: string;
  /** The server's process, leader of its group (its engine is in the group). */
  pid: number | undefined;
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

/**
 * Start the app's headless server on `model`. `keepDir`: the data folder to use and keep (a
 * user's, whose caches persist across starts); by default a new one, deleted at stop.
 */
export async function startServer(
  mode: StartMode,
  model: string,
  threads: number,
  keepDir?: string,
): Promise<Server> {
  const dataDir = keepDir ?? mkdtempSync(join(tmpdir(), "macaron-bench-"));
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
    if (keepDir === undefined) rmSync(dataDir, { recursive: true, force: true });
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
    return { url: new URL(url).origin, pid: proc.pid, key, startedAt, listeningAt: performance.now(), stop };
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
export async function baseModelId(s: Server): Promise<string> {
  const { data } = await call<{ data: { id: string; domain?: string }[] }>(s, "/v1/models");
  const base = data.find((m) => m.id !== "auto" && m.domain === undefined);
  if (!base) throw new Error(`/v1/models lists no base model: ${JSON.stringify(data)}`);
  return base.id;
}

export async function engineSettings(s: Server): Promise<EngineSettings> {
  const status = await call<{ ok: boolean; value?: { settings?: EngineSettings | null } }>(
    s,
    "/api/call/models.status",
    {},
  );
  const settings = status.value?.settings;
  if (!settings) throw new Error(`models.status has no settings: ${JSON.stringify(status)}`);
  return settings;
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
 * Which copies of the model are loaded first: the server's engine or the direct ones. Without
 * huge pages the process that loaded the model first generated 5–8% slower than a later one
 * running the same code (an A/A check, bench model, 64 tokens), which was the whole "/v1 gap"
 * (0.83–0.93×); the engine and the direct processes now start with huge pages (engine-env.ts),
 * and `--order both` and the A/A row keep checking that neither side is favoured.
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
  ratios: Ratios;
  got: Record<Kind, Run[]>;
  extra: Record<string, unknown>;
}> {
  const directs: DirectProcess[] = [];
  const startDirects = async (settings: EngineSettings) => {
    for (let i = 0; i < 2; i++) directs.push(await startDirect(model, settings, HISTORY));
  };
  let s: Server | null = null;
  try {
    if (order === "direct-first") {
      // The engine's settings first (a server that is stopped again), then the direct copies.
      const probe = await startServer(mode, model, threads);
      try {
        await startDirects(await engineSettings(probe));
      } finally {
        await probe.stop();
      }
    }
    s = await startServer(mode, model, threads);
    const id = await baseModelId(s);
    const settings = await engineSettings(s);
    if (directs.length === 0) await startDirects(settings);
    const [direct, second] = directs as [DirectProcess, DirectProcess];
    const server = s;
    const kinds: Record<Kind, () => Promise<Run>> = {
      direct: (): Promise<Run> => direct.run(tokens),
      aa: (): Promise<Run> => second.run(tokens),
      sse: (): Promise<Run> => completion(server, id, tokens, true),
      json: (): Promise<Run> => completion(server, id, tokens, false),
    };
    // Warm-up, not counted: first evaluation of the prompt, first SSE connection, JIT.
    for (const run of Object.values(kinds)) await run();
    const got: Record<Kind, Run[]> = { direct: [], aa: [], sse: [], json: [] };
    // The order turns each round (direct, A/A, SSE, JSON; A/A, SSE, JSON, direct; …): a server
    // request right after another waits for that one's KV state to be saved, so none may always
    // come second.
    const kindOrder = ["direct", "aa", "sse", "json"] as const;
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
      ratios: { aa: pairRatios(got.aa), sse: pairRatios(got.sse), json: pairRatios(got.json) },
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
    for (const d of directs) await d.stop();
    await s?.stop();
  }
}

type Kind = "direct" | "aa" | "sse" | "json";
type Ratios = Record<Exclude<Kind, "direct">, number[]>;

/** Rows per load order, then over both: tok/s medians, ratios as medians of per-round ratios. */
function throughputRows(
  byOrder: { order: LoadOrder; got: Record<Kind, Run[]>; ratios: Ratios }[],
): BenchRow[] {
  const rows: BenchRow[] = [];
  const block = (label: string, got: Record<Kind, Run[]>, ratios: Ratios) => [
    stat(`node-llama-cpp direct (tok/s)${label}`, got.direct.map(rate), { ratio: 1 }),
    stat(`node-llama-cpp direct, A/A second process (tok/s)${label}`, got.aa.map(rate), {
      ratio: median(ratios.aa),
    }),
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
    const kinds = ["direct", "aa", "sse", "json"] as const;
    const got = Object.fromEntries(kinds.map((k) => [k, byOrder.flatMap((b) => b.got[k])])) as Record<
      Kind,
      Run[]
    >;
    const ratios = Object.fromEntries(
      (["aa", "sse", "json"] as const).map((k) => [k, byOrder.flatMap((b) => b.ratios[k])]),
    ) as Ratios;
    rows.push(...block(", both orders", got, ratios));
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
