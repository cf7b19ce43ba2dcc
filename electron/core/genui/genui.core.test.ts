/**
 * GenUI through core's real parts (SQLite, dispatch, pipeline, feedback, transfer) around a
 * scripted engine that answers grammar requests with fixed JSON. The real engine under the
 * catalog grammar is covered by genui.engine.test.ts.
 */
import BetterSqlite3 from "better-sqlite3";
import { join } from "node:path";
import { startFakeCore } from "../../../testing/core/fake-core";
import { afterEach, describe, expect, it } from "vitest";
import type { Conversation, ConversationDetail, Message } from "../../api";
import { CATALOG_VERSION, type UiDocument } from "../../api/genui";
import { runLogDocument, everyComponentDocument } from "../../../testing/samples/genui-samples";
import type { Core } from "../index";
import type { EventRecorder } from "../../../testing/core/events";
import type { FakeEngine } from "../../../testing/engine/fake-engine";
import { GENUI_INSTRUCTIONS } from "../../../common/prompts";

/** expect.stringContaining, typed (it returns any). */
const containing = (text: string): string => expect.stringContaining(text) as string;

const ctx = { transport: "ipc" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  core: Core;
  engine: FakeEngine;
  events: EventRecorder;
  dataDir: string;
  call<T>(method: string, input: unknown): Promise<T>;
  conversation: Conversation;
}

async function setup(): Promise<Setup> {
  const { core, engine, events, dataDir, call } = await startFakeCore();
  // Memory proposals are grammar requests too: keep them out of these scripts.
  await call("settings.update", { memoryEnabled: false });
  const conversation = await call<Conversation>("conversations.create", {});
  return { core, engine, events, dataDir, call, conversation };
}

async function uiTurn(
  s: Setup,
  answer: string,
  input: Record<string, unknown> = { format: "ui" },
): Promise<Message> {
  s.engine.jsonAnswers.push(answer);
  const sent = await s.call<{ assistantMessage: Message }>("chat.send", {
    conversationId: s.conversation.id,
    text: "Log my run",
    ...input,
  });
  const { message } = await s.events.next("chat.done", (d) => d.message.id === sent.assistantMessage.id);
  return message;
}

function database(s: Setup): BetterSqlite3.Database {
  const db = new BetterSqlite3(join(s.dataDir, "macaron.db"), { readonly: true });
  cleanups.push(() => db.close());
  return db;
}

