/**
 * Per-token cost of the hops between node-llama-cpp and a /v1 handler: the engine process
 * (fork + IPC), the supervisor and core.generation, against the same model session called in
 * this process (native/engine/model-session.ts: node-llama-cpp direct, the engine's own code),
 * on the same fixture model, prompt and options, warm, interleaved.
 *
 * Before/after in the same run: an engine forked with MACARON_TOKEN_BATCH_MS=0 (one "token"
 * message per token, as before) and one with the default window; non-streaming before = a
 * token listener that ignores them (every token still crosses), after = no listener (NO_TOKENS:
 * `stream: false`, the result alone). Overhead = (harness ms − direct ms) / tokens, per run.
 *
 *   npm run bench -- hops [--size tiny|small] [--runs 8] [--tokens 256]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ChatTurn, GenerateOptions, GenerateResult } from "../common/engine-protocol";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { GenerationService } from "../electron/core/models/generation-service";
import { writeFixtures } from "../native/gguf/fixtures";
import { loadLlamaBackend } from "../native/engine/llama-backend";
import { ModelSession } from "../native/engine/model-session";
import { spawnTestEngine } from "../testing/engine/real-engine";
import { median, percentile, report, type BenchRow } from "./stats";

const HISTORY: ChatTurn[] = [{ role: "user", text: "Write a short poem about the sea." }];

type Variant = "direct" | "stream before" | "stream after" | "non-stream before" | "non-stream after";

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      size: { type: "string", default: "tiny" },
      runs: { type: "string", default: "8" },
      tokens: { type: "string", default: "256" },
    },
    strict: false,
  });
  const size = String(values.size);
  const runs = Number(values.runs);
  const options: GenerateOptions = { temperature: 0, maxTokens: Number(values.tokens) };
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-hops-"));
  const { basePath } = await writeFixtures(dir, { size: size as "tiny" });
  const load = { contextSize: 1024, sequences: 1 };

  const backend = await loadLlamaBackend(1);
  const direct = await ModelSession.open(backend, basePath, load, () => {});
  const engines = {
    before: new EngineSupervisor(spawnTestEngine({ MACARON_TOKEN_BATCH_MS: "0" }), load),
    after: new EngineSupervisor(spawnTestEngine(), load),
  };
  await Promise.all([engines.before.load(basePath), engines.after.load(basePath)]);
  const generation = {
    before: new GenerationService(() => engines.before),
    after: new GenerationService(() => engines.after),
  };

  const signal = new AbortController().signal;
  const messages = { count: 0 };
  const counting = (text: string) => void (messages.count += text.length > 0 ? 1 : 0);
  const run: Record<Variant, () => Promise<GenerateResult>> = {
    direct: () => direct.generate(HISTORY, options, counting, signal),
    "stream before": () => generation.before.generate(HISTORY, options, counting, signal),
    "stream after": () => generation.after.generate(HISTORY, options, counting, signal),
    "non-stream before": () => generation.before.generate(HISTORY, options, () => {}, signal),
    "non-stream after": () => generation.after.generate(HISTORY, options, undefined, signal),
  };
  const variants = Object.keys(run) as Variant[];
  const msPerToken: Record<Variant, number[]> = Object.fromEntries(variants.map((v) => [v, []])) as never;
  const deliveries: Record<Variant, number[]> = Object.fromEntries(variants.map((v) => [v, []])) as never;
  let tokens = 0;
  // One untimed pass warms each (JIT, KV cache of the shared prompt).
  for (const v of variants) await run[v]();
  for (let i = 0; i < runs; i++) {
    // Rotate the order each run so no variant always follows the same one.
    const order = variants.map((_, k) => variants[(k + i) % variants.length]!);
    for (const v of order) {
      messages.count = 0;
      const t0 = performance.now();
      const result = await run[v]();
      msPerToken[v].push((performance.now() - t0) / result.tokens);
      deliveries[v].push(messages.count);
      tokens = result.tokens;
    }
  }

  const base = median(msPerToken.direct);
  const rows: BenchRow[] = variants.map((v) => ({
    name: v === "direct" ? "node-llama-cpp direct (ModelSession)" : `harness ${v}`,
    "ms/token p50": median(msPerToken[v]),
    "ms/token p95": percentile(msPerToken[v], 95),
    "overhead ms/token": v === "direct" ? 0 : median(msPerToken[v]) - base,
    ratio: median(msPerToken[v]) / base,
    "pieces delivered": median(deliveries[v]),
  }));
  report(`hops-${size}`, rows, { size, runs, tokens, threads: 1 });

  await Promise.all([engines.before.close(), engines.after.close()]);
  await direct.dispose();
  await backend.llama.dispose();
  rmSync(dir, { recursive: true, force: true });
}
