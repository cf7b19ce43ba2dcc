/**
 * The demo's Agent specialist (trained, pinned) on the real engine calls a tool of a real MCP
 * server (the fixture, over stdio) for a tool-shaped request: the call is grammar-constrained to
 * the offered tools, waits for permission, runs once allowed (the server's calls file shows it),
 * and the answer goes on with the result; a denied call never reaches the server.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Conversation, McpServerStatus, Message, ToolStep } from "../../api";
import { createCore, type Core } from "../index";
import { EventRecorder } from "../../../testing/core/events";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { value } from "../../../testing/core/result-value";
import { suiteDir } from "../../../testing/core/temp-dir";
import { checkArguments } from "../tools/argument-check";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const ctx = { transport: "ipc" } as const;
const dir = suiteDir("macaron-agent-engine-");
/** Where the fixture MCP server writes the calls it receives. */
const callsFile = () => join(dir.path, "calls.jsonl");
let core: Core | undefined;
afterAll(async () => {
  await core?.close();
});

const received = (): { tool: string; arguments: unknown }[] =>
  existsSync(callsFile())
    ? readFileSync(callsFile(), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { tool: string; arguments: unknown })
    : [];

describe("the demo Agent calls tools on the real engine", () => {
  it("calls set_timer for a tool-shaped request, with permission; a denied call never reaches the server", async () => {
    core = await createCore({
      dataDir: join(dir.path, "data"),
      spawnEngine: spawnTestEngine(),
      defaultMaxTokens: 60,
    });
    const call = async <T>(method: string, input: unknown): Promise<T> =>
      value<T>(await core!.dispatch(method, input, ctx));
    const events = new EventRecorder((l) => core!.subscribe(l));
    await call("models.openDemo", {});
    await call("settings.update", { memoryEnabled: false });
    const server = await call<McpServerStatus>("mcp.add", {
      name: "fx",
      spec: {
        command: process.execPath,
        args: [
          "--import",
          "tsx",
          join(ROOT, "testing/mcp/mcp-fixture-server.ts"),
          "--calls-file",
          callsFile(),
        ],
        env: {},
        cwd: ROOT,
      },
    });
    expect(server.state).toBe("ready");
    /** A tool-shaped request in a new conversation; the first call is answered with `decision`. */
    const ask = async (decision: "once" | "deny"): Promise<{ step: ToolStep; message: Message }> => {
      const conv = await call<Conversation>("conversations.create", {});
      const pending = events.next(
        "chat.toolStep",
        (p) => p.conversationId === conv.id && p.step.state === "pending",
      );
      const done = events.next("chat.done", (p) => p.conversationId === conv.id);
      await call("chat.send", {
        conversationId: conv.id,
        text: "Call a tool and set a timer for 15 minutes.",
        adapters: { pinned: "agent" },
        sampling: { temperature: 0 },
      });
      const first = await Promise.race([pending, done]);
      if (!("step" in first))
        throw new Error(`no tool call; the answer was ${JSON.stringify(first.message.content)}`);
      await call("chat.decideTool", { conversationId: conv.id, stepId: first.step.id, decision });
      return { step: first.step, message: (await done).message };
    };

    const allowed = await ask("once");
    console.log(
      `demo Agent: ${JSON.stringify(allowed.step.arguments)} → ${JSON.stringify(allowed.message.content)}`,
    );
    expect(allowed.step).toMatchObject({ server: "fx", tool: "set_timer" });
    const timer = server.tools.find((t) => t.name === "set_timer")!;
    expect(checkArguments(timer.inputSchema, allowed.step.arguments)).toEqual({ ok: true });
    expect(allowed.message.status).toBe("complete");
    // The call itself is not shown as text: what streamed is the answer's text, nothing more.
    const streamed = events
      .of("chat.delta")
      .filter((d) => d.messageId === allowed.message.id)
      .map((d) => d.delta)
      .join("");
    expect(streamed).toBe(allowed.message.content);
    expect(streamed).not.toContain('"set_timer"');
    expect(allowed.message.steps[0]).toMatchObject({ state: "done", decision: "once" });
    expect(allowed.message.steps[0]!.result).toMatch(/^Timer set for \d+ minutes?\.$/);
    expect(received()).toEqual([{ tool: "set_timer", arguments: allowed.step.arguments }]);

    const denied = await ask("deny");
    expect(denied.message.steps[0]).toMatchObject({ tool: "set_timer", state: "denied", decision: "deny" });
    expect(denied.message.status).toBe("complete");
    expect(received()).toHaveLength(1);

    // A later turn of the first conversation gets the earlier answer's call and result in its
    // prompt (chat/prompt.ts): the engine lays them out in the chat format and answers.
    const conversationId = allowed.message.conversationId;
    const next = events.next("chat.done", (p) => p.conversationId === conversationId);
    await call("chat.send", {
      conversationId,
      text: "Thanks! Plan the steps to cook pasta for dinner.",
      adapters: { pinned: "agent" },
      sampling: { temperature: 0 },
    });
    const followUp = (await next).message;
    expect(followUp).toMatchObject({ status: "complete", error: null, steps: [] });
    expect(followUp.content.length).toBeGreaterThan(0);
    expect(followUp.context).toEqual({ strategy: "full", includedMessages: 3, droppedMessages: 0 });
  }, 180_000);
});
