import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from "node-llama-cpp";

/**
 * Next-token log-probabilities from node-llama-cpp (llama.cpp) for the trainer's parity tests.
 * node-llama-cpp exposes probabilities, not raw logits: at temperature 0 the sampler chain is
 * greedy only, so they are softmax(logits) over the whole vocabulary, and their log equals the
 * logits up to one constant per position (compare log-softmax on both sides).
 */

/** One CPU Llama with one compute thread, quiet (as native/gguf/llama.test.ts does). */
export function loadTestLlama(): Promise<Llama> {
  return getLlama({ gpu: false, maxThreads: 1, logLevel: LlamaLogLevel.error, logger: () => undefined });
}

/**
 * log p(next token) at every position of `tokens`, as [position][token id]; tokens whose
 * probability underflows float32 come back as -Infinity. The KV cache is F32 so the comparison
 * measures the model math, not F16 cache rounding.
 */
export async function llamaLogProbs(
  model: LlamaModel,
  vocabSize: number,
  tokens: readonly number[],
  adapter?: { filePath: string; scale: number },
): Promise<number[][]> {
  const context = await model.createContext({
    contextSize: 256,
    threads: 1,
    flashAttention: false,
    experimentalKvCacheKeyType: "F32",
    experimentalKvCacheValueType: "F32",
    lora: adapter ? { adapters: [adapter] } : undefined,
  });
  try {
    const sequence = context.getSequence();
    const outputs = await sequence.controlledEvaluate(
      tokens.map((t) => [t as Token, { generateNext: { probabilities: true, options: { temperature: 0 } } }]),
    );
    return outputs.map((output, position) => {
      const probabilities = output?.next.probabilities;
      if (!probabilities) throw new Error(`no probabilities at position ${position}`);
      const row = new Array<number>(vocabSize).fill(-Infinity);
      for (const [token, p] of probabilities) row[token] = Math.log(p);
      return row;
    });
  } finally {
    await context.dispose();
  }
}

/** log-softmax of each row (float64), to compare raw logits with llama.cpp's probabilities. */
export function logSoftmax(rows: readonly (readonly number[])[]): number[][] {
  return rows.map((row) => {
    const max = Math.max(...row);
    const sum = row.reduce((acc, x) => acc + Math.exp(x - max), 0);
    const log = max + Math.log(sum);
    return row.map((x) => x - log);
  });
}

/**
 * Largest |a - b| over entries where llama.cpp's probability is a normal float32 (log p > -80):
 * below that, float32 probabilities lose precision and the log says nothing about the logits.
 */
export function maxAbsDiff(
  llama: readonly (readonly number[])[],
  ours: readonly (readonly number[])[],
): number {
  let max = 0;
  let compared = 0;
  llama.forEach((row, i) =>
    row.forEach((x, j) => {
      if (!(x > -80)) return;
      compared++;
      max = Math.max(max, Math.abs(x - ours[i]![j]!));
    }),
  );
  if (compared === 0) throw new Error("no comparable entries");
  return max;
}

/** Mean |Δ log p| over the entries maxAbsDiff compares. */
export function meanAbsDiff(
  llama: readonly (readonly number[])[],
  ours: readonly (readonly number[])[],
): number {
  let sum = 0;
  let n = 0;
  llama.forEach((row, i) =>
    row.forEach((x, j) => {
      if (!(x > -80)) return;
      sum += Math.abs(x - ours[i]![j]!);
      n++;
    }),
  );
  return sum / n;
}

/** llama.cpp's log-probabilities for `tokens` on the model file `path` (loaded, read, freed). */
export async function llamaLogProbsOfFile(
  llama: Llama,
  path: string,
  vocabulary: number,
  tokens: readonly number[],
): Promise<number[][]> {
  const model = await llama.loadModel({ modelPath: path });
  try {
    return await llamaLogProbs(model, vocabulary, tokens);
  } finally {
    await model.dispose();
  }
}
