/**
 * The llama-server side of bench/ttft.ts: start llama.cpp's own server on the bench model with
 * the settings the node-llama-cpp side uses (threads, context, batch, no flash attention, one
 * slot, no prompt cache), wait for /health, and time one streamed /completion of the same token
 * ids: TTFT on the client (request sent to first token event, as an app would see it),
 * generation tok/s over the token events after the first, and the server's own timings beside.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { z } from "zod";

export interface LlamaServer {
  url: string;
  pid: number | undefined;
  /** Kills the server and waits for it to exit (safe to call twice). */
  stop(): Promise<void>;
}

export interface ServerSettings {
  binary: string;
  model: string;
  threads: number;
  /** Total KV cells (split among the slots: --no-kv-unified). */
  contextSize: number;
  batchSize: number;
  /** Slots (--parallel); default 1, as node-llama-cpp's one-sequence context. */
  parallel?: number;
  /** `-fa`; default off, the app engine's CPU default (bench/parallel.ts passes what it reports). */
  flashAttention?: "on" | "off" | "auto";
  /** `--no-mmap` when false: the weights read into memory, as the app's engine may load them. */
  mmap?: boolean;
}

/** The command line: every setting that changes speed is given, not left to llama-server's defaults. */
export function serverArgs(s: ServerSettings, port: number): string[] {
  return [
    ["-m", s.model],
    ["--host", "127.0.0.1", "--port", String(port)],
    ["-t", String(s.threads), "-tb", String(s.threads)],
    ["-c", String(s.contextSize), "-b", String(s.batchSize), "-ub", String(s.batchSize)],
    // node-llama-cpp's context: flash attention off unless the caller says (the bench passes
    // false), one sequence (bench/parallel.ts: as many as the app's context, each with its own KV
    // cells).
    ["-fa", s.flashAttention ?? "off", "-np", String(s.parallel ?? 1), "--no-kv-unified"],
    // Cold prompt every request: no RAM prompt cache (requests also say cache_prompt: false).
    ["--cache-ram", "0"],
    ["--fit", "off", "--no-webui"],
    s.mmap === false ? ["--no-mmap"] : [],
  ].flat();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** Every server started and not yet stopped: bench/ttft.ts kills them in its finally. */
export const running = new Set<LlamaServer>();

/** Start llama-server and wait for /health 200, polled every `pollMs` (start-up benches: a few ms). */
export async function startLlamaServer(
  settings: ServerSettings,
  timeoutMs = 120_000,
  pollMs = 100,
): Promise<LlamaServer> {
  const port = await freePort();
  const child = spawn(settings.binary, serverArgs(settings, port), { stdio: ["ignore", "ignore", "pipe"] });
  const tail: string[] = [];
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    tail.push(...chunk.split("\n").filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - 30));
  });
  // An object, not a let: TypeScript would narrow a let to null (set in a callback only).
  const state: { exited: string | null } = { exited: null };
  child.once("exit", (code, signal) => (state.exited = `llama-server exited (${signal ?? code})`));
  const server: LlamaServer = {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      running.delete(server);
      await kill(child);
    },
  };
  running.add(server);
  const deadline = Date.now() + timeoutMs;
  try {
    // /health answers 503 while the model loads and 200 once the slot is ready.
    for (;;) {
      if (state.exited) throw new Error(`${state.exited}:\n${tail.join("\n")}`);
      if (Date.now() > deadline)
        throw new Error(`llama-server not ready in ${timeoutMs} ms:\n${tail.join("\n")}`);
      const ok = await fetch(`${server.url}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return server;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  } catch (err) {
    await server.stop();
    throw err;
  }
}

const StreamEvent = z.object({
  content: z.string().optional(),
  tokens: z.array(z.number()).optional(),
  stop: z.boolean().optional(),
  tokens_evaluated: z.number().optional(),
  timings: z
    .object({
      prompt_n: z.number(),
      prompt_ms: z.number(),
      prompt_per_second: z.number(),
      predicted_n: z.number(),
      predicted_ms: z.number(),
      predicted_per_second: z.number(),
    })
    .optional(),
});

export const ServerRunResult = z.object({
  promptTokens: z.number().int(),
  genTokens: z.number().int(),
  ttftMs: z.number(),
  promptTokPerS: z.number(),
  genTokPerS: z.number(),
  serverPromptTokPerS: z.number(),
  serverGenTokPerS: z.number(),
});
export type ServerRunResult = z.infer<typeof ServerRunResult>;

/** One streamed /completion of `ids` (greedy, EOS ignored, nothing cached). */
export async function completion(
  server: LlamaServer,
  ids: number[],
  genTokens: number,
): Promise<ServerRunResult> {
  const started = performance.now();
  const res = await fetch(`${server.url}/completion`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      prompt: ids,
      n_predict: genTokens,
      temperature: 0,
      ignore_eos: true,
      cache_prompt: false,
      return_tokens: true,
      stream: true,
    }),
  });
  if (!res.ok || !res.body) throw new Error(`/completion: ${res.status} ${await res.text()}`);
  let first = NaN;
  let last = NaN;
  let generated = 0;
  let final: z.infer<typeof StreamEvent> | null = null;
  let rest = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    const lines = (rest + decoder.decode(chunk as Uint8Array, { stream: true })).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data: ")) continue;
      const event = StreamEvent.parse(JSON.parse(line.slice("data: ".length)));
      const n = event.tokens?.length ?? 0;
      if (n > 0) {
        const now = performance.now();
        if (generated === 0) first = now;
        last = now;
        generated += n;
      }
      if (event.stop) final = event;
    }
  }
  if (!final?.timings) throw new Error("/completion ended without its timings");
  const promptTokens = final.timings.prompt_n;
  if (promptTokens !== ids.length)
    throw new Error(
      `llama-server evaluated ${promptTokens} prompt tokens, not ${ids.length} (a cached prefix?)`,
    );
  const ttftMs = first - started;
  return {
    promptTokens,
    genTokens: generated,
    ttftMs,
    promptTokPerS: (promptTokens / ttftMs) * 1000,
    genTokPerS: ((generated - 1) / (last - first)) * 1000,
    serverPromptTokPerS: final.timings.prompt_per_second,
    serverGenTokPerS: final.timings.predicted_per_second,
  };
}
