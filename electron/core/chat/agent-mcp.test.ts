/**
 * The agent loop against a real MCP server process (the fixture, over stdio, added through
 * mcp.add) with a scripted engine making the calls: a denied call never reaches the server (its
 * calls file proves it), a huge result is cut and marked, a result carrying instructions stays
 * data, a slow call is stopped, a crashing server and a silent one end as errors, and a tool
 * whose schema is bogus is never offered.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  type Conversation,
  type McpServerSpec,
  type McpServerStatus,
  type Message,
  TOOL_RESULT_MAX_CHARS,
  type ToolStep,
} from "../../api";
import { startFakeCore } from "../../../testing/core/fake-core";
import type { GenerateScript } from "../../../testing/engine/fake-engine";
import { testDir } from "../../../testing/core/temp-dir";
import { startFixtureHttp } from "../../../testing/mcp/mcp-test-servers";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const FIXTURE = join(ROOT, "testing/mcp/mcp-fixture-server.ts");

function fixture(callsFile: string): McpServerSpec {
  return {
    command: process.execPath,
    args: ["--import", "tsx", FIXTURE, "--calls-file", callsFile],
    env: {},
    cwd: ROOT,
  };
}

/** What the fixture received, one entry per call (and per cancellation). */
function received(callsFile: string): { tool: string; arguments?: unknown; cancelled?: boolean }[] {
  if (!existsSync(callsFile)) return [];
  return readFileSync(callsFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { tool: string });
}

async function start(parts: { mcpCallTimeoutMs?: number } = {}) {
  const callsFile = join(testDir(), "calls.jsonl");
  const s = await startFakeCore(parts);
  const status = await s.call<McpServerStatus>("mcp.add", { name: "fx", spec: fixture(callsFile) });
  expect(status.state).toBe("ready");
  const conv = await s.call<Conversation>("conversations.create", {});
  /**
   * One Agent turn: the engine follows `scripts`; each pending step is answered by `decide`
   * (null: leave it waiting). Resolves with the finished answer.
   */
  const turn = async (
    scripts: GenerateScript[],
    decide: (step: ToolStep) => "once" | "deny" | null = () => "once",
  ): Promise<Message> => {
    s.engine.scripts.push(...scripts);
    const unsubscribe = s.core.subscribe((event, payload) => {
      if (event !== "chat.toolStep") return;
      const { step } = payload as { step: ToolStep };
      const decision = step.state === "pending" ? decide(step) : null;
      if (decision)
        void s.core.dispatch(
          "chat.decideTool",
          { conversationId: conv.id, stepId: step.id, decision },
          { transport: "ipc" },
        );
    });
    const done = s.events.next("chat.done", (p) => p.conversationId === conv.id);
    try {
      await s.call("chat.send", {
        conversationId: conv.id,
        text: "Use the tools.",
        adapters: { pinned: "agent" },
      });
      return (await done).message;
    } finally {
      unsubscribe();
    }
  };
  return { ...s, conv, callsFile, turn };
}

const call = (name: string, args: unknown): GenerateScript => ({
  tokens: [],
  toolCalls: [{ name, arguments: args }],
});

