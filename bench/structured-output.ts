/**
 * Issue 14 number: tokens/s of a schema-constrained answer (OpenAI `response_format:
 * json_schema`, node-llama-cpp's JSON-schema grammar) against free text, on the shipped demo
 * model, in-process (ModelSession), one thread, greedy, warm (one untimed round per mode
 * first), interleaved A/B (the order alternates every round), the same prompt. Each mode keeps
 * its own conversation (session key), so every timed round reuses its cached prompt and
 * evaluates only the answer. The ratio is taken per round (constrained rate / free rate of the
 * same round), so the machine's load swings cancel out; min / median / max of those.
 *
 * Also the cost of counting the prompt exactly (ModelSession tokenizes the laid-out prompt once
 * per turn, for usage and the context bound): median ms over a ~3.7k-token history.
 *
 *   npm run bench -- structured-output [--runs N]     (N × 4 timed rounds per mode)
 */
import { loadLlamaBackend } from "../native/engine/llama-backend";
import { ModelSession } from "../native/engine/model-session";
import type { ChatTurn, GenerateOptions, GenerateResult } from "../common/engine-protocol";
import { toGrammarSchema } from "../common/grammar-schema";
import { demoBasePath } from "../native/gguf/demo-files";
import { median, percentile, report, type BenchRow } from "./stats";

/**
 * An object with 3 fields, as a coding agent or a form filler would ask for. Sent as the /v1
 * routes send it: through toGrammarSchema, which turns the small integer range into an enum
 * (node-llama-cpp ignores minimum/maximum, and the demo then writes digits up to the cap).
 */
const SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 24 },
    age: { type: "integer", minimum: 0, maximum: 30 },
    color: { enum: ["black", "white", "ginger"] },
  },
  required: ["name", "age", "color"],
  additionalProperties: false,
};

const PROMPT: ChatTurn[] = [{ role: "user", text: "Describe a cat as JSON with its name, age and color." }];

interface Sample {
  tokens: number;
  ms: number;
  rate: number;
  stop: GenerateResult["stopReason"];
}

export async function benchStructuredOutput(options: { runs: number }): Promise<void> {
  const rounds = Math.max(1, options.runs) * 4;
  const backend = await loadLlamaBackend(1);
  const session = await ModelSession.open(
    backend,
    demoBasePath(),
    { contextSize: 4096, sequences: 2, threads: 1 },
    () => {},
  );
  const rows: BenchRow[] = [];
  try {
    const run = async (mode: Partial<GenerateOptions>, key: string): Promise<Sample> => {
      const result = await session.generate(
        PROMPT,
        { temperature: 0, maxTokens: 96, sessionKey: key, ...mode },
        () => {},
        new AbortController().signal,
      );
      return {
        tokens: result.tokens,
        ms: result.durationMs,
        rate: (result.tokens / result.durationMs) * 1000,
        stop: result.stopReason,
      };
    };
    const free: Partial<GenerateOptions> = {};
    const schema: Partial<GenerateOptions> = { jsonSchema: toGrammarSchema(SCHEMA, "response_format") };
    // Warm: prompts evaluated and cached, the grammar compiled once.
    await run(free, "free");
    await run(schema, "schema");
    const frees: Sample[] = [];
    const schemas: Sample[] = [];
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        frees.push(await run(free, "free"));
        schemas.push(await run(schema, "schema"));
      } else {
        schemas.push(await run(schema, "schema"));
        frees.push(await run(free, "free"));
      }
    }
    const ratios = schemas.map((s, i) => s.rate / frees[i]!.rate);
    const row = (name: string, samples: Sample[], vsFree: number[] | null): BenchRow => ({
      name,
      tokens: median(samples.map((s) => s.tokens)),
      ms: median(samples.map((s) => s.ms)),
      tokPerS: median(samples.map((s) => s.rate)),
      vsFreeMin: vsFree ? Math.min(...vsFree) : 1,
      vsFreeMedian: vsFree ? median(vsFree) : 1,
      vsFreeMax: vsFree ? Math.max(...vsFree) : 1,
      stop: samples[0]!.stop,
    });
    rows.push(row("free text", frees, null), row("json_schema (3 fields)", schemas, ratios));

    // The exact prompt count: the tokenization ModelSession.generate does once per turn.
    const history: ChatTurn[] = [{ role: "system", text: "You are a helpful assistant." }];
    for (let i = 0; i < 20; i++)
      history.push({
        role: i % 2 === 0 ? "user" : "assistant",
        text: "the quick brown fox jumps over the lazy dog ".repeat(4),
      });
    // Private: the count is part of generate, timed here on its own.
    const counter = session as unknown as {
      promptTokens(history: ChatTurn[], tools: null, format: undefined): unknown[];
    };
    const count = () => counter.promptTokens(history, null, undefined).length;
    const tokens = count();
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      count();
      times.push(performance.now() - started);
    }
    rows.push({
      name: `count the prompt (${tokens} tokens)`,
      tokens,
      ms: median(times),
      p90Ms: percentile(times, 90),
      tokPerS: null,
      vsFreeMin: null,
      vsFreeMedian: null,
      vsFreeMax: null,
      stop: null,
    });
  } finally {
    await session.dispose();
    await backend.llama.dispose();
  }
  report("structured-output", rows, {
    model: "resources/demo/base.gguf (0.7M params, byte tokenizer)",
    threads: 1,
    rounds,
    schema: SCHEMA,
  });
}
