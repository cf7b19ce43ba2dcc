/**
 * `npm run bench -- agent-unseen-tools [--demo DIR] [--sets heldout,everything,train] [--limit N] [--no-builtins]`:
 * does the demo Agent call tools it has never seen (issue 30)? The demo base with its Agent
 * adapter on the real engine (one thread, greedy, 60 tokens), through the app's agent loop
 * (AgentTurns: the catalog's tools under their function names, the adapter's own call format
 * from its manifest, the schema check, the permission step), on three sets:
 *   - heldout: the generator's held-out tool sets (scripts/training/seed/tool-sets.ts; tools,
 *     parameters and wordings no training example has), served by an in-process tool source;
 *   - everything: @modelcontextprotocol/server-everything over stdio through the app's McpHub
 *     (its real tool list), asked by EVERYTHING_REQUESTS (testing/mcp/everything-requests.ts),
 *     written by hand for this bench and never part of any training data; beside it the app's
 *     four built-in tools, as every Agent turn of the app offers them (`--no-builtins`: without);
 *   - train: requests over training tool sets (to tell learning from generalising).
 * A request succeeds when the first step names the right tool and its arguments pass the tool's
 * schema (the step is not "invalid") and hold every value the request states. The first step
 * is never run: the turn is stopped as soon as the step appears.
 * `--demo DIR` measures another build (`npm run build-demo -- --out DIR`); the default is the
 * shipped demo (resources/demo). Writes bench/results/agent-unseen-tools.json.
 */
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ToolStep } from "../electron/api";
import { pinnedAgentRouting } from "../scripts/cycle/self-improve/pinned-agent";
import { DEFAULT_SYSTEM_PROMPT } from "../common/prompts";
import type { ToolCallFormat } from "../common/engine-protocol";
import { ConversationStore } from "../electron/core/conversations/conversation-store";
import { MessageStore } from "../electron/core/conversations/message-store";
import { openDatabase } from "../electron/core/db/database";
import { spawnNodeEngine } from "../electron/core/engine/spawn-node";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { EventBus } from "../electron/core/events/event-bus";
import { AgentTurns } from "../electron/core/tools/agent-loop";
import { BuiltinTools } from "../electron/core/tools/builtin-tools";
import { McpHub } from "../electron/core/tools/mcp/mcp-hub";
import { ToolCatalog } from "../electron/core/tools/tool-catalog";
import { ToolSwitches } from "../electron/core/tools/tool-switches";
import type { CallableTool, ToolSource } from "../electron/core/tools/tool-types";
import { demoDir } from "../native/gguf/demo-files";
import { SEED_DATA_VERSION } from "../scripts/training/seed-data";
import { toolRequests, toolSetHeldout, type ToolRequest } from "../scripts/training/seed/tool-sets";
import { tempDir } from "../testing/core/temp-dir";
import { EVERYTHING_REQUESTS } from "../testing/mcp/everything-requests";
import { everythingSpec } from "../testing/mcp/mcp-test-servers";
import { report, type BenchRow } from "./stats";

type Value = string | number | boolean;

/** One request as the bench asks it, whatever the set. */
interface Case {
  request: string;
  tool: string;
  arguments: Record<string, Value>;
  /** The tools offered (in-process sets); absent: the MCP hub's. */
  tools?: CallableTool[];
}

export interface Outcome {
  called: boolean;
  rightTool: boolean;
  valid: boolean;
  values: boolean;
  success: boolean;
}

const norm = (v: unknown): unknown =>
  typeof v === "string"
    ? v
        .trim()
        .replace(/[.!?]+$/, "")
        .toLowerCase()
    : v;

/** Whether `args` hold every value `expected` states (strings compared trimmed, any case). */
export function holdsValues(args: unknown, expected: Record<string, Value>): boolean {
  if (typeof args !== "object" || args === null) return Object.keys(expected).length === 0;
  const given = args as Record<string, unknown>;
  return Object.entries(expected).every(([k, v]) => norm(given[k]) === norm(v));
}

/** How the first step of a turn answers `c` (null: no call was made). */
export function score(c: Pick<Case, "tool" | "arguments">, step: ToolStep | null): Outcome {
  if (!step) return { called: false, rightTool: false, valid: false, values: false, success: false };
  const rightTool = step.tool === c.tool;
  const valid = step.state !== "invalid";
  const values = rightTool && holdsValues(step.arguments, c.arguments);
  return { called: true, rightTool, valid, values, success: rightTool && valid && values };
}

const asCase = (r: ToolRequest): Case => ({
  request: r.request,
  tool: r.call.name,
  arguments: r.call.arguments,
  tools: r.tools.map((t) => ({
    server: "sets",
    name: t.name,
    description: t.description ?? "",
    inputSchema: t.parameters ?? { type: "object", properties: {} },
  })),
});

/** The app's built-in tools, all four of them (none is run here). */
function appBuiltins(): BuiltinTools {
  const never = (): never => {
    throw new Error("not run by the bench");
  };
  return new BuiltinTools({
    search: { search: () => [] },
    memory: { create: never, delete: never, list: () => [] },
    genui: { markUiAnswer: never, saveDocument: never },
  });
}

