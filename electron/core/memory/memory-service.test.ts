import type { Database } from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ApiError } from "../../api";
import { ConversationStore } from "../conversations/conversation-store";
import { MessageStore } from "../conversations/message-store";
import { openDatabase } from "../db/database";
import type { GenerateOptions, GenerateResult } from "../engine/types";
import { EventBus } from "../events/event-bus";
import { EventRecorder } from "../../../testing/core/events";
import { FakeEngine } from "../../../testing/engine/fake-engine";
import { MAX_MEMORIES, MEMORY_HEADER, reciprocalRankFusion } from "./memory-retrieval";
import { MemoryService } from "./memory-service";
import { MemoryStore } from "./memory-store";
import { rememberRequest, validProposedFacts } from "./memory-text";

let db: Database;
let store: MemoryStore;
let events: EventRecorder;
let service: MemoryService;
let settings: { memoryEnabled: boolean };
let embedCalls: string[][];
let answers: string[];
let generateCalls: GenerateOptions[];

const estimate = (text: string): number => Math.ceil(text.length / 4);

beforeEach(() => {
  db = openDatabase(":memory:");
  store = new MemoryStore(db);
  const bus = new EventBus();
  events = new EventRecorder((l) => bus.subscribe(l));
  settings = { memoryEnabled: true };
  embedCalls = [];
  answers = [];
  generateCalls = [];
  const fake = new FakeEngine();
  service = new MemoryService({
    store,
    events: bus,
    settings: () => settings,
    embed: (texts) => {
      embedCalls.push(texts);
      return fake.embed(texts);
    },
    modelKey: () => "model-a",
    generateInBackground: (_history, options): Promise<GenerateResult> => {
      generateCalls.push(options);
      const text = answers.shift() ?? '{"facts":[]}';
      return Promise.resolve({
        text,
        stopReason: "eos",
        tokens: 1,
        ttftMs: 1,
        durationMs: 1,
        promptTokensEvaluated: 1,
        contextTokens: 1,
        contextSize: 512,
      });
    },
    log: () => undefined,
  });
});
afterEach(async () => {
  await service.close();
  db.close();
});

describe("memory text rules", () => {
  it("recognises explicit requests at the start of a message only", () => {
    expect(rememberRequest("remember that I live in Lyon.")).toBe("I live in Lyon.");
    expect(rememberRequest("Remember: my cat is called Miso")).toBe("my cat is called Miso");
    expect(rememberRequest("Please remember that\nI am vegetarian")).toBe("I am vegetarian");
    expect(rememberRequest("do you remember that film?")).toBeNull();
    expect(rememberRequest("remembering that is hard")).toBeNull();
    expect(rememberRequest("remember:   ")).toBeNull();
  });

  it("validates model output: JSON shape, length, control characters, invalid UTF-8, duplicates", () => {
    expect(validProposedFacts('{"facts":["Likes tea"," likes  TEA! ","Has a dog"]}', ["has a dog"])).toEqual([
      "Likes tea",
    ]);
    expect(validProposedFacts('{"facts":["a\\u0000b","\\ufffd\\ufffd","x".repeat(3)]}', [])).toEqual([]);
    expect(validProposedFacts(`{"facts":["${"y".repeat(201)}","ok fact"]}`, [])).toEqual(["ok fact"]);
    expect(validProposedFacts('{"facts":["\\ud800 lone"]}', [])).toEqual([]);
    expect(validProposedFacts('{"facts":["a","b","c","d"]}', [])).toEqual([]); // more than 3
    expect(validProposedFacts('{"facts":[1]}', [])).toEqual([]);
    expect(validProposedFacts('{"facts":["cut at max tok', [])).toEqual([]);
    expect(validProposedFacts('{"facts":[],"extra":1}', [])).toEqual([]);
    expect(validProposedFacts("[]", [])).toEqual([]);
  });

  it("fuses rankings by reciprocal rank", () => {
    const a = { id: "a" };
    const b = { id: "b" };
    const c = { id: "c" };
    expect(reciprocalRankFusion([[a, b, c], [b]]).map((x) => x.id)).toEqual(["b", "a", "c"]);
  });
});

