/**
 * Runs agent episodes (episode-tasks.ts) through the app's own agent loop — `AgentTurns.run` of
 * electron/core/tools/agent-loop.ts, not a copy of it — with the app's tool catalog: the
 * built-in tools (BuiltinTools on a real database, memory service and conversation search) and
 * the episodes' MCP server started over stdio through the McpHub. Every call is checked against
 * its schema by the loop, stored as a tool step, and decided as a user would: allowed once,
 * except the tools the task's user denies. The episode's trace is what the loop stored (each
 * step's tool, arguments, state, result) and its final answer; its rounds (each generation's
 * text and the calls with the results as the model was given them) are what a training line
 * replays.
 */
import { join } from "node:path";
import type { ToolStep } from "../../../electron/api";
import { pinnedAgentRouting } from "./pinned-agent";
import { ConversationSearch } from "../../../electron/core/conversations/conversation-search";
import { ConversationStore } from "../../../electron/core/conversations/conversation-store";
import { MessageStore } from "../../../electron/core/conversations/message-store";
import { openDatabase } from "../../../electron/core/db/database";
import type {
  AdapterUse,
  ChatTurn,
  EngineClient,
  GenerateOptions,
  ToolCallFormat,
  ToolCallRecord,
  ToolDefinition,
} from "../../../electron/core/engine/types";
import { EventBus } from "../../../electron/core/events/event-bus";
import { MemoryService } from "../../../electron/core/memory/memory-service";
import { MemoryStore } from "../../../electron/core/memory/memory-store";
import { AgentTurns } from "../../../electron/core/tools/agent-loop";
import { BuiltinTools } from "../../../electron/core/tools/builtin-tools";
import { McpHub } from "../../../electron/core/tools/mcp/mcp-hub";
import { ToolCatalog } from "../../../electron/core/tools/tool-catalog";
import { ToolSwitches } from "../../../electron/core/tools/tool-switches";
import type { McpServerSpec } from "../../../electron/api/tools";
import type { EpisodeCall, EpisodeTrace } from "./episode-reward";
import { EPISODE_SERVER, type EpisodeTask } from "./episode-tasks";

/** The episode server over stdio (node + tsx, as the repo's other TypeScript MCP servers). */
export function episodeServerSpec(salt: string, root: string): McpServerSpec {
  return {
    command: process.execPath,
    args: ["--import", "tsx", join(root, "scripts/cycle/self-improve/episode-server.ts"), "--salt", salt],
    env: {},
    cwd: root,
  };
}

/** One round of generation: its text and the calls it made, with the results the model got. */
export interface EpisodeRound {
  text: string;
  calls: ToolCallRecord[];
}

/** An episode as run: the trace the reward reads, and the rounds a training line replays. */
export interface Episode extends EpisodeTrace {
  k: number;
  seed: number;
  rounds: EpisodeRound[];
  /** The functions the loop offered the model. */
  tools: ToolDefinition[];
}

export interface EpisodeSampling {
  temperature: number;
  minP?: number;
  maxTokens: number;
}

