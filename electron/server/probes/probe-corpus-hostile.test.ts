/**
 * The probe corpus's hostile peers through the headless server over HTTP: each case of hub.json
 * is a fault of the loopback test hub (testing/hub/hf-hub-server.ts) met through hub.search /
 * hub.repo / hub.download, each case of mcp.json a mode of the hostile MCP server
 * (testing/mcp/hostile-mcp-server.mjs) added with mcp.add and its tool called in an Agent turn
 * (the engine is scripted: the calls are the model's part). Each answer must be a clear refusal
 * (the app's error shape and a message; for the hub also "upstream", 502, which names the hub's
 * failure) or a safe result, never 500 or "internal", never a hang, and the server answers
 * afterwards. The cloud's cases: cloud/probe-corpus.test.ts.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  TOOL_RESULT_MAX_CHARS,
  type Download,
  type HubRepo,
  type McpServerStatus,
  type Message,
  type ToolInfo,
} from "../../api";
import { GATED_REPO, startHubServer, type Fault, type HubServer } from "../../../testing/hub/hf-hub-server";
import { REPO_ROOT } from "../../../testing/mcp/mcp-test-servers";
import { suiteDir } from "../../../testing/core/temp-dir";
import type { GenerateScript } from "../../../testing/engine/fake-engine";
import { hubProbes, mcpProbes, type HubProbe, type McpProbe } from "../../../testing/corpora/probes";
import {
  callServer,
  expectClearAnswer,
  expectHealthy,
  type Answer,
  type ScriptedServer,
  startScriptedServer,
} from "../../../testing/server/probe-http";

const HOSTILE_MCP = join(REPO_ROOT, "testing/mcp/hostile-mcp-server.mjs");
/** States a download rests in. */
const ENDED = new Set(["done", "error", "unverified", "cancelled", "paused"]);

let server: ScriptedServer;
const call = (method: string, input: unknown): Promise<Answer> => callServer(server, method, input);

