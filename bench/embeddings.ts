/**
 * Issue 14 number: embeddings per second (texts/s and tokens/s) through ModelSession.embedCounted
 * (what /v1/embeddings calls), in-process, one thread, on the demo model and on the ~99M bench
 * model (native/gguf fixtures, `size: "bench"`, F16). A batch of 64 texts of 5–60 words (the
 * same texts for both models), warm (one untimed batch first: the embedding context is created
 * on first use), median / min / max over the timed batches. Texts share decodes where the
 * engine runs the app's local build (native/engine/embedder.ts); MACARON_EMBEDDING_BATCH=0 gives
 * one text per decode. Against llama-server: bench/embeddings-server.ts.
 *
 *   npm run bench -- embeddings [--runs N]     (N timed batches per model, default 3)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadLlamaBackend } from "../native/engine/llama-backend";
import { ModelSession } from "../native/engine/model-session";
import { demoBasePath } from "../native/gguf/demo-files";
import { writeFixtures } from "../native/gguf/fixtures";
import { median, report, type BenchRow } from "./stats";

const BATCH = 64;
const WORDS = "the cat sat on a warm mat while rain fell over quiet hills and the kettle began to sing".split(
  " ",
);

/** 64 varied texts, 5 to 60 words each (deterministic). */
function texts(): string[] {
  return Array.from({ length: BATCH }, (_, i) => {
    const words = 5 + ((i * 37) % 56);
    return Array.from({ length: words }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(" ");
  });
}

export async function benchEmbeddings(options: { runs: number }): Promise<void> {
  const runs = Math.max(1, options.runs);
  const fixtures = mkdtempSync(join(tmpdir(), "macaron-bench-embeddings-"));
  const backend = await loadLlamaBackend(1);
  const rows: BenchRow[] = [];
  const batch = texts();
  try {
    const bench = (await writeFixtures(fixtures, { size: "bench" })).basePath;
    const models = [
      { name: "demo (0.7M params)", path: demoBasePath() },
      { name: "bench (~99M params, F16)", path: bench },
    ];
    for (const model of models) {
      const session = await ModelSession.open(
        backend,
        model.path,
        { contextSize: 512, sequences: 1, threads: 1 },
        () => {},
      );
      try {
        await session.embedCounted(batch);
        const textRates: number[] = [];
        const tokenRates: number[] = [];
        let tokens = 0;
        for (let r = 0; r < runs; r++) {
          const started = performance.now();
          const result = await session.embedCounted(batch);
          const seconds = (performance.now() - started) / 1000;
          tokens = result.tokens.reduce((a, b) => a + b, 0);
          textRates.push(batch.length / seconds);
          tokenRates.push(tokens / seconds);
        }
        rows.push({
          name: model.name,
          texts: batch.length,
          tokens,
          textsPerS: median(textRates),
          textsPerSMin: Math.min(...textRates),
          textsPerSMax: Math.max(...textRates),
          tokensPerS: median(tokenRates),
        });
      } finally {
        await session.dispose();
      }
    }
  } finally {
    await backend.llama.dispose();
    rmSync(fixtures, { recursive: true, force: true });
  }
  report("embeddings", rows, { threads: 1, runs, batch: BATCH });
}