/** A tool source whose tools are the current case's set; calls are never run here. */
class SetSource implements ToolSource {
  current: CallableTool[] = [];
  tools(): CallableTool[] {
    return this.current;
  }
  call(): Promise<{ ok: false; error: string }> {
    return Promise.resolve({ ok: false, error: "not run by the bench" });
  }
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      demo: { type: "string" },
      sets: { type: "string", default: "heldout,everything,train" },
      limit: { type: "string" },
      // The app offers its built-in tools beside every MCP server's: so does the everything set.
      "no-builtins": { type: "boolean", default: false },
    },
  });
  const demo = resolve(values.demo ?? demoDir());
  const limit = values.limit === undefined ? Infinity : Number(values.limit);
  const sets = new Set(values.sets.split(","));
  const manifest = JSON.parse(await readFile(join(demo, "adapters", "agent.json"), "utf8")) as {
    toolCallFormat?: ToolCallFormat;
  };
  const format = manifest.toolCallFormat;
  const seed = `${SEED_DATA_VERSION}/agent-tools`;
  const dir = tempDir("macaron-bench-unseen-");
  const db = openDatabase(join(dir.path, "bench.db"));
  const engine = new EngineSupervisor(
    spawnNodeEngine({ env: { ...process.env, MACARON_ENGINE_THREADS: "1" } }),
  );
  const switches = new ToolSwitches(dir.path);
  const hub = new McpHub({ dataDir: dir.path, switches, emit: () => undefined, log: () => undefined });
  const source = new SetSource();
  const events = new EventBus();
  hub.start();
  const rows: BenchRow[] = [];
  const details: Record<string, unknown[]> = {};
  try {
    await engine.load(join(demo, "base.gguf"));
    const conversations = new ConversationStore(db);
    const messages = new MessageStore(db);
    const ask = async (agent: AgentTurns, c: Case): Promise<{ step: ToolStep | null; text: string }> => {
      const plan = agent.planFor(pinnedAgentRouting("bench", "bench"), format);
      if (!plan) throw new Error("no tools to offer");
      const conv = conversations.create("bench");
      const answer = messages.append({
        conversationId: conv.id,
        role: "assistant",
        content: "",
        status: "streaming",
      });
      const stop = new AbortController();
      let step: ToolStep | null = null;
      const unsubscribe = events.subscribe((event, payload) => {
        if (event !== "chat.toolStep" || step) return;
        step = (payload as { step: ToolStep }).step;
        stop.abort();
      });
      try {
        const result = await agent.run({
          plan,
          conversationId: conv.id,
          messageId: answer.id,
          history: [
            { role: "system", text: DEFAULT_SYSTEM_PROMPT },
            { role: "user", text: c.request },
          ],
          options: {
            temperature: 0,
            maxTokens: 60,
            adapters: [{ path: join(demo, "adapters", "agent.gguf"), scale: 1 }],
          },
          engine,
          onToken: () => undefined,
          signal: stop.signal,
        });
        return { step, text: result.text };
      } finally {
        unsubscribe();
      }
    };
    const measure = async (name: string, cases: Case[], tools: ToolSource[]) => {
      const agent = new AgentTurns({
        db,
        tools: new ToolCatalog(switches, tools),
        events,
        isAgentAdapter: (id) => id === "agent",
        maxSteps: 1,
        log: () => undefined,
      });
      const outcomes: Outcome[] = [];
      const listed: unknown[] = [];
      details[name] = listed;
      for (const c of cases.slice(0, limit)) {
        if (c.tools) source.current = c.tools;
        const { step, text } = await ask(agent, c);
        const outcome = score(c, step);
        outcomes.push(outcome);
        listed.push({
          request: c.request,
          expected: { tool: c.tool, arguments: c.arguments },
          got: step ? { tool: step.tool, arguments: step.arguments, state: step.state } : { text },
          success: outcome.success,
        });
      }
      const rate = (k: keyof Outcome) => outcomes.filter((o) => o[k]).length / Math.max(1, outcomes.length);
      rows.push({
        name,
        requests: outcomes.length,
        called: rate("called"),
        rightTool: rate("rightTool"),
        validArguments: outcomes.filter((o) => o.rightTool && o.valid).length / Math.max(1, outcomes.length),
        success: rate("success"),
      });
    };
    if (sets.has("heldout")) await measure("held-out tool sets", toolSetHeldout(seed).map(asCase), [source]);
    if (sets.has("everything")) {
      const status = await hub.add("everything", everythingSpec());
      if (status.state !== "ready") throw new Error(`server-everything did not start: ${status.error}`);
      const listed = status.tools.filter((t) => t.enabled).map((t) => t.name);
      for (const r of EVERYTHING_REQUESTS)
        if (!listed.includes(r.tool))
          throw new Error(`server-everything has no tool ${r.tool}: ${listed.join(", ")}`);
      const builtins = !values["no-builtins"];
      await measure(
        builtins ? "server-everything (stdio) + built-in tools" : "server-everything (stdio)",
        EVERYTHING_REQUESTS.map((r) => ({ ...r })),
        builtins ? [appBuiltins(), hub] : [hub],
      );
    }
    if (sets.has("train"))
      await measure("training tool sets", toolRequests("train", 24, `${seed}/bench`).map(asCase), [source]);
    report("agent-unseen-tools", rows, {
      demo,
      toolCallFormat: format ?? null,
      model: "demo base + agent adapter, greedy, 60 tokens, 1 thread",
      details,
    });
    for (const [name, list] of Object.entries(details)) {
      console.log(`\n${name}`);
      for (const d of list as Array<{ request: string; got: unknown; success: boolean }>)
        console.log(`${d.success ? "ok  " : "miss"} ${d.request} → ${JSON.stringify(d.got)}`);
    }
  } finally {
    await hub.close();
    await engine.close();
    db.close();
    dir.remove();
  }
}