describe("GenUI in core", () => {
  it("answers a UI-mode turn under the catalog grammar and stores the validated document", async () => {
    const s = await setup();
    const doc = everyComponentDocument();
    s.engine.jsonAnswers.push(JSON.stringify(doc));
    const sent = await s.call<{ assistantMessage: Message }>("chat.send", {
      conversationId: s.conversation.id,
      text: "Plan my week",
      format: "ui",
    });
    expect(sent.assistantMessage).toMatchObject({ format: "ui", ui: null, status: "streaming" });
    const { message } = await s.events.next("chat.done");
    expect(message).toMatchObject({ status: "complete", format: "ui", ui: doc });
    expect(message.content).toContain("| Monday | 5 |");
    const call = s.engine.jsonCalls[0]!;
    expect(JSON.stringify(call.options.jsonSchema)).toContain('"$ref":"#/$defs/UiNode"');
    expect(call.history[0]!.text).toContain(GENUI_INSTRUCTIONS);
    const turn = database(s)
      .prepare("SELECT genui_catalog_version AS v, harness_version AS h FROM turns WHERE message_id = ?")
      .get(message.id) as { v: number; h: string };
    expect(turn.v).toBe(CATALOG_VERSION);
    // Read back through the API (and its output schema), the document is unchanged.
    const detail = await s.call<ConversationDetail>("conversations.get", { id: s.conversation.id });
    expect(detail.messages[1]!.ui).toEqual(doc);
    expect(detail.messages[0]!.format).toBeUndefined();
  });

  it("keeps text answers text, and goes UI when the ui adapter is pinned", async () => {
    const s = await setup();
    const text = await s.call<{ assistantMessage: Message }>("chat.send", {
      conversationId: s.conversation.id,
      text: "Hi",
    });
    expect(text.assistantMessage.format).toBeUndefined();
    await s.events.next("chat.done");
    await s.call("conversations.setAdapters", { id: s.conversation.id, adapters: { pinned: "ui" } });
    const message = await uiTurn(s, JSON.stringify(runLogDocument()), {});
    expect(message.format).toBe("ui");
    expect(message.ui?.blocks).toHaveLength(2);
  });

  it("keeps the complete components of a cut-off answer and shows nonsense as one inert node", async () => {
    const s = await setup();
    const full = JSON.stringify(runLogDocument());
    const cut = await uiTurn(s, full.slice(0, full.indexOf('"fields"')));
    expect(cut.ui?.blocks.map((b) => (b.kind === "ui" ? b.root.type : b.kind))).toEqual(["text", "Invalid"]);
    const nonsense = await uiTurn(
      s,
      '{"version":1,"blocks":[{"kind":"ui","root":{"type":"Zzz","id":"q","props":{}}}]}',
    );
    expect(nonsense.ui?.blocks[0]).toMatchObject({
      root: { type: "Invalid", props: { originalType: "Zzz" } },
    });
    const garbage = await uiTurn(s, "]]]");
    expect(garbage.ui?.blocks[0]).toMatchObject({ root: { type: "Invalid", id: "~answer" } });
    expect(garbage.content).toBe("]]]");
  });

  it("turns a form submit into a stored, answered user turn and a feedback signal", async () => {
    const s = await setup();
    const answer = await uiTurn(s, JSON.stringify(runLogDocument()));
    const values = { distance: 5, date: "2024-05-01", feel: "easy", notes: "windy", race: false, effort: 6 };
    s.engine.jsonAnswers.push(JSON.stringify({ version: 1, blocks: [{ kind: "text", markdown: "Saved!" }] }));
    const r = await s.call<{ outcome: string; userMessage: Message; assistantMessage: Message }>(
      "genui.interact",
      {
        conversationId: s.conversation.id,
        messageId: answer.id,
        componentId: "run-form",
        action: "submit",
        values,
      },
    );
    expect(r.outcome).toBe("completed");
    expect(r.userMessage.interaction).toEqual({
      messageId: answer.id,
      componentId: "run-form",
      componentType: "Form",
      label: "Log your run",
      action: "submit",
      values,
      outcome: "completed",
    });
    expect(JSON.parse(r.userMessage.content)).toMatchObject({
      uiEvent: { component: "run-form", action: "submit", values },
    });
    const { message } = await s.events.next("chat.done", (d) => d.message.id === r.assistantMessage.id);
    expect(message.ui?.blocks).toEqual([{ kind: "text", markdown: "Saved!" }]);
    // The engine got the event as the last user turn, in UI mode.
    const last = s.engine.jsonCalls.at(-1)!;
    expect(last.history.at(-1)).toEqual({ role: "user", text: r.userMessage.content });

    const detail = await s.call<ConversationDetail>("conversations.get", { id: s.conversation.id });
    expect(detail.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(detail.messages[2]!.interaction?.values).toEqual(values);
    const db = database(s);
    expect(db.prepare("SELECT outcome, user_message_id AS u FROM genui_events").all()).toEqual([
      { outcome: "completed", u: r.userMessage.id },
    ]);
    const signal = db
      .prepare("SELECT message_id AS m, payload_json AS p FROM feedback_events WHERE kind = 'genui'")
      .get() as { m: string; p: string };
    expect(signal.m).toBe(answer.id);
    expect(JSON.parse(signal.p)).toMatchObject({
      componentId: "run-form",
      action: "submit",
      outcome: "completed",
      values,
    });

    // A second submit is a change; leaving it half-filled is an abandonment, with no turn.
    s.engine.jsonAnswers.push(
      JSON.stringify({ version: 1, blocks: [{ kind: "text", markdown: "Updated" }] }),
    );
    const again = await s.call<{ outcome: string; assistantMessage: Message }>("genui.interact", {
      conversationId: s.conversation.id,
      messageId: answer.id,
      componentId: "run-form",
      action: "submit",
      values: { ...values, distance: 6 },
    });
    expect(again.outcome).toBe("changed");
    await s.events.next("chat.done", (d) => d.message.id === again.assistantMessage.id);
    const left = await s.call<{ outcome: string; userMessage: Message | null }>("genui.interact", {
      conversationId: s.conversation.id,
      messageId: answer.id,
      componentId: "run-form",
      action: "abandon",
      values: { notes: "half" },
    });
    expect(left).toEqual({ outcome: "abandoned", userMessage: null, assistantMessage: null });
    expect(db.prepare("SELECT outcome FROM genui_events ORDER BY created_at, rowid").pluck().all()).toEqual([
      "completed",
      "changed",
      "abandoned",
    ]);
  });

  it("refuses interactions that do not fit the component, storing nothing", async () => {
    const s = await setup();
    const answer = await uiTurn(s, JSON.stringify(runLogDocument()));
    const base = {
      conversationId: s.conversation.id,
      messageId: answer.id,
      componentId: "run-form",
      action: "submit",
    };
    const bad = async (input: Record<string, unknown>) =>
      s.core.dispatch("genui.interact", { ...base, ...input }, ctx);
    expect(await bad({ values: { distance: -3, date: "2024-01-01" } })).toMatchObject({
      ok: false,
      error: { code: "invalid_input", message: containing("at least 0") },
    });
    expect(await bad({ componentId: "nope" })).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    expect(await bad({ action: "explode" })).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    expect(await bad({ messageId: "missing" })).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(database(s).prepare("SELECT COUNT(*) FROM genui_events").pluck().get()).toBe(0);
  });

  it("exports and imports UI answers and interactions (the import path validates the document)", async () => {
    const s = await setup();
    const answer = await uiTurn(s, JSON.stringify(runLogDocument()));
    s.engine.jsonAnswers.push(JSON.stringify({ version: 1, blocks: [{ kind: "text", markdown: "ok" }] }));
    const r = await s.call<{ assistantMessage: Message }>("genui.interact", {
      conversationId: s.conversation.id,
      messageId: answer.id,
      componentId: "run-form",
      action: "submit",
      values: { distance: 3, date: "2024-05-02" },
    });
    await s.events.next("chat.done", (d) => d.message.id === r.assistantMessage.id);
    const { json } = await s.call<{ json: string }>("conversations.export", { id: s.conversation.id });
    await s.call("conversations.import", { json });
    const imported = (await s.call<Conversation[]>("conversations.list", {})).find(
      (c) => c.id !== s.conversation.id,
    )!;
    const detail = await s.call<ConversationDetail>("conversations.get", { id: imported.id });
    const [, ui, user] = detail.messages;
    expect(ui!.ui).toEqual(runLogDocument());
    expect(user!.interaction?.messageId).toBe(ui!.id);

    // A hostile document in an import is normalised node by node, never stored as is.
    const doc = JSON.parse(json) as { conversations: { messages: { ui?: unknown }[] }[] };
    doc.conversations[0]!.messages[1]!.ui = {
      version: 1,
      blocks: [
        { kind: "ui", root: { type: "Link", id: "x", props: { label: "x", url: "javascript:alert(1)" } } },
      ],
    };
    await s.call("conversations.import", { json: JSON.stringify(doc) });
    const third = (await s.call<Conversation[]>("conversations.list", {})).find(
      (c) => c.id !== s.conversation.id && c.id !== imported.id,
    )!;
    const hostile = (await s.call<ConversationDetail>("conversations.get", { id: third.id })).messages[1]!
      .ui as UiDocument;
    expect(hostile.blocks[0]).toMatchObject({ root: { type: "Invalid", id: "x" } });
  });
});
