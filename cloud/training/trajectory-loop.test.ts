/**
 * Trajectories teach the Agent, for real on loopback: the app's core on the trained demo (real
 * node-llama-cpp) with the fixture MCP server over stdio; the user asks the pinned Agent for
 * timers and allows its set_timer calls (one is denied); sharing is on, so each answer is
 * uploaded as agent feedback with its trajectory to the real cloud service; the export turns the
 * allowed ones into tool-call SFT lines (the denied one is counted out); the trainer lays them
 * out with the Agent's call syntax (loss on the calls, not the results) and trains a few steps
 * from the shipped Agent.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { LlamaModel, Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  Conversation,
  McpServerSpec,
  McpServerStatus,
  Message,
  Result,
  ToolStep,
} from "../../electron/api";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { assembleCore, type Core } from "../../electron/core/index";
import { EventRecorder } from "../../testing/core/events";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { suiteDir } from "../../testing/core/temp-dir";
import { loadLlamaBackend } from "../../native/engine/llama-backend";
import { demoAdaptersDir, demoBasePath } from "../../native/gguf/demo-files";
import { fetchExport } from "../prepare/client";
import { startCloud, type RunningCloud } from "../server";
import { readDatasetFile } from "./dataset-file";
import { formatDataset } from "./tokenize-dataset";
import { trainAdapter } from "./train";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const FIXTURE = join(ROOT, "testing/mcp/mcp-fixture-server.ts");
const ctx = { transport: "ipc" } as const;
const ADMIN = "admin-key-trajectory-loop-1234";
const dir = suiteDir("macaron-trajectory-loop-");
const agentManifest = JSON.parse(readFileSync(join(demoAdaptersDir(), "agent.json"), "utf8")) as {
  toolCallFormat: unknown;
};

let cloud: RunningCloud;
let core: Core;
let events: EventRecorder;
/** Measured here: the note's numbers (printed at the end). */
const numbers: Record<string, number> = {};

