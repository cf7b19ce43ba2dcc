import { describe, expect, it } from "vitest";
import { ApiError, type Message } from "../../api";
import { pipelineHarness } from "../../../testing/core/pipeline-harness";
import { DEFAULT_SYSTEM_PROMPT } from "../chat/turn-pipeline";
import { ConversationSettingsStore, NO_SETTINGS } from "./conversation-settings";
import { ConversationTransfer } from "./conversation-transfer";
import { MemoryStore } from "../memory/memory-store";

function setup() {
  const harness = pipelineHarness();
  return { ...harness, settings: new ConversationSettingsStore(harness.db) };
}

type Setup = ReturnType<typeof setup>;

async function answer(s: Setup, conversationId: string, text: string): Promise<Message> {
  const done = s.events.next("chat.done", (p) => p.conversationId === conversationId);
  await s.pipeline.send({ conversationId, text });
  return (await done).message;
}

describe("ConversationSettingsStore", () => {
  it("a conversation without settings has the app's; set replaces them, a blank prompt is the app's", () => {
    const s = setup();
    const c = s.conversations.create(undefined);
    expect(s.settings.get(c.id)).toEqual(NO_SETTINGS);
    expect(
      s.settings.set(c.id, { systemPrompt: "You are a pirate.", sampling: { temperature: 1.2, seed: 3 } }),
    ).toEqual({
      systemPrompt: "You are a pirate.",
      sampling: { temperature: 1.2, seed: 3 },
    });
    expect(s.settings.get(c.id)).toEqual({
      systemPrompt: "You are a pirate.",
      sampling: { temperature: 1.2, seed: 3 },
    });
    s.settings.set(c.id, { systemPrompt: "  \n", sampling: {} });
    expect(s.settings.get(c.id)).toEqual(NO_SETTINGS);
    // Deleting the conversation deletes its settings.
    s.conversations.delete(c.id);
    expect(s.db.prepare("SELECT count(*) FROM conversation_settings").pluck().get()).toBe(0);
  });

  it("refuses values out of range with a message naming the setting", () => {
    const s = setup();
    const c = s.conversations.create(undefined);
    const bad = [
      [{ temperature: 2.5 }, /Temperature must be between 0 and 2/],
      [{ topP: -0.1 }, /Top-p must be between 0 and 1/],
      [{ topK: 2.5 }, /Top-k must be a whole number/],
      [{ minP: 1.5 }, /Min-p must be between 0 and 1/],
      [{ repeatPenalty: 0.5 }, /Repeat penalty must be between 1 and 2/],
      [{ maxTokens: 0 }, /Max tokens must be between 1/],
      [{ seed: 1.5 }, /seed must be a whole number/],
    ] as const;
    for (const [sampling, message] of bad) {
      expect(() => s.settings.set(c.id, { systemPrompt: null, sampling })).toThrow(message);
    }
    expect(s.settings.get(c.id)).toEqual(NO_SETTINGS);
  });

  it("presets: saved by name (a same name in any case replaces it), listed by name, deleted by id", () => {
    const s = setup();
    const precise = s.settings.savePreset(
      " Precise ",
      { systemPrompt: null, sampling: { temperature: 0 } },
      10,
    );
    expect(precise).toMatchObject({
      name: "Precise",
      systemPrompt: null,
      sampling: { temperature: 0 },
      createdAt: 10,
    });
    s.settings.savePreset(
      "Creative",
      { systemPrompt: "Be playful.", sampling: { temperature: 1.5, topP: 0.95 } },
      11,
    );
    const replaced = s.settings.savePreset(
      "precise",
      { systemPrompt: null, sampling: { temperature: 0.1 } },
      12,
    );
    expect(replaced).toMatchObject({
      id: precise.id,
      name: "precise",
      sampling: { temperature: 0.1 },
      updatedAt: 12,
    });
    expect(s.settings.listPresets().map((p) => p.name)).toEqual(["Creative", "precise"]);
    expect(() => s.settings.savePreset("  ", NO_SETTINGS)).toThrow(ApiError);
    expect(s.settings.deletePreset(precise.id)).toBe(true);
    expect(s.settings.deletePreset(precise.id)).toBe(false);
    expect(s.settings.listPresets().map((p) => p.name)).toEqual(["Creative"]);
  });
});