/** A call that must succeed; its value. */
async function ok<T>(what: string, method: string, input: unknown): Promise<T> {
  const answer = await call(method, input);
  expectClearAnswer(what, answer);
  expect(answer.status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(200);
  return answer.body.value as T;
}

/** Polls `check` until it gives a value, for at most `ms`. */
async function until<T>(what: string, check: () => Promise<T | null>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = await check();
    if (found !== null) return found;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("probe corpus: a hostile model hub", () => {
  const repos = suiteDir("macaron-probe-hub-");
  let hub: HubServer;
  /** Another host: serves the gated repo's file without a gate, and logs what it is sent. */
  let other: HubServer;

  beforeAll(async () => {
    hub = await startHubServer({ dir: repos.path });
    other = await startHubServer({
      repos: hub.repos.filter((r) => r.id === GATED_REPO).map((r) => ({ ...r, gated: false })),
    });
    server = await startScriptedServer({ hubEndpoint: hub.url, hubProgressIntervalMs: 50 });
  });
  afterAll(async () => {
    await server?.close();
    await other?.close();
    await hub?.close();
  });

  /** The case's faults, with `@HUB` / `@OTHER` filled in and an answer's `json` as its body. */
  function faultsOf(probe: HubProbe): Fault[] {
    const text = JSON.stringify(Array.isArray(probe.fault) ? probe.fault : [probe.fault])
      .replaceAll("@HUB", hub.url)
      .replaceAll("@OTHER", other.url);
    return (JSON.parse(text) as Record<string, unknown>[]).map((f) => {
      if (f.kind !== "answer" || !("json" in f)) return f as Fault;
      const { json, ...rest } = f;
      return { ...rest, body: JSON.stringify(json) } as Fault;
    });
  }

  const probes = hubProbes();
  it("has the hostile hub's cases", () => {
    expect(probes.length).toBeGreaterThanOrEqual(20);
    expect(new Set(probes.map((p) => p.id)).size).toBe(probes.length);
  });

  for (const probe of probes) {
    it(`${probe.id}: ${probe.why}`, async () => {
      const what = probe.id;
      if (probe.token) await ok(what, "hub.setToken", { token: hub.token });
      const otherFrom = other.requests.length;
      hub.setFault(probe.at, faultsOf(probe));
      let download: Download | null = null;
      try {
        const answer = await call(probe.call.method, probe.call.input);
        expectClearAnswer(what, answer, { serverCodes: ["upstream"] });
        const context = `${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
        if (probe.expect === "refused") {
          expect(answer.status, context).not.toBe(200);
          if (probe.code) expect(answer.body.error?.code, context).toBe(probe.code);
          if (probe.message) expect(answer.body.error?.message, context).toMatch(new RegExp(probe.message));
        } else if (probe.expect === "ok") {
          expect(answer.status, context).toBe(200);
          if (probe.files) {
            const repo = answer.body.value as HubRepo;
            expect(repo.files.map((f) => f.path).sort(), context).toEqual(probe.files);
          }
        } else {
          expect(answer.status, context).toBe(200);
          const started = answer.body.value as Download;
          download = started;
          const ended = await until(`${what}: the download ends`, async () => {
            const list = await ok<Download[]>(what, "hub.downloads", {});
            const d = list.find((x) => x.id === started.id);
            return d && ENDED.has(d.state) ? d : null;
          });
          download = ended;
          const state = probe.expect.slice("download-".length);
          expect(ended.state, JSON.stringify(ended)).toBe(state);
          if (state === "error") {
            expect(ended.error?.length ?? 0, JSON.stringify(ended)).toBeGreaterThan(10);
            if (probe.message) expect(ended.error).toMatch(new RegExp(probe.message));
          }
          // Only a verified download is a model; nothing else is left where models go.
          expect(existsSync(ended.path), ended.path).toBe(state === "done");
        }
        if (probe.noTokenElsewhere) {
          const seen = other.requests.slice(otherFrom);
          expect(seen.length, what).toBeGreaterThan(0);
          expect(
            seen.map((r) => r.authorization),
            what,
          ).toEqual(seen.map(() => undefined));
        }
      } finally {
        hub.setFault(probe.at, null);
        if (probe.token) await ok(what, "hub.setToken", { token: null });
      }
      // Leave no download behind for the next case: cancel (deletes the partial file) or delete the model.
      if (download && download.state !== "done") await ok(what, "hub.cancel", { id: download.id });
      if (download?.state === "done") await ok(what, "models.delete", { path: download.path });
      // Still serving, and the hub is used as before once it behaves.
      await expectHealthy(server);
      const search = await ok<{ repo: string }[]>(what, "hub.search", { query: "demo" });
      expect(search.length).toBeGreaterThan(0);
    });
  }
});

describe("probe corpus: hostile MCP servers", () => {
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  const toolCall = (name: string, args: unknown): GenerateScript => ({
    tokens: [],
    toolCalls: [{ name, arguments: args }],
  });

  /**
   * One Agent turn over HTTP: the engine follows `scripts`, each tool call waiting for permission
   * is allowed once (chat.decideTool), the events come over /api/events. The finished answer.
   */
  async function agentTurn(scripts: GenerateScript[]): Promise<Message> {
    const conversation = await ok<{ id: string }>("agent turn", "conversations.create", {});
    const ws = new WebSocket(`${server.url.replace("http", "ws")}/api/events`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    try {
      const done = new Promise<Message>((resolve) => {
        ws.on("message", (data) => {
          const { event, payload } = JSON.parse((data as Buffer).toString("utf8")) as {
            event: string;
            payload: { conversationId?: string; step?: { id: string; state: string }; message?: Message };
          };
          if (payload.conversationId !== conversation.id) return;
          if (event === "chat.toolStep" && payload.step?.state === "pending") {
            void call("chat.decideTool", {
              conversationId: conversation.id,
              stepId: payload.step.id,
              decision: "once",
            });
          }
          if (event === "chat.done" && payload.message) resolve(payload.message);
        });
      });
      server.engine.scripts.push(...scripts);
      await ok("agent turn", "chat.send", {
        conversationId: conversation.id,
        text: "Use the tools.",
        adapters: { pinned: "agent" },
      });
      return await Promise.race([
        done,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("the Agent turn did not finish within 30 s")), 30_000),
        ),
      ]);
    } finally {
      ws.close();
    }
  }

  const probes = mcpProbes();
  it("has the hostile MCP server's cases", () => {
    expect(probes.map((p) => p.mode).sort()).toEqual(
      ["big-result", "deep-schema", "flood", "huge-description", "huge-schema"].sort(),
    );
  });

  for (const probe of probes) {
    it(`${probe.id}: ${probe.why}`, async () => {
      try {
        await runMcpProbe(probe);
      } finally {
        // Another case's server must not stay: two servers' tools of one name are renamed for the Agent.
        await call("mcp.remove", { name: probe.id });
      }
    });
  }

  async function runMcpProbe(probe: McpProbe): Promise<void> {
    const what = probe.id;
    const name = probe.id;
    const spec = {
      command: process.execPath,
      args: [
        HOSTILE_MCP,
        "--mode",
        probe.mode,
        ...(probe.size === undefined ? [] : ["--size", String(probe.size)]),
      ],
      env: {},
      cwd: REPO_ROOT,
    };
    const added = await ok<McpServerStatus>(what, "mcp.add", { name, spec });
    expect(added.state, JSON.stringify(added).slice(0, 300)).toBe("ready");
    // The status goes out with every change: it stays small whatever the server sent.
    expect(JSON.stringify(added).length).toBeLessThan(20_000);

    const tools = await call("tools.list", {});
    expectClearAnswer(what, tools);
    expect(JSON.stringify(tools.body).length).toBeLessThan(100_000);
    const listed = (tools.body.value as ToolInfo[]).filter((t) => t.server === name);
    const hostile = listed.find((t) => t.name === probe.tool);
    expect(hostile, JSON.stringify(listed).slice(0, 300)).toBeDefined();
    expect(listed.find((t) => t.name === "echo")?.enabled).toBe(true);

    if (probe.expect === "tool-refused") {
      expect(hostile!.enabled).toBe(false);
      expect(hostile!.inputSchema).toEqual({});
      // Turning it on is refused with the reason (the tool's problem), not a server error.
      const on = await call("tools.setEnabled", { server: name, name: probe.tool, enabled: true });
      expectClearAnswer(`${what}: tools.setEnabled`, on);
      expect(on.status).toBe(400);
      expect(on.body.error?.message).toMatch(new RegExp(probe.problem!));
    }
    if (probe.expect === "description-cut") {
      expect(hostile!.enabled).toBe(true);
      expect(hostile!.description.length).toBeLessThanOrEqual(4000);
    }

    // The Agent calls the hostile tool, then the server's plain one.
    const message = await agentTurn([
      toolCall(probe.tool, {}),
      toolCall("echo", { text: "still here" }),
      { tokens: ["Done."] },
    ]);
    const steps = message.steps.map((s) => ({ ...s, result: s.result?.slice(0, 200) }));
    const context = `${what}: ${JSON.stringify(steps).slice(0, 600)}`;
    expect(message.status, context).toBe("complete");
    expect(message.content, context).toBe("Done.");
    const step = message.steps.find((s) => s.tool === probe.tool);
    const echo = message.steps.find((s) => s.tool === "echo");
    expect(echo, context).toMatchObject({ state: "done", result: "still here" });
    expect(step, context).toBeDefined();
    if (probe.expect === "tool-refused") {
      // Never offered, never run: the call ends refused with a sentence.
      expect(["error", "invalid"], context).toContain(step!.state);
      expect(step!.error?.length ?? 0, context).toBeGreaterThan(10);
    } else if (probe.expect === "description-cut") {
      // The server lists `wordy` but answers only echo, stats and big: its own error, as a sentence.
      expect(step!.state === "done" || (step!.error?.length ?? 0) > 10, context).toBe(true);
    } else {
      expect(step!.state, context).toBe("done");
    }
    if (probe.expect === "result-cut") {
      expect(step!.truncated, context).toBe(true);
      expect(step!.result!.length, context).toBeLessThanOrEqual(TOOL_RESULT_MAX_CHARS + 200);
      expect(step!.result, context).toContain("[truncated: ");
    }
    if (probe.expect === "flood-dropped") {
      // `stats` answers after every notification: a bounded number of tools/list came of them.
      const { toolsList } = JSON.parse(step!.result!) as { toolsList: number };
      expect(toolsList, context).toBeLessThan(probe.size! / 2 / 50);
      // The drops are reported once a second, one line per burst.
      const logs = await until(`${what}: the drop report`, async () => {
        const lines = (await ok<{ lines: string[] }>(what, "mcp.logs", { name })).lines;
        return lines.some((l) => /^dropped \d+ notifications/.test(l)) ? lines : null;
      });
      expect(logs.length).toBeLessThan(1000);
    }

    const after = await ok<McpServerStatus[]>(what, "mcp.list", {});
    expect(after.find((s) => s.name === name)?.state).toBe("ready");
    expect(await ok<{ removed: boolean }>(what, "mcp.remove", { name })).toEqual({ removed: true });
    await expectHealthy(server);
  }
});
