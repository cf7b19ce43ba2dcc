/**
 * `npm run bench -- adapters [--size small|bench] [--runs N]`: the engine's LoRA costs, measured
 * in-process on ModelSession (no supervisor, no IPC), with threads from engineThreads().
 *
 * (a) switch cost: live swap on the context vs a new context with the other adapter vs a model
 *     reload; (b) time to first token of a turn when the adapter alternates every turn, per KV
 *     policy, against the same turns without a switch; (c) generation speed with 0, 1, 2 adapters.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFixtures, type FixturePaths } from "../native/gguf/fixtures";
import { randomValues } from "../native/gguf/prng";
import { TINY_MODEL_SHAPES, isTinyModelSize, type TinyModelShape } from "../native/gguf/tiny-model";
import { gv, writeGguf, type GgufWriteTensor } from "../native/gguf/writer";
import { normalizeAdapters } from "../native/engine/live-adapters";
import { engineThreads, loadLlamaBackend, type LlamaBackend } from "../native/engine/llama-backend";
import { ModelSession } from "../native/engine/model-session";
import type { AdapterUse, ChatTurn, KvPolicy } from "../common/engine-protocol";
import { median, percentile, report, type BenchRow } from "./stats";

const POLICIES: KvPolicy[] = ["reevaluate", "sequence-per-set", "activated"];
const HISTORIES = [500, 2000, 8000];

export async function benchAdapters(args: { size: string; runs: number }): Promise<void> {
  if (!isTinyModelSize(args.size)) throw new Error(`unknown --size "${args.size}": use tiny, small or bench`);
  const size = args.size;
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-adapters-"));
  const started = performance.now();
  try {
    const fx = await writeFixtures(dir, { size });
    const shape = TINY_MODEL_SHAPES[size];
    const dense = [
      await writeDenseAdapter(join(dir, "dense-1.gguf"), shape, "d1", "F32"),
      await writeDenseAdapter(join(dir, "dense-2.gguf"), shape, "d2", "F32"),
      await writeDenseAdapter(join(dir, "dense-1-f16.gguf"), shape, "d1", "F16"),
      await writeDenseAdapter(join(dir, "dense-2-f16.gguf"), shape, "d2", "F16"),
    ];
    const backend = await loadLlamaBackend(engineThreads());
    const contextSize = Math.min(shape.contextLength, 10240);
    const session = await ModelSession.open(backend, fx.basePath, { contextSize, sequences: 4 }, () => {});
    const rows: BenchRow[] = [];
    const log = (line: string) => console.error(`[bench adapters ${size}] ${line}`);
    // MACARON_BENCH_PARTS=gen (or switch,ttft,gen) runs a subset, written to its own file.
    const parts = (process.env.MACARON_BENCH_PARTS ?? "switch,ttft,gen").split(",");
    const all = parts.length === 3;
    try {
      if (parts.includes("switch")) rows.push(...(await switchCost(backend, session, fx, args.runs, log)));
      if (parts.includes("ttft")) rows.push(...(await turnLatency(session, fx, args.runs, contextSize, log)));
      // Empty caches: long histories left in other sequences must not slow the decode rows.
      await session.slots.clear();
      if (parts.includes("gen")) rows.push(...(await generationSpeed(session, fx, dense, args.runs, log)));
    } finally {
      await session.dispose();
    }
    report(all ? `adapters-${size}` : `adapters-${size}-${parts.join("-")}`, rows, {
      size,
      threads: backend.threads,
      flashAttention: backend.flashAttention,
      contextSize,
      runs: args.runs,
      totalSeconds: (performance.now() - started) / 1000,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const adapter = (fx: FixturePaths, id: string, scale = 1): AdapterUse => ({
  path: fx.adapters.find((a) => a.id === id)!.path,
  scale,
});

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const stat = (name: string, ms: number[]): BenchRow => ({
  name,
  p50Ms: median(ms),
  p95Ms: percentile(ms, 95),
  n: ms.length,
});

/** (a) Live swap vs a new context with the other adapter vs reloading the model. */
async function switchCost(
  backend: LlamaBackend,
  session: ModelSession,
  fx: FixturePaths,
  runs: number,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const sets = [[adapter(fx, "chat")], [adapter(fx, "coding")]];
  const contextOptions = (i: number) => ({
    contextSize: session.context.contextSize,
    sequences: 1,
    threads: backend.threads,
    flashAttention: backend.flashAttention,
    lora: { adapters: sets[i % 2]!.map((a) => ({ filePath: a.path, scale: a.scale })) },
  });
  log("switch cost");
  for (const set of sets) await session.adapters.apply(normalizeAdapters(set)); // load both once
  const live: number[] = [];
  for (let i = 0; i < Math.max(50, runs * 20); i++) {
    live.push(await timed(() => session.adapters.apply(normalizeAdapters(sets[i % 2]))));
  }
  const newContext: number[] = [];
  let context = await session.model.createContext(contextOptions(0));
  for (let i = 1; i <= Math.max(10, runs * 4); i++) {
    newContext.push(
      await timed(async () => {
        await context.dispose();
        context = await session.model.createContext(contextOptions(i));
      }),
    );
  }
  await context.dispose();
  const reload: number[] = [];
  let model = await backend.llama.loadModel({ modelPath: session.info.path });
  for (let i = 1; i <= Math.max(3, runs); i++) {
    reload.push(
      await timed(async () => {
        await model.dispose();
        model = await backend.llama.loadModel({ modelPath: session.info.path });
        await (await model.createContext(contextOptions(i))).dispose();
      }),
    );
  }
  await model.dispose();
  return [
    stat("switch: live _setLoras (locked)", live),
    stat("switch: new context with adapter", newContext),
    stat("switch: model reload + context", reload),
    { name: "switch: live / reload (p50, %)", percent: (100 * median(live)) / median(reload) },
  ];
}