async function call<T>(method: string, input: unknown = {}): Promise<T> {
  const r: Result<unknown> = await core.dispatch(method, input, ctx);
  if (!r.ok) throw new Error(`${method}: ${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

/** One request to the pinned Agent (in a new conversation unless given); its tool calls get `decision`. */
async function ask(
  text: string,
  decision: "once" | "deny",
  conv?: Conversation,
  pinned = "agent",
): Promise<Message & { conv: Conversation }> {
  conv ??= await call<Conversation>("conversations.create", {});
  const conversationId = conv.id;
  const unsubscribe = core.subscribe((event, payload) => {
    const { step } = payload as { step?: ToolStep };
    if (event === "chat.toolStep" && step?.state === "pending")
      void core.dispatch("chat.decideTool", { conversationId, stepId: step.id, decision }, ctx);
  });
  try {
    const done = events.next("chat.done", (d) => d.conversationId === conversationId);
    await call("chat.send", {
      conversationId,
      text,
      adapters: { pinned },
      sampling: { temperature: 0, maxTokens: 48 },
    });
    return { ...(await done).message, conv };
  } finally {
    unsubscribe();
  }
}

beforeAll(async () => {
  cloud = await startCloud({ dataDir: join(dir.path, "cloud"), adminKey: ADMIN });
  core = await assembleCore(
    {
      dataDir: join(dir.path, "app"),
      initialModel: demoBasePath(),
      adaptersDir: demoAdaptersDir(),
      feedbackEndpoint: cloud.url,
      feedbackTiming: { debounceMs: 3_600_000, statusThrottleMs: 0 },
      updatesInitialDelayMs: 3_600_000,
      log: () => undefined,
    },
    () => new EngineSupervisor(spawnTestEngine()),
  );
  events = new EventRecorder((l) => core.subscribe(l));
  await call("privacy.update", { sharing: "ratings_and_text" });
  const spec: McpServerSpec = {
    command: process.execPath,
    args: ["--import", "tsx", FIXTURE, "--calls-file", join(dir.path, "calls.jsonl")],
    env: {},
    cwd: ROOT,
  };
  const status = await call<McpServerStatus>("mcp.add", { name: "fx", spec });
  expect(status.state).toBe("ready");
}, 240_000);

afterAll(async () => {
  await core?.close();
  await cloud?.close();
});

describe("trajectories → cloud → export → trainer", () => {
  it("uploads the Agent's calls, exports the allowed ones as tool-call SFT, and trains on them", async () => {
    const t0 = performance.now();
    const allowed = [await ask("Call a tool and set a timer for 15 minutes.", "once")];
    allowed.push(await ask("Please set a timer for 25 minutes with a tool.", "once"));
    const denied = await ask("Call a tool and set a timer for 40 minutes.", "deny");
    // Allowed, but the user's next message (to the Chat specialist) corrects it.
    const corrected = await ask("Call a tool and set a timer for 10 minutes.", "once");
    expect(corrected.steps.map((s) => s.state)).toEqual(["done"]);
    await ask("No, I meant 12 minutes.", "deny", corrected.conv, "chat");
    for (const m of allowed) expect(m.steps.map((s) => [s.tool, s.state])).toEqual([["set_timer", "done"]]);
    expect(denied.steps.map((s) => [s.tool, s.state])).toEqual([["set_timer", "denied"]]);
    // The trajectory items are recorded just after chat.done; then the user rates one answer.
    await new Promise((r) => setImmediate(r));
    await call("feedback.rate", { messageId: allowed[0]!.id, rating: "good" });

    // Exactly what will leave: the preview shows the trajectories, redacted, before any upload.
    const preview = await call<{ items: Record<string, unknown>[] }>("privacy.preview");
    const kinds = preview.items.map((i) => i.kind);
    expect(kinds.filter((k) => k === "trajectory")).toHaveLength(4);
    expect(preview.items.find((i) => i.kind === "follow_up")).toMatchObject({
      interaction: { corrected: true },
    });
    expect(preview.items.find((i) => i.kind === "trajectory")).toMatchObject({
      domain: "agent",
      trajectory: { steps: [{ server: "fx", tool: "set_timer", state: "done", decision: "once" }] },
    });
    const t1 = performance.now();
    expect(await call("privacy.syncNow")).toMatchObject({ queued: 0 });
    const t2 = performance.now();

    const exported = await fetchExport({
      url: cloud.url,
      adminKey: ADMIN,
      domain: "agent",
      type: "sft",
      heldoutShare: 0,
      bytesPerToken: 1,
    });
    expect(exported.report.byKind).toMatchObject({ trajectory: 4, rating: 1, follow_up: 1 });
    // The denied call and the corrected answer stay out; the rated answer's line is its trajectory's.
    expect(exported.report.dropped).toMatchObject({ toolFailed: 1, followUpCorrected: 1, duplicate: 1 });
    expect(exported.lines).toHaveLength(2);
    const line = exported.lines[0] as { messages: Record<string, unknown>[]; tools: unknown[] };
    expect(line.messages[1]).toMatchObject({
      role: "assistant",
      tool_calls: [{ type: "function", function: { name: "set_timer", arguments: '{"minutes":15}' } }],
    });
    expect(line.messages[2]).toMatchObject({ role: "tool", content: "Timer set for 15 minutes." });
    const tools = line.tools as { type: string; function: { name: string; parameters?: unknown } }[];
    expect(tools.map((t) => [t.type, t.function.name])).toEqual([["function", "set_timer"]]);
    // The definition the Agent was given: the fixture server's schema for set_timer.
    expect(tools[0]!.function.parameters).toMatchObject({ type: "object", properties: { minutes: {} } });
    const data = join(dir.path, "agent.jsonl");
    writeFileSync(data, exported.jsonl);
    const t3 = performance.now();

    // Laid out as the engine lays out the Agent's calls: its own syntax, the result not learned.
    const backend = await loadLlamaBackend(1);
    const model: LlamaModel = await backend.llama.loadModel({ modelPath: demoBasePath(), vocabOnly: true });
    try {
      const tokenized = await formatDataset(model, await readDatasetFile(data), null, {
        domain: "agent",
        method: "sft",
        maxLength: 2048,
        maxLengthPolicy: "drop",
        trainOut: join(dir.path, "train.tok.jsonl"),
        heldoutOut: join(dir.path, "heldout.tok.jsonl"),
        toolFormat: agentManifest.toolCallFormat as never,
      });
      expect(tokenized.dataset.toolCalls).toMatchObject({ examples: 2, calls: 2, unmaskedResults: 0 });
      const first = JSON.parse(readFileSync(tokenized.trainPath, "utf8").split("\n")[0]!) as {
        ids: Token[];
        spans: [number, number][];
      };
      const learned = first.spans.map(([a, b]) => model.detokenize(first.ids.slice(a, b)));
      expect(learned[0]).toMatch(/^\{"tool":"set_timer","arguments":\{"minutes":\d+\}\}$/);
      expect(learned.join("")).not.toContain("Timer set for");
      const learnedTokens = first.spans.reduce((n, [a, b]) => n + b - a, 0);
      numbers.exampleTokens = first.ids.length;
      numbers.learnedTokens = learnedTokens;
      numbers.resultTokens = tokenized.dataset.toolCalls.resultTokens / tokenized.dataset.toolCalls.calls;
    } finally {
      await model.dispose();
    }

    // A bounded run of the real trainer from the shipped Agent (its call syntax comes along).
    const t4 = performance.now();
    const trained = await trainAdapter(
      {
        base: demoBasePath(),
        data,
        out: join(dir.path, "trained"),
        id: "agent",
        from: join(demoAdaptersDir(), "agent.gguf"),
        steps: 2,
        threads: 1,
        device: "cpu",
        seed: 0,
      },
      () => undefined,
    );
    expect(trained.dataset.toolCalls).toMatchObject({ calls: 2, unmaskedResults: 0 });
    expect(trained.manifest.toolCallFormat).toEqual(agentManifest.toolCallFormat);
    expect(trained.manifest.lineage.dataset.toolCalls).toMatchObject({ examples: 2, calls: 2 });
    expect(trained.report.data.tokens).toBeGreaterThan(0);
    Object.assign(numbers, {
      fiveTurnsMs: t1 - t0,
      uploadMs: t2 - t1,
      exportMs: t3 - t2,
      trainMs: performance.now() - t4,
    });
    console.log(`trajectory loop: ${JSON.stringify(numbers)}`);

    // Deleting what was uploaded takes the trajectories too: nothing is left to export.
    const stored = cloud.store.countItems();
    expect(stored).toBe(exported.report.domains.agent!.items);
    expect(await call("privacy.deleteUploaded")).toEqual({ deletedItems: stored });
    const after = await fetchExport({ url: cloud.url, adminKey: ADMIN, domain: "agent", type: "sft" });
    expect(after.lines).toEqual([]);
    expect(trained.manifest).toMatchObject({
      domain: "agent",
      version: "1.1.0",
      lineage: { parent: "1.0.0" },
    });
  }, 600_000);
});