describe("MemoryService", () => {
  it("creates, edits, accepts and deletes, emitting memories.changed", () => {
    const m = service.create("  I   like green tea ");
    expect(m).toMatchObject({
      text: "I like green tea",
      source: "user",
      status: "active",
      conversationId: null,
    });
    expect(service.update(m.id, { text: "I like oolong tea" }).text).toBe("I like oolong tea");
    const proposed = store.create({ text: "Has a cat", source: "model", status: "proposed" });
    expect(service.list().map((x) => x.id)).toEqual([proposed.id, m.id]); // proposed first
    expect(service.update(proposed.id, { status: "active" }).status).toBe("active");
    expect(service.delete(m.id)).toBe(true);
    expect(service.delete(m.id)).toBe(false);
    expect(() => service.update("nope", { text: "x" })).toThrow(
      expect.objectContaining({ code: "not_found" }) as ApiError,
    );
    expect(() => service.create("a\u0007b")).toThrow(
      expect.objectContaining({ code: "invalid_input" }) as ApiError,
    );
    expect(events.of("memories.changed")).toHaveLength(4);
  });

  it("takes the query's vector from embedQuery when shared, ranking as it would alone", async () => {
    service.create("The user drinks green tea every morning");
    service.create("The user has a dog called Rex");
    const alone = await service.retrieve("Which tea should I buy?", 4096, estimate);
    const fake = new FakeEngine();
    const asked: string[] = [];
    const calls: string[][] = [];
    const shared = new MemoryService({
      store,
      events: new EventBus(),
      settings: () => settings,
      embed: (texts) => {
        calls.push(texts);
        return fake.embed(texts);
      },
      embedQuery: async (text) => {
        asked.push(text);
        return (await fake.embed([text]))[0]!;
      },
      modelKey: () => "model-b",
      log: () => undefined,
    });
    expect(await shared.retrieve(" Which tea should I buy? ", 4096, estimate)).toEqual(alone);
    expect(asked).toEqual(["Which tea should I buy?"]);
    // The memories' vectors (not cached for model-b yet) in one batch, without the query.
    expect(calls.map((c) => [...c].sort())).toEqual([
      ["The user drinks green tea every morning", "The user has a dog called Rex"],
    ]);
    await shared.retrieve("tea", 4096, estimate);
    expect(calls).toHaveLength(1); // all cached now: only the shared query
  });

  it("retrieves by words and embeddings within the budget, never proposed ones, nothing when off", async () => {
    const tea = service.create("The user drinks green tea every morning");
    service.create("The user has a dog called Rex");
    store.create({ text: "The user loves green tea (proposed)", source: "model", status: "proposed" });
    const got = await service.retrieve("Which tea should I buy?", 4096, estimate);
    expect(got[0]!.id).toBe(tea.id);
    expect(got.map((m) => m.status)).toEqual(["active", "active"]);
    // Vectors are cached per model and text: the second retrieval embeds only the query.
    expect(embedCalls.at(-1)).toHaveLength(3);
    await service.retrieve("tea again", 4096, estimate);
    expect(embedCalls.at(-1)).toEqual(["tea again"]);
    service.update(tea.id, { text: "The user drinks black tea" });
    await service.retrieve("tea", 4096, estimate);
    expect(embedCalls.at(-1)).toEqual(["tea", "The user drinks black tea"]);
    // 15% of a 150-token context: room for the header and one memory only.
    expect(await service.retrieve("tea", 150, estimate)).toHaveLength(1);
    for (let i = 0; i < 20; i++) service.create(`Fact number ${i} about tea`);
    expect(await service.retrieve("tea", 100_000, estimate)).toHaveLength(MAX_MEMORIES);
    settings.memoryEnabled = false;
    expect(await service.retrieve("tea", 4096, estimate)).toEqual([]);
    expect(service.block([tea])).toBe(`${MEMORY_HEADER}\n- The user drinks green tea every morning`);
  });

  it("lists recalled memories oldest first in the block, whatever their rank", () => {
    const at = (id: string, text: string, createdAt: number) => ({
      id,
      text,
      source: "user" as const,
      status: "active" as const,
      conversationId: null,
      messageId: null,
      createdAt,
      updatedAt: createdAt,
    });
    const cats = at("b", "The user has two cats", 1);
    const oslo = at("a", "The user lives in Oslo", 2);
    const runs = at("c", "The user runs on Saturdays", 2);
    const expected = `${MEMORY_HEADER}\n- The user has two cats\n- The user lives in Oslo\n- The user runs on Saturdays`;
    expect(service.block([runs, oslo, cats])).toBe(expected);
    expect(service.block([oslo, cats, runs])).toBe(expected);
  });

  it("proposes validated facts as 'proposed', deduplicated, and not when memory is off", async () => {
    const conversations = new ConversationStore(db);
    const messages = new MessageStore(db);
    const c = conversations.create("T");
    const user = messages.append({
      conversationId: c.id,
      role: "user",
      content: "I have two cats",
      status: "complete",
    });
    service.create("The user has two cats");
    const turn = {
      conversationId: c.id,
      userMessageId: user.id,
      userText: "I have two cats and I live in Oslo",
      prompt: [{ role: "user" as const, text: "I have two cats and I live in Oslo" }],
      answer: "Nice!",
    };
    answers.push('{"facts":["The user has two cats","The user lives in Oslo","\\u0001bad"]}');
    service.proposeAfterAnswer(turn);
    await service.settled();
    expect(generateCalls[0]).toMatchObject({ temperature: 0, jsonSchema: { type: "object" } });
    const proposed = service.list().filter((m) => m.status === "proposed");
    expect(proposed).toEqual([
      expect.objectContaining({
        text: "The user lives in Oslo",
        source: "model",
        conversationId: c.id,
        messageId: user.id,
      }),
    ]);
    // Proposed memories are not used until accepted.
    expect((await service.retrieve("Oslo", 4096, estimate)).map((m) => m.text)).not.toContain(
      "The user lives in Oslo",
    );

    settings.memoryEnabled = false;
    answers.push('{"facts":["The user likes skiing"]}');
    service.proposeAfterAnswer(turn);
    await service.settled();
    expect(generateCalls).toHaveLength(1);
    expect(service.rememberFromMessage("remember that I ski", c.id, user.id)).toBeNull();
  });

  it("drops proposals asked for before another model loads", async () => {
    const c = new ConversationStore(db).create("T");
    const user = new MessageStore(db).append({
      conversationId: c.id,
      role: "user",
      content: "I live in Oslo",
      status: "complete",
    });
    answers.push('{"facts":["The user lives in Oslo"]}');
    service.proposeAfterAnswer({
      conversationId: c.id,
      userMessageId: user.id,
      userText: "I live in Oslo",
      prompt: [{ role: "user", text: "I live in Oslo" }],
      answer: "Nice!",
      adapters: [{ path: "/adapters/agent.gguf", scale: 1 }],
    });
    service.abortProposals();
    await service.settled();
    expect(service.list().filter((m) => m.status === "proposed")).toEqual([]);
  });

  it("remembers explicit requests once, and deletes a conversation's memories on request", () => {
    const conversations = new ConversationStore(db);
    const messages = new MessageStore(db);
    const c = conversations.create("T");
    const other = conversations.create("U");
    const user = messages.append({
      conversationId: c.id,
      role: "user",
      content: "remember that I ski",
      status: "complete",
    });
    const m = service.rememberFromMessage("remember that I ski", c.id, user.id);
    expect(m).toMatchObject({ text: "I ski", source: "user", status: "active", messageId: user.id });
    expect(service.rememberFromMessage("Remember: I SKI", c.id, user.id)).toBeNull();
    store.create({ text: "From elsewhere", source: "model", status: "proposed", conversationId: other.id });
    store.create({ text: "Proposed here", source: "model", status: "proposed", conversationId: c.id });
    service.create("Typed in the panel");
    expect(service.deleteFromConversation(c.id)).toBe(2);
    expect(
      service
        .list()
        .map((x) => x.text)
        .sort(),
    ).toEqual(["From elsewhere", "Typed in the panel"]);
  });
});