describe("conversation settings in the turn pipeline", () => {
  it("every turn uses the conversation's system prompt and sampling; the answer records them", async () => {
    const s = setup();
    const c = s.conversations.create(undefined);
    s.settings.set(c.id, {
      systemPrompt: "Answer like a pirate.",
      sampling: {
        temperature: 0.9,
        topP: 0.8,
        topK: 20,
        minP: 0.05,
        repeatPenalty: 1.1,
        maxTokens: 40,
        seed: 42,
      },
    });
    const first = await answer(s, c.id, "Hello");
    const second = await answer(s, c.id, "Again");
    for (const call of s.engine.calls) {
      // The conversation's prompt takes the app's place: one system turn, at the start.
      expect(call.history[0]).toEqual({ role: "system", text: "Answer like a pirate." });
      expect(call.history.filter((t) => t.role === "system")).toHaveLength(1);
      expect(call.options).toMatchObject({
        temperature: 0.9,
        topP: 0.8,
        topK: 20,
        minP: 0.05,
        repeatPenalty: { penalty: 1.1 },
        maxTokens: 40,
        seed: 42,
      });
    }
    expect(s.engine.calls).toHaveLength(2);
    const recorded = {
      sampling: {
        temperature: 0.9,
        topP: 0.8,
        topK: 20,
        minP: 0.05,
        repeatPenalty: 1.1,
        maxTokens: 40,
        seed: 42,
      },
      systemPrompt: "Answer like a pirate.",
    };
    expect(first.generation).toEqual(recorded);
    // Read back from the database (the turn record), also after the settings change.
    s.settings.set(c.id, NO_SETTINGS);
    const stored = s.messages.list(c.id).filter((m) => m.role === "assistant");
    expect(stored.map((m) => m.generation)).toEqual([recorded, recorded]);
    expect(second.id).toBe(stored[1]!.id);

    const third = await answer(s, c.id, "And now?");
    expect(s.engine.calls[2]!.history[0]).toEqual({ role: "system", text: DEFAULT_SYSTEM_PROMPT });
    expect(s.engine.calls[2]!.options).not.toHaveProperty("seed");
    expect(third.generation).toEqual({ sampling: { temperature: 0.7, maxTokens: 1024 }, systemPrompt: null });
  });

  it("a turn's own sampling wins field by field over the conversation's", async () => {
    const s = setup();
    const c = s.conversations.create(undefined);
    s.settings.set(c.id, { systemPrompt: null, sampling: { temperature: 1.1, seed: 5 } });
    const done = s.events.next("chat.done");
    await s.pipeline.send({ conversationId: c.id, text: "Hi", sampling: { temperature: 0 } });
    await done;
    expect(s.engine.calls[0]!.options).toMatchObject({ temperature: 0, seed: 5 });
  });

  it("refuses a max tokens the loaded model's context cannot hold, before anything is written", async () => {
    const s = setup();
    const c = s.conversations.create(undefined);
    s.settings.set(c.id, { systemPrompt: null, sampling: { maxTokens: 4096 } });
    await expect(s.pipeline.send({ conversationId: c.id, text: "Hi" })).rejects.toThrow(
      /Max tokens must be between 1 and the model's context size \(512\); it is 4096/,
    );
    expect(s.messages.list(c.id)).toEqual([]);
  });

  it("exports carry the settings and an import restores them", async () => {
    const s = setup();
    const c = s.conversations.create("Pirates");
    s.settings.set(c.id, { systemPrompt: "Arr.", sampling: { seed: 9, maxTokens: 30 } });
    await answer(s, c.id, "Hello");
    const transfer = new ConversationTransfer(s.db, {
      conversations: s.conversations,
      messages: s.messages,
      memories: new MemoryStore(s.db),
      settings: s.settings,
    });
    const { json } = transfer.export(c.id);
    const doc = JSON.parse(json) as { conversations: { settings: unknown }[] };
    expect(doc.conversations[0]!.settings).toEqual({
      systemPrompt: "Arr.",
      sampling: { seed: 9, maxTokens: 30 },
    });
    const { conversationIds } = transfer.import(json);
    const imported = conversationIds[0]!;
    expect(s.settings.get(imported)).toEqual({ systemPrompt: "Arr.", sampling: { seed: 9, maxTokens: 30 } });
    const answerOf = (id: string) => s.messages.list(id).find((m) => m.role === "assistant")!;
    expect(answerOf(imported).generation).toEqual(answerOf(c.id).generation);
  });
});
