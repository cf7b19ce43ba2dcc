/**
 * Issue 12 number: tokens/s of grammar-constrained tool-call generation (node-llama-cpp
 * function calling: the name, then the arguments under the tool's JSON-schema grammar) against
 * free text, on the shipped demo model, in-process (ModelSession), one thread, warm (one
 * untimed round per mode first), interleaved A/B (the order alternates every round), same
 * prompt. Each mode keeps its own conversation (session key), so every timed round reuses its
 * cached prompt and evaluates only the answer.
 *
 * - "agent": the trained Agent adapter on "Call a tool and set a timer for 15 minutes.": free,
 *   it writes `{"tool":"set_timer","arguments":{"minutes":15}}` as text; constrained, the same
 *   call in its own format (toolFormat, tools offered, "auto").
 * - "forced": the base alone on a plan request: free text vs a call forced from its first token
 *   ("required") whose arguments are an array of three short strings.
 *
 *   npm run bench -- tool-calls [--runs N]     (N × 4 timed rounds per mode)
 */
import { DEFAULT_SYSTEM_PROMPT } from "../electron/core/chat/turn-deps";
import { loadLlamaBackend } from "../native/engine/llama-backend";
import { ModelSession } from "../native/engine/model-session";
import type { ChatTurn, GenerateOptions, GenerateResult, ToolDefinition } from "../common/engine-protocol";
import { demoAdaptersDir, demoBasePath, DEMO_TOOL_CALL_FORMATS } from "../native/gguf/demo-files";
import { join } from "node:path";
import { median, report, type BenchRow } from "./stats";

const TIMER: ToolDefinition[] = [
  {
    name: "set_timer",
    description: "Start a timer.",
    parameters: { type: "object", properties: { minutes: { type: "integer" } }, required: ["minutes"] },
  },
  {
    name: "open_file",
    description: "Open a file.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];

const PLAN: ToolDefinition[] = [
  {
    name: "save_plan",
    description: "Save a plan of three steps.",
    parameters: {
      type: "object",
      properties: {
        steps: { type: "array", items: { type: "string", maxLength: 40 }, minItems: 3, maxItems: 3 },
      },
      required: ["steps"],
    },
  },
];

interface Mode {
  label: string;
  options: Partial<GenerateOptions>;
}

interface Case {
  name: string;
  prompt: string;
  free: Mode;
  constrained: Mode;
}

const agent = { path: join(demoAdaptersDir(), "agent.gguf"), scale: 1 };

const cases: Case[] = [
  {
    name: "agent",
    prompt: "Call a tool and set a timer for 15 minutes.",
    free: { label: "agent text", options: { adapters: [agent], maxTokens: 48 } },
    constrained: {
      label: "agent call (own format)",
      options: { adapters: [agent], maxTokens: 48, tools: TIMER, toolFormat: DEMO_TOOL_CALL_FORMATS.agent },
    },
  },
  {
    name: "forced",
    prompt: "Plan the steps to paint a room.",
    free: { label: "base text", options: { maxTokens: 128 } },
    constrained: {
      label: "base forced call",
      options: { maxTokens: 160, tools: PLAN, toolChoice: "required" },
    },
  },
];

interface Sample {
  tokens: number;
  ms: number;
  prompt: number;
  stop: GenerateResult["stopReason"];
}

export async function benchToolCalls(options: { runs: number }): Promise<void> {
  const rounds = Math.max(1, options.runs) * 4;
  const backend = await loadLlamaBackend(1);
  // One sequence per mode and case: each keeps its cached prompt.
  const session = await ModelSession.open(
    backend,
    demoBasePath(),
    { contextSize: 4096, sequences: 4, threads: 1 },
    () => {},
  );
  const rows: BenchRow[] = [];
  try {
    for (const c of cases) {
      const history: ChatTurn[] = [
        { role: "system", text: DEFAULT_SYSTEM_PROMPT },
        { role: "user", text: c.prompt },
      ];
      const run = async (mode: Mode, key: string): Promise<Sample> => {
        const result = await session.generate(
          history,
          { temperature: 0, maxTokens: 64, sessionKey: `${c.name}-${key}`, ...mode.options },
          () => {},
          new AbortController().signal,
        );
        return {
          tokens: result.tokens,
          ms: result.durationMs,
          prompt: result.promptTokensEvaluated,
          stop: result.stopReason,
        };
      };
      // Warm: the prompts are evaluated and cached, the grammars compiled once.
      await run(c.free, "free");
      await run(c.constrained, "tool");
      const free: Sample[] = [];
      const tool: Sample[] = [];
      for (let r = 0; r < rounds; r++) {
        if (r % 2 === 0) {
          free.push(await run(c.free, "free"));
          tool.push(await run(c.constrained, "tool"));
        } else {
          tool.push(await run(c.constrained, "tool"));
          free.push(await run(c.free, "free"));
        }
      }
      const row = (mode: Mode, samples: Sample[], baseline?: number): BenchRow => {
        const rate = median(samples.map((s) => (s.tokens / s.ms) * 1000));
        return {
          name: `${c.name}: ${mode.label}`,
          tokens: median(samples.map((s) => s.tokens)),
          ms: median(samples.map((s) => s.ms)),
          promptTokens: median(samples.map((s) => s.prompt)),
          tokPerS: rate,
          vsFree: baseline === undefined ? 1 : rate / baseline,
          stop: samples[0]!.stop,
        };
      };
      const freeRow = row(c.free, free);
      rows.push(freeRow, row(c.constrained, tool, freeRow.tokPerS as number));
    }
  } finally {
    await session.dispose();
    await backend.llama.dispose();
  }
  report("tool-calls", rows, {
    model: "resources/demo/base.gguf (0.7M params, byte tokenizer)",
    threads: 1,
    rounds,
  });
}
