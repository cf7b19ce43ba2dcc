/**
 * Versions on the real engine: the conversation's KV cache follows the shown branch. An edit,
 * an answer given again, or a switch back to an earlier branch evaluates only the tokens after
 * what the cached branch and the new one share, not the whole history.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureFixtureModel } from "../../../native/gguf/fixtures";
import type { Conversation, Message } from "../../api";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { EventRecorder } from "../../../testing/core/events";
import { suiteDir } from "../../../testing/core/temp-dir";
import { promptTokensEvaluated } from "../../../testing/core/turn-timings";
import { value } from "../../../testing/core/result-value";
import { createCore, type Core } from "../index";

const ctx = { transport: "http" } as const;
const dir = suiteDir("macaron-core-versions-");
let core: Core | null = null;
afterAll(async () => {
  await core?.close();
});

/** Start a turn (`method` with `input`) and wait for its answer to end. */
async function turn(c: Core, conversationId: string, method: string, input: object): Promise<Message> {
  const events = new EventRecorder((l) => c.subscribe(l));
  const done = events.next("chat.done", (d) => d.conversationId === conversationId);
  value(await c.dispatch(method as "chat.send", { conversationId, ...input }, ctx));
  const { message } = await done;
  expect(message.status).toBe("complete");
  return message;
}

describe("message versions on the real engine", () => {
  it("edits, regenerations and switches reuse the cached prefix of the shown branch", async () => {
    const model = await ensureFixtureModel(join(dir.path, "models"));
    core = await createCore({
      dataDir: dir.path,
      spawnEngine: spawnTestEngine(),
      initialModel: model,
      defaultMaxTokens: 24,
    });
    const c = core;
    const conv = value<Conversation>(await c.dispatch("conversations.create", {}, ctx));
    const sampling = { temperature: 0 };
    const users: Message[] = [];
    let last: Message | null = null;
    for (let i = 0; i < 8; i++) {
      last = await turn(c, conv.id, "chat.send", {
        text: `Tell me more about topic number ${i}, please.`,
        sampling,
      });
      const detail = value<{ messages: Message[] }>(
        await c.dispatch("conversations.get", { id: conv.id }, ctx),
      );
      users.push(detail.messages.at(-2)!);
    }
    const history = last!.stats!.contextTokens ?? 0;
    expect(history).toBeGreaterThan(500);
    const evaluated = (m: Message) => promptTokensEvaluated(dir.path, m.id);

    // Editing the last question: only the new question is evaluated after the shared prefix.
    const edited = await turn(c, conv.id, "chat.edit", {
      messageId: users[7]!.id,
      text: "Tell me about something else entirely.",
      sampling,
    });
    expect(evaluated(edited)).toBeLessThan(80);
    // Answering it again: the prefix up to the question is cached.
    const again = await turn(c, conv.id, "chat.regenerate", {});
    expect(evaluated(again)).toBeLessThan(80);

    // Back to the original last question, and on from there: the cache held the edited branch,
    // so the original question and answer are evaluated again, not the history before them.
    value(await c.dispatch("chat.showVersion", { messageId: users[7]!.id }, ctx));
    const next = await turn(c, conv.id, "chat.send", { text: "And one last question?", sampling });
    // Printed for the record (ARCHITECTURE.md quotes them).
    console.log(
      `history ${history} tokens; evaluated: edit ${evaluated(edited)}, regenerate ${evaluated(again)}, after switching back ${evaluated(next)}`,
    );
    expect(evaluated(next)).toBeLessThan(140);
    expect(evaluated(next)).toBeLessThan(history / 3);
    // What the engine saw is that branch: the answer's context holds every message of it.
    const detail = value<{ messages: Message[] }>(
      await c.dispatch("conversations.get", { id: conv.id }, ctx),
    );
    expect(detail.messages).toHaveLength(18);
    expect(detail.messages[14]?.id).toBe(users[7]!.id);
  });
});
