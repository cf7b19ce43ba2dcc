/**
 * Issue 12 numbers for the agent loop, on the demo model with its Agent adapter (real engine,
 * one thread) and the fixture MCP server over stdio: per turn "Call a tool and set a timer for
 * 15 minutes." the time from the engine's result carrying the tool call to the pending step's
 * `chat.toolStep` event (what the permission prompt waits on: the schema check, the step row, the
 * event), the time from the user's decision to the step's result (the call through the catalog,
 * the hub and the server process), and the generation time of the call round and of the rest.
 *
 *   npm run bench -- agent-tools [--runs N]     (N × 5 turns after one warm-up turn)
 */
import { join } from "node:path";
import type { ToolStep } from "../electron/api";
import { pinnedAgentRouting } from "../scripts/cycle/self-improve/pinned-agent";
import { ConversationStore } from "../electron/core/conversations/conversation-store";
import { MessageStore } from "../electron/core/conversations/message-store";
import { openDatabase } from "../electron/core/db/database";
import { spawnNodeEngine } from "../electron/core/engine/spawn-node";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import type { EngineClient } from "../electron/core/engine/types";
import { EventBus } from "../electron/core/events/event-bus";
import { tempDir } from "../testing/core/temp-dir";
import { AgentTurns } from "../electron/core/tools/agent-loop";
import { McpHub } from "../electron/core/tools/mcp/mcp-hub";
import { fixtureSpec } from "../testing/mcp/mcp-test-servers";
import { ToolCatalog } from "../electron/core/tools/tool-catalog";
import { ToolSwitches } from "../electron/core/tools/tool-switches";
import { DEMO_TOOL_CALL_FORMATS, demoAdaptersDir, demoBasePath } from "../native/gguf/demo-files";
import { median, percentile, report, type BenchRow } from "./stats";

const PROMPT = "Call a tool and set a timer for 15 minutes.";

interface TurnTimes {
  callToPendingMs: number;
  decisionToResultMs: number;
  callRoundMs: number;
  answerRoundMs: number;
}

export async function benchAgentTools(options: { runs: number }): Promise<void> {
  const turns = Math.max(1, options.runs) * 5;
  const dir = tempDir("macaron-bench-agent-");
  const db = openDatabase(join(dir.path, "bench.db"));
  const engine = new EngineSupervisor(
    spawnNodeEngine({ env: { ...process.env, MACARON_ENGINE_THREADS: "1" } }),
  );
  const switches = new ToolSwitches(dir.path);
  const hub = new McpHub({ dataDir: dir.path, switches, emit: () => undefined, log: () => undefined });
  hub.start();
  const events = new EventBus();
  const agent = new AgentTurns({
    db,
    tools: new ToolCatalog(switches, [hub]),
    events,
    isAgentAdapter: (id) => id === "agent",
  });
  try {
    await engine.load(demoBasePath());
    const status = await hub.add("fx", fixtureSpec());
    if (status.state !== "ready") throw new Error(`the fixture did not start: ${status.error}`);
    const plan = agent.planFor(pinnedAgentRouting("bench", "bench"), DEMO_TOOL_CALL_FORMATS.agent);
    if (!plan) throw new Error("no tools to offer");
    const conversations = new ConversationStore(db);
    const messages = new MessageStore(db);
    const times: TurnTimes[] = [];
    for (let i = 0; i <= turns; i++) {
      const conv = conversations.create("bench");
      const answer = messages.append({
        conversationId: conv.id,
        role: "assistant",
        content: "",
        status: "streaming",
      });
      const marks: Record<string, number> = {};
      const rounds: number[] = [];
      // The engine as the loop sees it, timestamping the result that carries the call.
      const timed: Pick<EngineClient, "generate"> = {
        generate: async (history, opts, onToken, signal) => {
          const start = performance.now();
          const result = await engine.generate(history, opts, onToken, signal);
          rounds.push(performance.now() - start);
          if (result.stopReason === "toolCalls") marks.call ??= performance.now();
          return result;
        },
      };
      const unsubscribe = events.subscribe((event, payload) => {
        if (event !== "chat.toolStep") return;
        const { step } = payload as { step: ToolStep };
        if (step.state === "pending" && marks.pending === undefined) {
          marks.pending = performance.now();
          marks.decided = performance.now();
          agent.decide(conv.id, step.id, "once");
        } else if ((step.state === "done" || step.state === "error") && marks.result === undefined) {
          marks.result = performance.now();
        }
      });
      try {
        await agent.run({
          plan,
          conversationId: conv.id,
          messageId: answer.id,
          history: [
            { role: "system", text: "You are Macaron, a helpful local assistant." },
            { role: "user", text: PROMPT },
          ],
          options: {
            temperature: 0,
            maxTokens: 60,
            adapters: [{ path: join(demoAdaptersDir(), "agent.gguf"), scale: 1 }],
          },
          engine: timed,
          onToken: () => undefined,
          signal: new AbortController().signal,
        });
      } finally {
        unsubscribe();
      }
      const { call, pending, decided, result } = marks;
      if (call === undefined || pending === undefined || decided === undefined || result === undefined)
        throw new Error(`turn ${i}: the demo Agent made no call`);
      // Turn 0 warms the engine, the adapter and the server.
      if (i > 0)
        times.push({
          callToPendingMs: pending - call,
          decisionToResultMs: result - decided,
          callRoundMs: rounds[0]!,
          answerRoundMs: rounds.slice(1).reduce((a, b) => a + b, 0),
        });
    }
    const row = (name: string, pick: (t: TurnTimes) => number): BenchRow => {
      const values = times.map(pick);
      return {
        name,
        turns: values.length,
        medianMs: median(values),
        p90Ms: percentile(values, 90),
        maxMs: Math.max(...values),
      };
    };
    report(
      "agent-tools",
      [
        row("model's call → pending step event", (t) => t.callToPendingMs),
        row("decision → result (stdio fixture)", (t) => t.decisionToResultMs),
        row("generation: the call round", (t) => t.callRoundMs),
        row("generation: after the result", (t) => t.answerRoundMs),
      ],
      { prompt: PROMPT, model: "demo base + agent adapter", threads: 1 },
    );
  } finally {
    await hub.close();
    await engine.close();
    db.close();
    dir.remove();
  }
}