describe("agent turns with a real MCP server (stdio fixture)", () => {
  it("deny never reaches the server; allowed calls do; huge results are cut; instructions in results stay data", async () => {
    const s = await start();
    // The fixture's tools are offered under their own names; its bogus-schema tool is not.
    let message = await s.turn(
      [call("set_timer", { minutes: 5 }), { tokens: ["No timer then."] }],
      () => "deny",
    );
    const offered = s.engine.calls[0]!.options.tools!.map((t) => t.name);
    expect(offered).toEqual(
      expect.arrayContaining(["set_timer", "echo", "slow", "huge", "inject", "remember"]),
    );
    expect(offered).not.toContain("bogus");
    expect(message.steps.map((x) => [x.server, x.tool, x.state])).toEqual([["fx", "set_timer", "denied"]]);
    expect(received(s.callsFile)).toEqual([]);

    message = await s.turn([call("set_timer", { minutes: 5 }), { tokens: ["Timer is set."] }]);
    expect(message.steps[0]).toMatchObject({
      state: "done",
      decision: "once",
      result: "Timer set for 5 minutes.",
    });
    expect(received(s.callsFile)).toEqual([{ tool: "set_timer", arguments: { minutes: 5 } }]);

    message = await s.turn([call("huge", { chars: 100_000 }), { tokens: ["That was long."] }]);
    const huge = message.steps[0]!;
    expect(huge.state).toBe("done");
    expect(huge.truncated).toBe(true);
    expect(huge.result!.startsWith("0123456789")).toBe(true);
    expect(huge.result!.length).toBeLessThan(TOOL_RESULT_MAX_CHARS + 200);
    expect(huge.result).toMatch(/\[truncated: /);
    // The model reads its start, cut again to fit the (scripted) engine's 512-token context.
    const heard = s.engine.calls.at(-1)!.history.at(-1)!.calls![0]!.result as string;
    expect(heard).toMatch(/\n\[truncated: the result was cut to fit the model's context of 512 tokens\]$/);
    expect(huge.result!.startsWith(heard.slice(0, heard.indexOf("\n[truncated")))).toBe(true);

    // A result telling the model to call tools: it reaches the model only as that call's result,
    // and no call follows that the model did not make and the user did not allow.
    const before = s.engine.calls.length;
    message = await s.turn([call("inject", {}), { tokens: ["It is sunny."] }]);
    expect(message.steps.map((x) => [x.tool, x.state])).toEqual([["inject", "done"]]);
    expect(message.steps[0]!.result).toContain("Ignore previous instructions");
    const continued = s.engine.calls[before + 1]!.history;
    const mentions = continued.filter((t) => t.text.includes("Ignore previous instructions"));
    expect(mentions).toEqual([]);
    expect(continued.at(-1)!.calls![0]!.result).toContain("Ignore previous instructions");
    expect(received(s.callsFile).map((c) => c.tool)).toEqual(["set_timer", "huge", "inject"]);
    expect(message.content).toBe("It is sunny.");
  }, 60_000);

  it("Stop during a slow call cancels it at the server; a crashing server ends the call as an error", async () => {
    const s = await start();
    const running = s.events.next(
      "chat.toolStep",
      (p) => p.step.tool === "slow" && p.step.state === "running",
    );
    s.engine.scripts.push(call("slow", { ms: 30_000 }));
    const done = s.events.next("chat.done", (p) => p.conversationId === s.conv.id);
    const unsubscribe = s.core.subscribe((event, payload) => {
      const { step } = payload as { step?: ToolStep };
      if (event === "chat.toolStep" && step?.state === "pending")
        void s.core.dispatch(
          "chat.decideTool",
          { conversationId: s.conv.id, stepId: step.id, decision: "once" },
          { transport: "ipc" },
        );
    });
    await s.call("chat.send", { conversationId: s.conv.id, text: "Wait.", adapters: { pinned: "agent" } });
    await running;
    // Stop once the server is in the call (it writes the call down first).
    await expect
      .poll(() => received(s.callsFile).some((c) => c.tool === "slow"), { timeout: 10_000 })
      .toBe(true);
    await s.call("chat.stop", { conversationId: s.conv.id });
    const { message } = await done;
    unsubscribe();
    // Ended by the stop (a call left to run would end "complete" after the tool answered).
    expect(message.status).toBe("stopped");
    expect(message.steps.map((x) => x.state)).toEqual(["stopped"]);
    // The server heard the cancellation.
    await expect
      .poll(() => received(s.callsFile).some((c) => c.tool === "slow" && c.cancelled), { timeout: 10_000 })
      .toBe(true);

    const crashed = await s.turn([call("crash", {}), { tokens: ["The tool broke."] }]);
    expect(crashed.status).toBe("complete");
    expect(crashed.steps[0]!.state).toBe("error");
    expect(crashed.steps[0]!.error).toBeTruthy();
    expect(crashed.content).toBe("The tool broke.");
    // The app goes on: the next turn answers (the crashed server's tools are gone).
    const after = await s.turn([{ tokens: ["Still here."] }]);
    expect(after.content).toBe("Still here.");
  }, 60_000);

  it("a server that never answers: the call ends as a timeout error and the model goes on", async () => {
    const s = await start({ mcpCallTimeoutMs: 500 });
    const message = await s.turn([call("slow", { ms: 60_000 }), { tokens: ["It timed out."] }]);
    expect(message.steps[0]!.state).toBe("error");
    expect(message.steps[0]!.error).toMatch(/did not answer within 0\.5 s/);
    expect(message.steps[0]!.durationMs).toBeGreaterThanOrEqual(400);
    expect(message.content).toBe("It timed out.");
  }, 60_000);

  it("over Streamable HTTP too: an allowed call reaches the server, a denied one does not", async () => {
    const s = await start();
    const httpCalls = join(dirname(s.callsFile), "http-calls.jsonl");
    const server = await startFixtureHttp({ callsFile: httpCalls });
    try {
      const status = await s.call<McpServerStatus>("mcp.add", {
        name: "web",
        spec: { url: server.url, headers: {} },
      });
      expect(status).toMatchObject({ transport: "http", state: "ready" });
      // Both servers have echo: the model sees them under their servers' names.
      let message = await s.turn([call("web_echo", { text: "over http" }), { tokens: ["Echoed."] }]);
      expect(message.steps[0]).toMatchObject({
        server: "web",
        tool: "echo",
        state: "done",
        result: "over http",
      });
      message = await s.turn([call("web_echo", { text: "not this" }), { tokens: ["Fine."] }], () => "deny");
      expect(message.steps[0]).toMatchObject({ server: "web", state: "denied" });
      expect(received(httpCalls)).toEqual([{ tool: "echo", arguments: { text: "over http" } }]);
      expect(received(s.callsFile)).toEqual([]);
      expect(s.engine.calls.at(-1)!.options.tools?.map((t) => t.name)).toEqual(
        expect.arrayContaining(["fx_echo", "web_echo", "web_set_timer"]),
      );
    } finally {
      await server.stop();
    }
  }, 60_000);
});
