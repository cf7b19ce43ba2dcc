import { describe, expect, it } from "vitest";
import { ApiError, McpServerSpec } from "../../../electron/api";
import type { McpServerStatus, ToolStep } from "../../../electron/api";
import { createAppStore } from "../state/app-store";
import { ChatController } from "./chat-controller";
import { applyDeltas, applyDone, mergeFetched, mergeSent } from "./chat-logic";
import {
  EMPTY_SERVER_FORM,
  applyToolStep,
  formatArguments,
  formatDuration,
  pendingStep,
  resultPreview,
  serverFromForm,
  upsertServer,
  upsertStep,
} from "./tool-logic";
import { message } from "../testing/fixtures";
import { ScriptedApi } from "../testing/scripted-api";

function step(over: Partial<ToolStep> & Pick<ToolStep, "id">): ToolStep {
  return {
    messageId: "a1",
    index: 0,
    server: "fixture",
    tool: "set_timer",
    arguments: { minutes: 15 },
    state: "pending",
    decision: null,
    result: null,
    truncated: false,
    error: null,
    durationMs: null,
    createdAt: 10,
    ...over,
  };
}

const answer = message({ id: "a1", role: "assistant", status: "streaming", createdAt: 2 });
const question = message({ id: "q1", role: "user", content: "set a timer", createdAt: 1 });

describe("tool steps in the transcript", () => {
  it("upserts a step by id into its answer, in index order, and a step never goes back", () => {
    let state = { c1: [question, answer] };
    state = applyToolStep(state, "c1", "a1", step({ id: "s2", index: 1 })) as typeof state;
    state = applyToolStep(state, "c1", "a1", step({ id: "s1", index: 0 })) as typeof state;
    expect(state.c1[1]!.steps.map((s) => s.id)).toEqual(["s1", "s2"]);

    const done = step({ id: "s1", state: "done", decision: "once", result: "ok", durationMs: 4 });
    state = applyToolStep(state, "c1", "a1", done) as typeof state;
    expect(state.c1[1]!.steps[0]).toEqual(done);
    // A late copy of an earlier state (an event delivered after the fetched transcript) loses.
    const before = state;
    state = applyToolStep(
      state,
      "c1",
      "a1",
      step({ id: "s1", state: "running", decision: "once" }),
    ) as typeof state;
    expect(state).toBe(before);
    expect(state.c1[0]).toBe(question);
  });

  it("starts a streaming placeholder when the step overtook chat.send's answer, which then keeps it", () => {
    const state = applyToolStep({ c1: [question] }, "c1", "a1", step({ id: "s1" }), 5);
    expect(state.c1!.map((m) => [m.id, m.status, m.steps.length])).toEqual([
      ["q1", "complete", 0],
      ["a1", "streaming", 1],
    ]);
    const merged = mergeSent(state, [question, answer]);
    expect(merged.c1![1]!.steps.map((s) => s.id)).toEqual(["s1"]);
    // Deltas after the step still grow the text of the same answer.
    const typed = applyDeltas(merged, [{ conversationId: "c1", messageId: "a1", delta: "Timer set." }]);
    expect(typed.c1![1]!.content).toBe("Timer set.");
    expect(typed.c1![1]!.steps).toHaveLength(1);
  });

  it("keeps steps from events over a fetched streaming copy, and takes chat.done's final steps", () => {
    const live = applyToolStep({ c1: [question, answer] }, "c1", "a1", step({ id: "s1", state: "running" }));
    const fetched = mergeFetched(live, "c1", [question, { ...answer, steps: [step({ id: "s1" })] }]);
    expect(fetched.c1![1]!.steps[0]!.state).toBe("running");

    const final = {
      ...answer,
      status: "complete" as const,
      steps: [step({ id: "s1", state: "done", result: "ok" })],
    };
    const finished = applyDone(fetched, final);
    expect(finished.c1![1]!.steps[0]!.state).toBe("done");
    // A final message without steps (say, a rating change) keeps the ones already shown.
    const rated = applyDone(finished, { ...final, steps: [], rating: "good" });
    expect(rated.c1![1]!.steps.map((s) => s.state)).toEqual(["done"]);
  });

  it("finds the pending step of a conversation", () => {
    expect(pendingStep([question, answer])).toBeNull();
    const withSteps = { ...answer, steps: [step({ id: "s1", state: "done" }), step({ id: "s2", index: 1 })] };
    expect(pendingStep([question, withSteps])?.id).toBe("s2");
  });

  it("upsertStep returns the same list when nothing changed", () => {
    const list = [step({ id: "s1", state: "done" })];
    expect(upsertStep(list, step({ id: "s1", state: "pending" }))).toBe(list);
  });
});

describe("ChatController and tool steps", () => {
  it("applies chat.toolStep after the buffered text, and decideTool shows core's answer at once", async () => {
    const flushes: Array<() => void> = [];
    const api = new ScriptedApi({
      "chat.decideTool": ({ stepId, decision }) => {
        if (stepId === "gone") throw new ApiError("not_found", "That tool call is no longer waiting.");
        return step({ id: stepId, state: decision === "deny" ? "denied" : "running", decision });
      },
    });
    const store = createAppStore("open");
    store.setState({ currentId: "c1", messages: { c1: [question, answer] } });
    const chat = new ChatController(api, store, (callback) => {
      flushes.push(callback);
      return () => {};
    });
    chat.onDelta({ conversationId: "c1", messageId: "a1", delta: "Let me set it. " });
    chat.onToolStep({ conversationId: "c1", messageId: "a1", step: step({ id: "s1" }) });
    // The text buffered for the next frame was applied before the step, not after it.
    expect(store.getState().messages.c1![1]!.content).toBe("Let me set it. ");
    expect(store.getState().messages.c1![1]!.steps[0]!.state).toBe("pending");

    expect(await chat.decideTool("c1", "a1", "s1", "deny")).toBeNull();
    expect(api.inputs("chat.decideTool")).toEqual([{ conversationId: "c1", stepId: "s1", decision: "deny" }]);
    expect(store.getState().messages.c1![1]!.steps[0]).toMatchObject({ state: "denied", decision: "deny" });
    expect(await chat.decideTool("c1", "a1", "gone", "once")).toBe("That tool call is no longer waiting.");
    chat.dispose();
  });
});

