/**
 * The agent loop through core's API (chat.send pinned to the demo's Agent, chat.toolStep,
 * chat.decideTool, chat.stop), with the built-in tools on a real SQLite file and a scripted
 * engine that makes the calls a model would: allow once, always, deny, invalid arguments,
 * Stop while asking, the step limit, the trajectory after reopening, export and import.
 */
import { describe, expect, it } from "vitest";
import {
  MAX_TOOL_STEPS,
  type Conversation,
  type ConversationDetail,
  type Memory,
  type Message,
  type ToolStep,
} from "../../api";
import { assembleCore } from "../index";
import { EventRecorder } from "../../../testing/core/events";
import { FakeEngine } from "../../../testing/engine/fake-engine";
import { startFakeCore } from "../../../testing/core/fake-core";
import { FIXTURE_DEMO } from "../../../testing/core/fixture-demo";
import { value } from "../../../testing/core/result-value";
import { DENIED_RESULT } from "../tools/tool-results";
import { testDir } from "../../../testing/core/temp-dir";

const agent = { pinned: "agent" } as const;

async function start() {
  const s = await startFakeCore();
  const conv = await s.call<Conversation>("conversations.create", {});
  /** chat.send pinned to the Agent; resolves with the answer's id (generation goes on). */
  const send = async (text: string, conversationId = conv.id) => {
    const sent = await s.call<{ assistantMessage: Message }>("chat.send", {
      conversationId,
      text,
      adapters: agent,
      sampling: { temperature: 0 },
    });
    return sent.assistantMessage.id;
  };
  const nextStep = (state: ToolStep["state"]) =>
    s.events.next("chat.toolStep", (p) => p.conversationId === conv.id && p.step.state === state);
  const done = () => s.events.next("chat.done", (p) => p.conversationId === conv.id);
  return { ...s, conv, send, nextStep, done };
}

