/**
 * `npm run bench -- v1-system [--adapters DIR]`: do the specialists answer as well however a
 * client asks (issue 26, item 5)? The default contract's held-out cases of each specialist,
 * answered two ways by the demo on the real engine:
 *   - app: the contract run as the app's gate runs it (core, the app's system prompt);
 *   - /v1: through the headless server with the official `openai` client, the specialist as the
 *     model, greedy, and no system message (what most clients send). UI cases ask for the
 *     component document with `response_format: json_schema` (GenUI's catalog schema), since a
 *     client cannot get one otherwise.
 * Both are judged by the same contract (unit tests in the sandbox, facts, tool arguments,
 * degeneracy). `--demo DIR` measures another build of the demo (`npm run build-demo -- --out DIR`).
 * Writes bench/results/v1-system.json.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import type { ChatTurn, GenerateResult } from "../common/engine-protocol";
import { DEFAULT_SYSTEM_PROMPT } from "../electron/core/chat/turn-deps";
import { type ContractTarget, runContract } from "../electron/core/contract/contract-runner";
import type { Contract } from "../electron/core/contract/contract-schema";
import { coreTarget } from "../electron/core/contract/core-target";
import { defaultContract } from "../electron/core/contract/default-contract";
import { startServer } from "../electron/server/start";
import { demoDir } from "../native/gguf/demo-files";
import { spawnTestEngine } from "../testing/engine/real-engine";
import { report } from "./stats";

const DOMAINS = ["chat", "coding", "agent", "ui"] as const;
const V1 = "v1:";

/**
 * A contract target over /v1: a pinned case asks for the adapter as the model; every system turn
 * is left out (the client sends none); the grammar of a UI case becomes a JSON-schema response format.
 */
function v1Target(client: OpenAI, base: string): ContractTarget {
  return {
    resolve: (selection) => {
      const id = typeof selection === "object" && "pinned" in selection ? selection.pinned : null;
      return Promise.resolve({
        routing: {
          mode: id ? "pinned" : "base",
          adapters: id ? [{ id, version: "v1", scale: 1 }] : [],
          confidence: 1,
          reason: "model",
          latencyMs: 0,
        },
        adapters: id ? [{ path: `${V1}${id}`, scale: 1 }] : [],
      });
    },
    generate: async (history: ChatTurn[], options): Promise<GenerateResult> => {
      const model = options.adapters?.[0]?.path.slice(V1.length) ?? base;
      const started = performance.now();
      const completion = await client.chat.completions.create({
        model,
        temperature: 0,
        max_tokens: options.maxTokens,
        messages: history
          .filter((t) => t.role !== "system")
          .map((t) => ({ role: t.role as "user" | "assistant", content: t.text })),
        ...(options.jsonSchema
          ? {
              response_format: {
                type: "json_schema" as const,
                json_schema: {
                  name: "genui",
                  schema: options.jsonSchema,
                  strict: true,
                },
              },
            }
          : {}),
      });
      const choice = completion.choices[0]!;
      return {
        text: choice.message.content ?? "",
        stopReason: choice.finish_reason === "length" ? "maxTokens" : "eos",
        tokens: completion.usage?.completion_tokens ?? 0,
        ttftMs: null,
        durationMs: performance.now() - started,
        promptTokensEvaluated: completion.usage?.prompt_tokens ?? 0,
        contextTokens: 0,
        contextSize: 0,
      };
    },
  };
}

const suiteOf = (contract: Contract, domain: string): Contract => ({
  ...contract,
  cases: contract.cases.filter((c) => c.mode === domain),
});

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { demo: { type: "string" } } });
  if (values.demo) process.env.MACARON_DEMO_DIR = resolve(values.demo);
  const demo = demoDir();
  const dir = await mkdtemp(join(tmpdir(), "macaron-bench-v1-system-"));
  const server = await startServer({
    dataDir: join(dir, "data"),
    rendererDir: join(dir, "no-ui"),
    spawnEngine: spawnTestEngine(),
  });
  try {
    const core = server.core;
    const opened = await core.dispatch("models.openDemo", {}, { transport: "http" });
    if (!opened.ok) throw new Error(opened.error.message);
    const models = (await (
      await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.apiKey}` } })
    ).json()) as { data: { id: string }[] };
    const client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
    const v1 = v1Target(client, models.data[0]!.id);
    const app = coreTarget(core);
    const contract = defaultContract();
    const rows: { name: string; seconds: number }[] = [];
    const byDomain: Record<string, { app: number; v1: number; delta: number; cases: number }> = {};
    for (const domain of DOMAINS) {
      const suite = suiteOf(contract, domain);
      const a = await runContract(suite, { target: app, systemPrompt: DEFAULT_SYSTEM_PROMPT });
      const b = await runContract(suite, { target: v1 });
      byDomain[domain] = {
        app: a.passRate,
        v1: b.passRate,
        delta: Math.round((b.passRate - a.passRate) * 1000) / 1000,
        cases: suite.cases.length,
      };
      rows.push({ name: `${domain}: app`, seconds: a.durationMs / 1000 });
      rows.push({ name: `${domain}: /v1, no system message`, seconds: b.durationMs / 1000 });
      console.log(
        `${domain}: app ${a.passRate.toFixed(2)}, /v1 without a system message ${b.passRate.toFixed(2)}`,
      );
    }
    report("v1-system", rows, { demo, byDomain });
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