/** Filler turns of about `tokens` tokens in total (the demo tokenizer is one token per byte). */
function history(tokens: number): ChatTurn[] {
  const turns: ChatTurn[] = [];
  let total = 0;
  for (let i = 0; total < tokens - 40; i++) {
    const words = Array.from({ length: 40 }, (_, w) => `w${(i * 41 + w * 7) % 997}`).join(" ");
    const text = words.slice(0, Math.min(words.length, tokens - 40 - total));
    turns.push({ role: i % 2 === 0 ? "user" : "assistant", text });
    total += text.length + 5; // ChatML framing: <|im_start|>, role, newlines, <|im_end|>
  }
  if (turns.at(-1)?.role !== "user") turns.push({ role: "user", text: "go on" });
  return turns;
}

/**
 * (b) TTFT of a turn on a long history. "switch" alternates chat/coding every turn; "same"
 * keeps chat. Two warm-up turns fill the caches (for sequence-per-set: both sets' sequences),
 * then `runs` turns are measured.
 */
async function turnLatency(
  session: ModelSession,
  fx: FixturePaths,
  runs: number,
  contextSize: number,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const a = [adapter(fx, "chat")];
  const b = [adapter(fx, "coding")];
  for (const tokens of HISTORIES) {
    if (tokens + 400 > contextSize) {
      rows.push({ name: `ttft ${tokens} tok`, skipped: `context ${contextSize} is too small` });
      continue;
    }
    const measured = tokens >= 8000 ? Math.min(2, runs) : runs;
    const scenarios: { label: string; policy: KvPolicy; switching: boolean }[] = [
      { label: "no switch", policy: "sequence-per-set", switching: false },
      ...POLICIES.map((policy) => ({ label: policy, policy, switching: true })),
    ];
    let baseline = NaN;
    for (const { label, policy, switching } of scenarios) {
      await session.slots.clear();
      let turns = history(tokens);
      const ttft: number[] = [];
      const evaluated: number[] = [];
      let historyTokens = 0;
      for (let turn = 0; turn < 2 + measured; turn++) {
        const set = switching && turn % 2 === 1 ? b : a;
        const result = await session.generate(
          turns,
          { temperature: 0, maxTokens: 4, adapters: set, kvPolicy: policy },
          () => {},
          new AbortController().signal,
        );
        if (turn >= 2) {
          ttft.push(result.ttftMs ?? result.durationMs);
          evaluated.push(result.promptTokensEvaluated);
          historyTokens = result.contextTokens - result.tokens;
        }
        turns = [
          ...turns,
          { role: "assistant", text: result.text },
          { role: "user", text: `next question ${turn}` },
        ];
      }
      const p50 = median(ttft);
      if (!switching) baseline = p50;
      log(`ttft ${tokens} tok ${label}: ${p50.toFixed(1)} ms`);
      rows.push({
        name: `ttft ${tokens} tok, ${label}`,
        historyTokens,
        p50Ms: p50,
        p95Ms: percentile(ttft, 95),
        evaluatedTokens: median(evaluated),
        vsNoSwitch: p50 / baseline,
        n: ttft.length,
      });
    }
  }
  return rows;
}