describe("agent turns (scripted engine, built-in tools)", () => {
  it("gives the Agent's turn the tools, asks, runs an allowed call once and continues with its result", async () => {
    const s = await start();
    s.engine.scripts.push(
      {
        tokens: ["Saving", " that."],
        toolCalls: [{ name: "remember", arguments: { text: "I drink green tea" } }],
      },
      { tokens: ["I will", " remember it."] },
    );
    const pending = s.nextStep("pending");
    const finished = s.done();
    const messageId = await s.send("Remember that I drink green tea, with a tool.");
    const asked = await pending;
    expect(asked.messageId).toBe(messageId);
    expect(asked.step).toMatchObject({ index: 0, server: "builtin", tool: "remember", decision: null });
    expect(asked.step.arguments).toEqual({ text: "I drink green tea" });
    // Nothing ran before the user said yes.
    expect((await s.call<Memory[]>("memories.list", {})).map((m) => m.text)).not.toContain(
      "I drink green tea",
    );

    const first = s.engine.calls[0]!;
    expect(first.options.toolChoice).toBe("auto");
    expect(first.options.tools?.map((t) => t.name)).toEqual(
      expect.arrayContaining(["search_conversations", "remember", "forget", "show_ui"]),
    );
    const decided = await s.call<ToolStep>("chat.decideTool", {
      conversationId: s.conv.id,
      stepId: asked.step.id,
      decision: "once",
    });
    expect(decided).toMatchObject({ id: asked.step.id, state: "running", decision: "once" });
    const { message } = await finished;
    expect(message.status).toBe("complete");
    expect(message.content).toBe("Saving that.\n\nI will remember it.");
    expect(message.steps).toHaveLength(1);
    expect(message.steps[0]).toMatchObject({
      state: "done",
      decision: "once",
      truncated: false,
      error: null,
    });
    expect(message.steps[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(message.steps[0]!.result).toContain("I drink green tea");
    expect((await s.call<Memory[]>("memories.list", {})).map((m) => m.text)).toContain("I drink green tea");
    // The engine continued the answer with the call and its result in the history.
    const second = s.engine.calls[1]!;
    expect(second.history.at(-1)).toEqual({
      role: "assistant",
      text: "Saving that.",
      calls: [
        { name: "remember", arguments: { text: "I drink green tea" }, result: message.steps[0]!.result },
      ],
    });
    // Deltas: what the user saw is the saved content.
    const streamed = s.events
      .of("chat.delta")
      .filter((d) => d.messageId === messageId)
      .map((d) => d.delta)
      .join("");
    expect(streamed).toBe(message.content);
    // A second decision on the same step is refused.
    const again = await s.core.dispatch(
      "chat.decideTool",
      { conversationId: s.conv.id, stepId: asked.step.id, decision: "once" },
      { transport: "ipc" },
    );
    expect(again.ok).toBe(false);
  });

  it("denied: the tool never runs and the model hears the user said no; 'always' needs no second prompt", async () => {
    const s = await start();
    s.engine.scripts.push(
      { tokens: [], toolCalls: [{ name: "remember", arguments: { text: "secret plan" } }] },
      { tokens: ["Understood."] },
    );
    let pending = s.nextStep("pending");
    let finished = s.done();
    await s.send("Remember my secret plan with a tool.");
    let asked = await pending;
    await s.call("chat.decideTool", { conversationId: s.conv.id, stepId: asked.step.id, decision: "deny" });
    let { message } = await finished;
    expect(message.steps.map((x) => [x.state, x.decision, x.result])).toEqual([["denied", "deny", null]]);
    expect((await s.call<Memory[]>("memories.list", {})).map((m) => m.text)).not.toContain("secret plan");
    expect(s.engine.calls[1]!.history.at(-1)!.calls![0]!.result).toBe(DENIED_RESULT);
    expect(message.content).toBe("Understood.");

    // "always" for search_conversations: the next call of it in this conversation runs at once.
    const search = { name: "search_conversations", arguments: { query: "plan" } };
    s.engine.scripts.push(
      { tokens: [], toolCalls: [search] },
      { tokens: [], toolCalls: [search] },
      { tokens: ["Found it."] },
    );
    pending = s.nextStep("pending");
    finished = s.done();
    await s.send("Search my chats for the plan, twice.");
    asked = await pending;
    await s.call("chat.decideTool", { conversationId: s.conv.id, stepId: asked.step.id, decision: "always" });
    ({ message } = await finished);
    expect(message.steps.map((x) => [x.index, x.state, x.decision])).toEqual([
      [0, "done", "always"],
      [1, "done", "remembered"],
    ]);
    const prompts = s.events
      .of("chat.toolStep")
      .filter((p) => p.messageId === message.id && p.step.state === "pending");
    expect(prompts).toHaveLength(1);
  });

  it("arguments that break the schema are refused before any call; the model gets the error", async () => {
    const s = await start();
    s.engine.scripts.push(
      { tokens: [], toolCalls: [{ name: "remember", arguments: { text: 42 } }] },
      { tokens: [], toolCalls: [{ name: "no_such_tool", arguments: {} }] },
      { tokens: ["Sorry."] },
    );
    const finished = s.done();
    await s.send("Remember 42 with a tool.");
    const { message } = await finished;
    expect(message.steps.map((x) => [x.tool, x.state, x.decision])).toEqual([
      ["remember", "invalid", null],
      ["no_such_tool", "invalid", null],
    ]);
    expect(message.steps[0]!.error).toMatch(/arguments\.text must be string/);
    expect(s.events.of("chat.toolStep").some((p) => p.step.state === "pending")).toBe(false);
    const results = s.engine.calls.slice(1).map((c) => c.history.at(-1)!.calls![0]!.result);
    expect(results[0]).toMatch(/^Error: the call was not made: arguments\.text must be string/);
    expect(results[1]).toMatch(/no tool named "no_such_tool"/);
  });

  it("Stop while a call waits for permission: the step and the answer end stopped, nothing runs", async () => {
    const s = await start();
    s.engine.scripts.push({
      tokens: ["Let me"],
      toolCalls: [{ name: "remember", arguments: { text: "stop me" } }],
    });
    const pending = s.nextStep("pending");
    const stopped = s.nextStep("stopped");
    const finished = s.done();
    await s.send("Remember stop me with a tool.");
    const asked = await pending;
    expect(await s.call("chat.stop", { conversationId: s.conv.id })).toEqual({ stopped: true });
    expect((await stopped).step.id).toBe(asked.step.id);
    const { message } = await finished;
    expect(message.status).toBe("stopped");
    expect(message.content).toBe("Let me");
    expect(message.steps.map((x) => x.state)).toEqual(["stopped"]);
    expect(s.engine.calls).toHaveLength(1);
    const late = await s.core.dispatch(
      "chat.decideTool",
      { conversationId: s.conv.id, stepId: asked.step.id, decision: "once" },
      { transport: "ipc" },
    );
    expect(late.ok).toBe(false);
    expect((await s.call<Memory[]>("memories.list", {})).map((m) => m.text)).not.toContain("stop me");
  });

  it(`after ${MAX_TOOL_STEPS} calls the model must answer in text (no tools offered)`, async () => {
    const s = await start();
    const call = { name: "search_conversations", arguments: { query: "x" } };
    for (let i = 0; i < MAX_TOOL_STEPS / 2; i++)
      s.engine.scripts.push({ tokens: [], toolCalls: [call, call] });
    // Past the limit a call is ignored: the text is the answer.
    s.engine.scripts.push({ tokens: ["Enough."], toolCalls: [call] });
    const pending = s.nextStep("pending");
    const finished = s.done();
    await s.send("Search forever.");
    const asked = await pending;
    await s.call("chat.decideTool", { conversationId: s.conv.id, stepId: asked.step.id, decision: "always" });
    const { message } = await finished;
    expect(message.steps).toHaveLength(MAX_TOOL_STEPS);
    expect(message.content).toBe("Enough.");
    const rounds = s.engine.calls;
    // Two calls per round: MAX/2 rounds with tools, then one without.
    expect(rounds).toHaveLength(MAX_TOOL_STEPS / 2 + 1);
    expect(rounds.at(-1)!.options.tools).toBeUndefined();
    expect(rounds.slice(0, -1).every((r) => r.options.tools && r.options.tools.length > 0)).toBe(true);
  });

  it("plain answers (chat pinned, or base) get no tools", async () => {
    const s = await start();
    const finished = s.done();
    await s.call("chat.send", { conversationId: s.conv.id, text: "Hi", adapters: { pinned: "chat" } });
    const { message } = await finished;
    expect(message.steps).toEqual([]);
    expect(s.engine.calls[0]!.options.tools).toBeUndefined();
  });
});

describe("built-in tools through the same path", () => {
  it("show_ui makes the answer a UI answer (an invalid document is the call's error); forget deletes by text", async () => {
    const s = await start();
    const doc = {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: { type: "Card", id: "timer", props: { title: "Timer" }, children: [] },
        },
      ],
    };
    s.engine.scripts.push(
      { tokens: [], toolCalls: [{ name: "show_ui", arguments: { document: { blocks: "nope" } } }] },
      { tokens: [], toolCalls: [{ name: "show_ui", arguments: { document: doc } }] },
      { tokens: ["Here it is."] },
    );
    const answers = s.core.subscribe((event, payload) => {
      const { step } = payload as { step?: ToolStep };
      if (event === "chat.toolStep" && step?.state === "pending")
        void s.core.dispatch(
          "chat.decideTool",
          { conversationId: s.conv.id, stepId: step.id, decision: "once" },
          { transport: "ipc" },
        );
    });
    let finished = s.done();
    await s.send("Show me a timer card.");
    let { message } = await finished;
    expect(message.steps.map((x) => [x.tool, x.state])).toEqual([
      ["show_ui", "error"],
      ["show_ui", "done"],
    ]);
    expect(message.steps[0]!.error).toMatch(/not a UI document/);
    expect(message.format).toBe("ui");
    expect(message.ui?.blocks[0]).toMatchObject({ kind: "ui", root: { type: "Card", id: "timer" } });

    await s.call("memories.create", { text: "My cat is called Miso" });
    s.engine.scripts.push(
      { tokens: [], toolCalls: [{ name: "forget", arguments: { text: "my cat is called miso" } }] },
      { tokens: ["Forgotten."] },
    );
    finished = s.done();
    await s.send("Forget my cat's name.");
    ({ message } = await finished);
    answers();
    expect(message.steps[0]).toMatchObject({ tool: "forget", state: "done" });
    expect((await s.call<Memory[]>("memories.list", {})).map((m) => m.text)).not.toContain(
      "My cat is called Miso",
    );
  });

  it("core shutting down while a call waits: the step ends stopped and the answer interrupted", async () => {
    const dir = testDir();
    const ctx = { transport: "ipc" } as const;
    const engine = new FakeEngine();
    const core = await assembleCore({ dataDir: dir, log: () => undefined, ...FIXTURE_DEMO }, () => engine);
    const events = new EventRecorder((l) => core.subscribe(l));
    value(await core.dispatch("models.openDemo", {}, ctx));
    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    engine.scripts.push({ tokens: ["Hm"], toolCalls: [{ name: "remember", arguments: { text: "x" } }] });
    const pending = events.next("chat.toolStep", (p) => p.step.state === "pending");
    value(
      await core.dispatch("chat.send", { conversationId: conv.id, text: "Remember x", adapters: agent }, ctx),
    );
    await pending;
    await core.close();

    const again = await assembleCore(
      { dataDir: dir, log: () => undefined, ...FIXTURE_DEMO },
      () => new FakeEngine(),
    );
    const detail = value<ConversationDetail>(await again.dispatch("conversations.get", { id: conv.id }, ctx));
    const answer = detail.messages.at(-1)!;
    expect(answer.status).toBe("interrupted");
    expect(answer.steps.map((x) => x.state)).toEqual(["stopped"]);
    await again.close();
  });
});