describe("showing a step", () => {
  it("pretty-prints arguments and shows a model's raw text as it came", () => {
    expect(formatArguments({ minutes: 15, label: "tea" })).toBe('{\n  "minutes": 15,\n  "label": "tea"\n}');
    expect(formatArguments('{"minutes": fifteen')).toBe('{"minutes": fifteen');
    expect(formatArguments(undefined)).toBe("{}");
  });

  it("folds a long result at a line or character limit", () => {
    expect(resultPreview("short")).toEqual({ text: "short", folded: false });
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n");
    const byLines = resultPreview(lines, 10_000, 3);
    expect(byLines).toEqual({ text: "line 0\nline 1\nline 2", folded: true });
    expect(resultPreview("x".repeat(50), 10, 100)).toEqual({ text: "x".repeat(10), folded: true });
    // Exactly at the limits nothing is hidden.
    expect(resultPreview("a\nb\nc", 100, 3).folded).toBe(false);
  });

  it("reads durations", () => {
    expect(formatDuration(12.4)).toBe("12 ms");
    expect(formatDuration(1450)).toBe("1.4 s");
    expect(formatDuration(42_000)).toBe("42 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
    expect(formatDuration(120_000)).toBe("2 min");
  });
});

describe("the Add server form", () => {
  it("builds a stdio spec core accepts: one argument per line, KEY=VALUE environment", () => {
    const result = serverFromForm({
      ...EMPTY_SERVER_FORM,
      name: " fixture ",
      command: "node",
      args: "--import\ntsx\n\n server.ts \n",
      env: "API_KEY=a=b c\n\nDEBUG = 1",
    });
    expect(result).toEqual({
      ok: true,
      name: "fixture",
      spec: {
        type: "stdio",
        command: "node",
        args: ["--import", "tsx", "server.ts"],
        env: { API_KEY: "a=b c", DEBUG: "1" },
      },
    });
    expect(McpServerSpec.safeParse(result.ok && result.spec).success).toBe(true);
  });

  it("builds an HTTP spec with headers", () => {
    const result = serverFromForm({
      ...EMPTY_SERVER_FORM,
      name: "remote",
      transport: "http",
      url: "http://127.0.0.1:3001/mcp",
      headers: "Authorization: Bearer abc:def",
    });
    expect(result).toEqual({
      ok: true,
      name: "remote",
      spec: { type: "http", url: "http://127.0.0.1:3001/mcp", headers: { Authorization: "Bearer abc:def" } },
    });
    expect(McpServerSpec.safeParse(result.ok && result.spec).success).toBe(true);
  });

  it("says what is wrong and where", () => {
    const stdio = { ...EMPTY_SERVER_FORM, name: "s", command: "node" };
    expect(serverFromForm({ ...stdio, name: "" })).toEqual({ ok: false, error: "Give the server a name." });
    expect(serverFromForm({ ...stdio, name: "my server" })).toMatchObject({
      ok: false,
      error: /letters, digits/,
    });
    expect(serverFromForm({ ...stdio, command: "  " })).toMatchObject({ ok: false, error: /command/ });
    expect(serverFromForm({ ...stdio, env: "A=1\nnot a pair" })).toEqual({
      ok: false,
      error: "Environment, line 2: write it as KEY=VALUE.",
    });
    expect(serverFromForm({ ...stdio, env: "A=1\nA=2" })).toMatchObject({
      error: /line 2: "A" is given twice/,
    });
    expect(serverFromForm({ ...stdio, env: "1X=1" })).toMatchObject({ error: /not a variable name/ });
    const http = { ...EMPTY_SERVER_FORM, name: "h", transport: "http" as const };
    expect(serverFromForm({ ...http, url: "localhost:3001" })).toMatchObject({
      error: /http:\/\/ or https:\/\//,
    });
    expect(serverFromForm({ ...http, url: "not a url" })).toMatchObject({ error: /is not a URL/ });
    expect(serverFromForm({ ...http, url: "http://h/mcp", headers: "Bad Header: x" })).toMatchObject({
      error: /Headers, line 1: "Bad Header" is not a header name/,
    });
  });
});

describe("upsertServer", () => {
  const server = (name: string, state: McpServerStatus["state"] = "ready"): McpServerStatus => ({
    name,
    transport: "stdio",
    target: "node x.js",
    envKeys: [],
    state,
    error: null,
    tools: [],
    logLines: 0,
  });

  it("replaces in place, appends new ones and removes by name", () => {
    const list = [server("a"), server("b")];
    expect(upsertServer(list, "a", server("a", "crashed")).map((s) => `${s.name}:${s.state}`)).toEqual([
      "a:crashed",
      "b:ready",
    ]);
    expect(upsertServer(list, "c", server("c")).map((s) => s.name)).toEqual(["a", "b", "c"]);
    expect(upsertServer(list, "a", null).map((s) => s.name)).toEqual(["b"]);
    expect(upsertServer(list, "zzz", null).map((s) => s.name)).toEqual(["a", "b"]);
  });
});
