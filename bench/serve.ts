/**
 * Issue 2 numbers: time from starting `serve` to the first streamed token, and tokens/s through
 * the OpenAI endpoint against node-llama-cpp called directly on the same model in the same run
 * (the ratio is the harness overhead: process hop, IPC, HTTP, SSE).
 *
 *   npm run bench -- serve [--size tiny|small] [--runs N] [--tokens N]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { ChatMLChatWrapper, getLlama, LlamaChatSession } from "node-llama-cpp";
import { writeFixtures } from "../native/gguf/fixtures";
import { median, percentile, report, type BenchRow } from "./stats";

const root = resolve(import.meta.dirname, "..");
const PROMPT = "Write a short poem about the sea.";

interface Server {
  url: string;
  key: string;
  stop(): Promise<void>;
  startedAt: number;
  listeningAt: number;
}

async function startServer(model: string, threads: number): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), "macaron-bench-"));
  const startedAt = performance.now();
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", "electron/server/cli.ts", "--port", "0", "--data-dir", dataDir, "--model", model],
    {
      cwd: root,
      env: { ...process.env, MACARON_ENGINE_THREADS: String(threads) },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let key = "";
  const url = await new Promise<string>((ok, fail) => {
    createInterface({ input: proc.stdout }).on("line", (l) => {
      // The generated key is printed before the sign-in URL (which carries a code, not the key).
      key = /^api key: (\S+)/.exec(l)?.[1] ?? key;
      const m = /^listening on (\S+)/.exec(l);
      if (m) ok(m[1]!);
    });
    proc.once("exit", (c) => fail(new Error(`server exited ${c}`)));
  });
  const listeningAt = performance.now();
  const u = new URL(url);
  return {
    url: u.origin,
    key,
    startedAt,
    listeningAt,
    async stop() {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function completion(s: Server, maxTokens: number, stream: boolean) {
  const t0 = performance.now();
  const res = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "base", // the base alone, like the direct baseline
      messages: [{ role: "user", content: PROMPT }],
      max_tokens: maxTokens,
      temperature: 0,
      stream,
    }),
  });
  if (!res.ok) throw new Error(`completion failed: ${res.status} ${await res.text()}`);
  if (!stream) {
    const body = (await res.json()) as { usage: { completion_tokens: number } };
    return { firstTokenAt: NaN, ms: performance.now() - t0, tokens: body.usage.completion_tokens, t0 };
  }
  let firstTokenAt = NaN;
  let chunks = 0;
  const decoder = new TextDecoder();
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(part, { stream: true });
    const n = (text.match(/"content":"[^"]/g) ?? []).length;
    if (n > 0 && Number.isNaN(firstTokenAt)) firstTokenAt = performance.now();
    chunks += n;
  }
  return { firstTokenAt, ms: performance.now() - t0, tokens: chunks, t0 };
}

async function directTokensPerSecond(model: string, threads: number, maxTokens: number, runs: number) {
  const llama = await getLlama({ gpu: false });
  const m = await llama.loadModel({ modelPath: model });
  const ctx = await m.createContext({ contextSize: 2048, threads });
  const rates: number[] = [];
  for (let i = 0; i < runs; i++) {
    const seq = ctx.getSequence();
    const session = new LlamaChatSession({ contextSequence: seq, chatWrapper: new ChatMLChatWrapper() });
    let tokens = 0;
    const t0 = performance.now();
    await session.prompt(PROMPT, { maxTokens, temperature: 0, onToken: (t) => (tokens += t.length) });
    rates.push(tokens / ((performance.now() - t0) / 1000));
    session.dispose();
    void seq.dispose();
  }
  await ctx.dispose();
  await m.dispose();
  await llama.dispose();
  return rates;
}

export async function benchServe(args: { size: string; runs: number; tokens: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-fixtures-"));
  const { basePath: base } = await writeFixtures(dir, { size: args.size as "tiny" });
  const threads = Number(process.env.MACARON_ENGINE_THREADS ?? Math.max(1, availableParallelism() - 1));
  const rows: BenchRow[] = [];

  const startToFirst: number[] = [];
  const startToListen: number[] = [];
  const served: number[] = [];
  const servedStream: number[] = [];
  for (let i = 0; i < args.runs; i++) {
    const s = await startServer(base, threads);
    const first = await completion(s, 16, true);
    startToListen.push(s.listeningAt - s.startedAt);
    startToFirst.push(first.firstTokenAt - s.startedAt);
    for (let j = 0; j < 2; j++) {
      const r = await completion(s, args.tokens, false);
      served.push(r.tokens / (r.ms / 1000));
      const st = await completion(s, args.tokens, true);
      servedStream.push(st.tokens / (st.ms / 1000));
    }
    await s.stop();
  }
  const direct = await directTokensPerSecond(base, threads, args.tokens, args.runs * 2);

  rows.push({
    name: "serve start → listening (ms)",
    p50: median(startToListen),
    p95: percentile(startToListen, 95),
  });
  rows.push({
    name: "serve start → first token (ms)",
    p50: median(startToFirst),
    p95: percentile(startToFirst, 95),
  });
  rows.push({
    name: "node-llama-cpp direct (tok/s)",
    p50: median(direct),
    p95: percentile(direct, 95),
    ratio: 1,
  });
  rows.push({
    name: "/v1 non-stream (tok/s)",
    p50: median(served),
    p95: percentile(served, 95),
    ratio: median(served) / median(direct),
  });
  rows.push({
    name: "/v1 stream SSE (tok/s)",
    p50: median(servedStream),
    p95: percentile(servedStream, 95),
    ratio: median(servedStream) / median(direct),
  });
  report(`serve-${args.size}`, rows, { size: args.size, threads, maxTokens: args.tokens, runs: args.runs });
  rmSync(dir, { recursive: true, force: true });
}
