/**
 * A UI-mode turn on the real engine (node-llama-cpp in a child process, the tiny demo model):
 * the catalog grammar is accepted, the answer streams as JSON the grammar keeps well-formed,
 * and whatever the random model writes ends as a stored document (usually inert fallbacks:
 * the grammar guarantees syntax, not meaning).
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Conversation, ConversationDetail, Message } from "../../api";
import { PartialJson, StoredDocument } from "../../api/genui";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { createCore, type Core } from "../index";
import { EventRecorder } from "../../../testing/core/events";
import { suiteDir } from "../../../testing/core/temp-dir";
import { value } from "../../../testing/core/result-value";
import { fixtureDemoDir } from "../../../testing/core/fixture-demo";

const ctx = { transport: "http" } as const;
const dir = suiteDir("macaron-genui-engine-");
let core: Core | undefined;
afterAll(async () => {
  await core?.close();
});

describe("GenUI on the real engine", () => {
  it("generates under the catalog grammar and stores a valid (if nonsensical) document", async () => {
    core = await createCore({
      dataDir: dir.path,
      demoDir: await fixtureDemoDir(),
      spawnEngine: spawnTestEngine(),
      defaultMaxTokens: 160,
    });
    const events = new EventRecorder((l) => core!.subscribe(l));
    value(await core.dispatch("models.openDemo", {}, ctx));
    value(await core.dispatch("settings.update", { memoryEnabled: false }, ctx));
    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    const sent = value<{ assistantMessage: Message }>(
      await core.dispatch(
        "chat.send",
        { conversationId: conv.id, text: "Plan my week", format: "ui", sampling: { temperature: 0 } },
        ctx,
      ),
    );
    expect(sent.assistantMessage.format).toBe("ui");
    const { message } = await events.next("chat.done", (d) => d.message.id === sent.assistantMessage.id);
    expect(message.status).toBe("complete");
    const streamed = events
      .of("chat.delta")
      .filter((d) => d.messageId === message.id)
      .map((d) => d.delta)
      .join("");
    // The grammar keeps every prefix well-formed: the streaming parser never hits an error.
    const parser = new PartialJson();
    parser.push(streamed);
    expect(parser.error).toBeNull();
    expect(streamed.startsWith("{")).toBe(true);
    expect(message.ui).not.toBeNull();
    expect(StoredDocument.safeParse(message.ui).success).toBe(true);
    const detail = value<ConversationDetail>(await core.dispatch("conversations.get", { id: conv.id }, ctx));
    expect(detail.messages[1]!.ui).toEqual(message.ui);
    console.log(
      `tiny model UI answer (${streamed.length} chars): ${streamed.slice(0, 160)}…\n→ ${JSON.stringify(message.ui).slice(0, 300)}`,
    );
  }, 90_000);
});