/** (c) Decode speed with 0, 1 and 2 active adapters (demo output-layer ones, and dense ones). */
async function generationSpeed(
  session: ModelSession,
  fx: FixturePaths,
  dense: string[],
  runs: number,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const sets: [string, AdapterUse[]][] = [
    ["0 adapters", []],
    ["1 adapter (demo, output layer)", [adapter(fx, "chat")]],
    ["2 adapters (demo, output layer)", [adapter(fx, "chat", 0.5), adapter(fx, "coding", 0.5)]],
    ["1 adapter (dense F32, rank 16, all attention)", [{ path: dense[0]!, scale: 1 }]],
    [
      "2 adapters (dense F32, rank 16, all attention)",
      dense.slice(0, 2).map((path) => ({ path, scale: 0.5 })),
    ],
    ["1 adapter (dense F16, rank 16, all attention)", [{ path: dense[2]!, scale: 1 }]],
    [
      "2 adapters (dense F16, rank 16, all attention)",
      dense.slice(2, 4).map((path) => ({ path, scale: 0.5 })),
    ],
  ];
  const tokens = 128;
  const rates = new Map<string, number[]>(sets.map(([label]) => [label, []]));
  log("generation speed");
  // Interleaved, so that drift in machine speed hits every set alike.
  for (let r = 0; r < Math.max(3, runs); r++) {
    for (const [label, set] of sets) {
      const result = await session.generate(
        [{ role: "user", text: `write something long ${r}` }],
        { temperature: 0, maxTokens: tokens, adapters: set, kvPolicy: "reevaluate" },
        () => {},
        new AbortController().signal,
      );
      const decodeMs = result.durationMs - (result.ttftMs ?? 0);
      rates.get(label)!.push((result.tokens - 1) / (decodeMs / 1000));
    }
  }
  const base = median(rates.get("0 adapters")!);
  return sets.map(([label]) => {
    const values = rates.get(label)!;
    return { name: `gen ${label}`, tokPerS: median(values), vs0: median(values) / base, n: values.length };
  });
}

/** A realistic-cost LoRA: rank 16 on q, k, v and o of every layer, small random weights. */
async function writeDenseAdapter(
  path: string,
  shape: TinyModelShape,
  seed: string,
  type: "F32" | "F16",
): Promise<string> {
  const E = shape.embedding;
  const kv = (E / shape.heads) * shape.kvHeads;
  const rank = 16;
  const tensors: GgufWriteTensor[] = [];
  for (let l = 0; l < shape.layers; l++) {
    for (const [target, nIn, nOut] of [
      ["attn_q", E, E],
      ["attn_k", E, kv],
      ["attn_v", E, kv],
      ["attn_output", E, E],
    ] as const) {
      const name = `blk.${l}.${target}.weight`;
      tensors.push(
        {
          name: `${name}.lora_a`,
          dims: [nIn, rank],
          type,
          data: randomValues(`${seed}a${name}`, nIn * rank, 0.02),
        },
        {
          name: `${name}.lora_b`,
          dims: [rank, nOut],
          type,
          data: randomValues(`${seed}b${name}`, nOut * rank, 0.02),
        },
      );
    }
  }
  await writeGguf(path, {
    metadata: {
      "general.architecture": gv.str("llama"),
      "general.type": gv.str("adapter"),
      "adapter.type": gv.str("lora"),
      "adapter.lora.alpha": gv.f32(rank),
    },
    tensors,
  });
  return path;
}
