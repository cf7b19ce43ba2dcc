import { afterEach, describe, expect, it } from "vitest";
import { ConversationStore } from "../conversations/conversation-store";
import { MessageStore } from "../conversations/message-store";
import { openDatabase } from "../db/database";
import { testDir } from "../../../testing/core/temp-dir";
import { ToolStepStore } from "./tool-step-store";

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

function open(path = ":memory:") {
  const db = openDatabase(path);
  cleanups.push(() => db.close());
  return {
    db,
    conversations: new ConversationStore(db),
    messages: new MessageStore(db),
    steps: new ToolStepStore(db),
  };
}

describe("ToolStepStore", () => {
  it("records a step, updates it as it goes, and messages carry their steps in order", () => {
    const path = `${testDir()}/t.db`;
    const s = open(path);
    const c = s.conversations.create("Timers", 1);
    const answer = s.messages.append({
      conversationId: c.id,
      role: "assistant",
      content: "",
      status: "streaming",
    });
    const second = s.steps.create(
      {
        messageId: answer.id,
        index: 1,
        server: "fx",
        tool: "echo",
        arguments: { text: "b" },
        state: "pending",
      },
      20,
    );
    const first = s.steps.create(
      {
        messageId: answer.id,
        index: 0,
        server: "builtin",
        tool: "remember",
        arguments: { text: "a" },
        state: "pending",
      },
      10,
    );
    expect(first).toMatchObject({
      messageId: answer.id,
      index: 0,
      state: "pending",
      decision: null,
      result: null,
      truncated: false,
      durationMs: null,
      createdAt: 10,
    });
    s.steps.update(first.id, { state: "running", decision: "always" });
    const done = s.steps.update(first.id, { state: "done", result: "ok", truncated: true, durationMs: 4.5 });
    expect(done).toMatchObject({
      state: "done",
      decision: "always",
      result: "ok",
      truncated: true,
      durationMs: 4.5,
    });
    s.steps.update(second.id, { state: "denied", decision: "deny" });

    // After reopening the file: the trajectory is part of the message.
    s.db.close();
    cleanups.pop();
    const again = open(path);
    const [listed] = again.messages.list(c.id);
    expect(listed!.steps.map((x) => [x.index, x.tool, x.state, x.arguments])).toEqual([
      [0, "remember", "done", { text: "a" }],
      [1, "echo", "denied", { text: "b" }],
    ]);
    expect(again.messages.get(answer.id)!.steps).toEqual(listed!.steps);
  });

  it("stops steps a killed process left unfinished, and keeps grants per conversation", () => {
    const s = open();
    const c = s.conversations.create("A", 1);
    const other = s.conversations.create("B", 1);
    const m = s.messages.append({
      conversationId: c.id,
      role: "assistant",
      content: "",
      status: "streaming",
    });
    const p = s.steps.create({
      messageId: m.id,
      index: 0,
      server: "fx",
      tool: "t",
      arguments: {},
      state: "pending",
    });
    const r = s.steps.create({
      messageId: m.id,
      index: 1,
      server: "fx",
      tool: "t",
      arguments: {},
      state: "running",
    });
    const i = s.steps.create({
      messageId: m.id,
      index: 2,
      server: "fx",
      tool: "t",
      arguments: {},
      state: "invalid",
      error: "arguments must have required property 'x'",
    });
    expect(s.steps.stopUnfinished()).toBe(2);
    expect([p, r, i].map((x) => s.steps.get(x.id)!.state)).toEqual(["stopped", "stopped", "invalid"]);
    expect(s.steps.get(i.id)!.error).toMatch(/required property/);

    expect(s.steps.isGranted(c.id, "fx", "t")).toBe(false);
    s.steps.grant(c.id, "fx", "t");
    s.steps.grant(c.id, "fx", "t");
    expect(s.steps.isGranted(c.id, "fx", "t")).toBe(true);
    expect(s.steps.isGranted(other.id, "fx", "t")).toBe(false);
    expect(s.steps.isGranted(c.id, "fx", "u")).toBe(false);
    s.conversations.delete(c.id);
    expect(s.steps.get(p.id)).toBeNull();
    expect(s.steps.isGranted(c.id, "fx", "t")).toBe(false);
  });
});