describe("trajectories are kept", () => {
  it("after reopening the database, and through export and import", async () => {
    const dir = testDir();
    const ctx = { transport: "ipc" } as const;
    const open = async () => {
      const engine = new FakeEngine();
      const core = await assembleCore({ dataDir: dir, log: () => undefined, ...FIXTURE_DEMO }, () => engine);
      const events = new EventRecorder((l) => core.subscribe(l));
      const call = async <T>(method: string, input: unknown): Promise<T> =>
        value<T>(await core.dispatch(method, input, ctx));
      await call("models.openDemo", {});
      return { core, engine, events, call };
    };
    const a = await open();
    const conv = await a.call<Conversation>("conversations.create", {});
    a.engine.scripts.push(
      { tokens: ["Looking."], toolCalls: [{ name: "search_conversations", arguments: { query: "tea" } }] },
      { tokens: ["Nothing yet."] },
    );
    const pending = a.events.next("chat.toolStep", (p) => p.step.state === "pending");
    const finished = a.events.next("chat.done");
    await a.call("chat.send", { conversationId: conv.id, text: "Find tea", adapters: agent });
    const asked = await pending;
    await a.call("chat.decideTool", { conversationId: conv.id, stepId: asked.step.id, decision: "always" });
    const { message } = await finished;
    await a.core.close();

    const b = await open();
    const detail = await b.call<ConversationDetail>("conversations.get", { id: conv.id });
    const answer = detail.messages.find((m) => m.id === message.id)!;
    expect(answer.steps).toEqual(message.steps);
    expect(answer.steps[0]).toMatchObject({
      tool: "search_conversations",
      state: "done",
      decision: "always",
    });

    // The grant survived the restart: the same tool runs without asking.
    b.engine.scripts.push(
      { tokens: [], toolCalls: [{ name: "search_conversations", arguments: { query: "coffee" } }] },
      { tokens: ["Ok."] },
    );
    const next = b.events.next("chat.done");
    await b.call("chat.send", { conversationId: conv.id, text: "Find coffee", adapters: agent });
    expect((await next).message.steps.map((x) => x.decision)).toEqual(["remembered"]);

    const exported = await b.call<{ json: string }>("conversations.export", { id: conv.id });
    await b.call("conversations.import", { json: exported.json });
    const copyId = (await b.call<Conversation[]>("conversations.list", {})).find((c) => c.id !== conv.id)!.id;
    const copy = await b.call<ConversationDetail>("conversations.get", { id: copyId });
    const steps = (d: ConversationDetail) =>
      d.messages.flatMap((m) => m.steps.map(({ id: _i, messageId: _m, ...rest }) => rest));
    const original = await b.call<ConversationDetail>("conversations.get", { id: conv.id });
    expect(steps(copy)).toEqual(steps(original));
    expect(steps(copy)).toHaveLength(2);
    const copiedAnswer = copy.messages.find((m) => m.steps.length > 0)!;
    expect(copiedAnswer.steps[0]!.messageId).toBe(copiedAnswer.id);
    await b.core.close();
  });
});