export interface RunEpisodesOptions {
  tasks: readonly EpisodeTask[];
  /** Episodes per task (K). */
  samples: number;
  /** Episode k of task i gets seed + i·K + k. */
  seed: number;
  sampling: EpisodeSampling;
  /** The engine the loop generates with (the live core's). */
  engine: Pick<EngineClient, "generate"> & Partial<Pick<EngineClient, "countTokens">>;
  /** The live Agent's adapters and its call syntax (its manifest's toolCallFormat). */
  adapters: AdapterUse[];
  toolFormat?: ToolCallFormat;
  systemPrompt: string;
  /** The episode MCP server to start (episodeServerSpec). */
  server: McpServerSpec;
  /** A folder of its own: the database and the hub's files. */
  dataDir: string;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

/** Runs K episodes of every task; throws only when the environment cannot start or on abort. */
export async function runEpisodes(o: RunEpisodesOptions): Promise<Episode[]> {
  const log = o.log ?? (() => undefined);
  const db = openDatabase(join(o.dataDir, "episodes.db"));
  const events = new EventBus();
  const switches = new ToolSwitches(o.dataDir, () => undefined);
  const memory = new MemoryService({
    store: new MemoryStore(db),
    events,
    settings: () => ({ memoryEnabled: true }),
    embed: (texts) => Promise.resolve(texts.map(() => [])),
    modelKey: () => "episodes",
    log: () => undefined,
  });
  const hub = new McpHub({ dataDir: o.dataDir, switches, emit: () => undefined, log: () => undefined });
  const catalog = new ToolCatalog(switches, [
    new BuiltinTools({ search: new ConversationSearch(db), memory }),
    hub,
  ]);
  const agent = new AgentTurns({
    db,
    tools: catalog,
    events,
    isAgentAdapter: () => true,
    log: () => undefined,
  });
  const conversations = new ConversationStore(db);
  const messages = new MessageStore(db);
  try {
    hub.start();
    const status = await hub.add(EPISODE_SERVER, o.server);
    if (status.state !== "ready")
      throw new Error(`the episode server did not start: ${status.error ?? status.state}`);
    const plan = agent.planFor(pinnedAgentRouting("live", "episode"), o.toolFormat);
    if (!plan) throw new Error("no tool to offer the Agent");
    const seeded = new Set<string>();
    const out: Episode[] = [];
    for (const [i, task] of o.tasks.entries()) {
      if (task.seedConversation && !seeded.has(task.seedConversation.text)) {
        seeded.add(task.seedConversation.text);
        const c = conversations.create(task.seedConversation.title);
        messages.append({
          conversationId: c.id,
          role: "user",
          content: task.seedConversation.text,
          status: "complete",
        });
      }
      for (let k = 0; k < o.samples; k++) {
        // Every episode starts from no memories (the memory tasks judge the final state).
        for (const m of memory.list()) memory.delete(m.id);
        const seed = o.seed + i * o.samples + k;
        out.push(await runOne(o, { agent, plan, conversations, messages, events, memory }, task, k, seed));
      }
      log(`episodes: task ${i + 1}/${o.tasks.length} (${task.id}) ran ${o.samples} times`);
    }
    return out;
  } finally {
    agent.close();
    await hub.close();
    db.close();
  }
}

async function runOne(
  o: RunEpisodesOptions,
  env: {
    agent: AgentTurns;
    plan: NonNullable<ReturnType<AgentTurns["planFor"]>>;
    conversations: ConversationStore;
    messages: MessageStore;
    events: EventBus;
    memory: MemoryService;
  },
  task: EpisodeTask,
  k: number,
  seed: number,
): Promise<Episode> {
  const { agent, plan, conversations, messages, events, memory } = env;
  const conv = conversations.create(`episode ${task.id}`);
  messages.append({ conversationId: conv.id, role: "user", content: task.prompt, status: "complete" });
  const answer = messages.append({
    conversationId: conv.id,
    role: "assistant",
    content: "",
    status: "streaming",
  });
  const deny = new Set(task.deny ?? []);
  // The user: allows each call once, denies the task's denied tools.
  const unsubscribe = events.subscribe((event, payload) => {
    if (event !== "chat.toolStep") return;
    const { conversationId, step } = payload as { conversationId: string; step: ToolStep };
    if (conversationId !== conv.id || step.state !== "pending") return;
    agent.decide(conv.id, step.id, deny.has(step.tool) ? "deny" : "once");
  });
  const history: ChatTurn[] = [
    { role: "system", text: o.systemPrompt },
    { role: "user", text: task.prompt },
  ];
  // The loop's last prompt holds every earlier round (text and calls with their results).
  let lastHistory: ChatTurn[] = history;
  let lastText = "";
  const options: GenerateOptions = {
    temperature: o.sampling.temperature,
    seed,
    ...(o.sampling.minP !== undefined ? { minP: o.sampling.minP } : {}),
    maxTokens: o.sampling.maxTokens,
    adapters: o.adapters,
    kvPolicy: "reevaluate",
  };
  let error: string | null = null;
  try {
    await agent.run({
      plan,
      conversationId: conv.id,
      messageId: answer.id,
      history,
      options,
      engine: {
        generate: async (turns, opts, onToken, signal) => {
          lastHistory = turns;
          const result = await o.engine.generate(turns, opts, onToken, signal);
          lastText = result.text;
          return result;
        },
        ...(o.engine.countTokens ? { countTokens: o.engine.countTokens.bind(o.engine) } : {}),
      },
      onToken: () => undefined,
      signal: o.signal ?? new AbortController().signal,
    });
  } catch (err) {
    if (o.signal?.aborted) throw err;
    error = err instanceof Error ? err.message : String(err);
  } finally {
    unsubscribe();
  }
  const rounds: EpisodeRound[] = lastHistory
    .slice(history.length)
    .filter((t) => t.role === "assistant")
    .map((t) => ({ text: t.text, calls: t.calls ?? [] }));
  const calls: EpisodeCall[] = agent.steps.forMessage(answer.id).map((s) => ({
    tool: s.tool,
    server: s.server,
    arguments: s.arguments,
    state: s.state,
    result: s.result,
    error: s.error,
  }));
  const memories = memory.list().map((m) => m.text);
  // Gone once read: a later episode's search must find the stored conversation, not this prompt.
  conversations.delete(conv.id);
  return {
    taskId: task.id,
    k,
    seed,
    calls,
    rounds,
    // The last round's text: after the last call, what the user reads as the answer.
    answer: lastText,
    error,
    memories,
    tools: plan.toolset.definitions,
  };
}
