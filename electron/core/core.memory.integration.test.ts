/**
 * Memory and context fitting with the real engine (node-llama-cpp on the generated demo model,
 * whose answers are nonsense: the tests check the mechanics, not the wording).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Conversation, Memory, Message } from "../api";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { createCore, type Core } from "./index";
import { PROPOSED_FACTS_SCHEMA, validProposedFacts } from "./memory/memory-text";
import { EventRecorder } from "../../testing/core/events";
import { suiteDir } from "../../testing/core/temp-dir";
import { promptTokensEvaluated } from "../../testing/core/turn-timings";
import { value } from "../../testing/core/result-value";
import { fixtureDemoDir } from "../../testing/core/fixture-demo";

const ctx = { transport: "http" } as const;
const dir = suiteDir("macaron-memory-int-");
let core: Core;
let events: EventRecorder;

const call = async <T>(method: string, input: unknown): Promise<T> =>
  value<T>(await core.dispatch(method, input, ctx));

async function send(conversationId: string, text: string, adapters?: "base"): Promise<Message> {
  const done = events.next("chat.done", (d) => d.conversationId === conversationId);
  await call("chat.send", { conversationId, text, adapters, sampling: { temperature: 0, maxTokens: 16 } });
  return (await done).message;
}

beforeAll(async () => {
  core = await createCore({
    dataDir: dir.path,
    demoDir: await fixtureDemoDir(),
    spawnEngine: spawnTestEngine(),
    defaultMaxTokens: 16,
  });
  events = new EventRecorder((l) => core.subscribe(l));
  await call("models.openDemo", {});
});
afterAll(async () => {
  await core?.close();
});

describe("memory and context with the real engine", () => {
  it("puts a matching memory into the prompt and shows it on the answer", async () => {
    const tea = await call<Memory>("memories.create", { text: "The user likes green tea" });
    const conv = await call<Conversation>("conversations.create", {});
    const answer = await send(conv.id, "Which green tea should I buy?");
    expect(answer.status).toBe("complete");
    expect(answer.memoriesUsed).toEqual([{ id: tea.id, text: tea.text }]);
    expect(answer.context).toEqual({ strategy: "full", includedMessages: 1, droppedMessages: 0 });
  });

  it("memories recalled in another order each turn keep the conversation's cached history", async () => {
    const texts = [
      "The user has two cats called Tom and Jerry",
      "The user lives in Oslo near the fjord",
      "The user runs every Saturday morning",
    ];
    for (const text of texts) await call<Memory>("memories.create", { text });
    const conv = await call<Conversation>("conversations.create", {});
    // Each message matches another memory best, so retrieval ranks them differently each turn.
    const questions = [
      "Tell me about cats please",
      "What is Oslo like in winter?",
      "How far should I run on Saturday?",
      "Do cats like the fjord in Oslo?",
      "Should I run with my cats?",
    ];
    const evaluated: number[] = [];
    let last: Message | null = null;
    for (const question of questions) {
      // The base model every turn: an adapter change is a KV policy matter, tested elsewhere.
      last = await send(conv.id, question, "base");
      expect(last.memoriesUsed?.length ?? 0).toBeGreaterThan(1);
      evaluated.push(promptTokensEvaluated(dir.path, last.id));
    }
    // After the first turn only the new exchange is evaluated, not the history with it.
    const history = last!.stats!.contextTokens ?? 0;
    expect(Math.max(...evaluated.slice(1))).toBeLessThan(60);
    expect(history).toBeGreaterThan(2 * Math.max(...evaluated.slice(1)));
  });

  it("answers grammar-constrained JSON for fact proposals; validation keeps only clean facts", async () => {
    const result = await core.engine.generate(
      [{ role: "user", text: "I live in Oslo and I have two cats." }],
      { temperature: 0, maxTokens: 64, jsonSchema: PROPOSED_FACTS_SCHEMA },
      () => undefined,
    );
    expect(result.text.startsWith("{")).toBe(true);
    // The random model's facts are nonsense bytes; whatever survives validation is clean text.
    for (const fact of validProposedFacts(result.text, [])) {
      expect(fact.length).toBeLessThanOrEqual(200);
      expect(fact).not.toMatch(/[\p{Cc}\uFFFD]/u);
    }
    if (result.stopReason === "eos") expect(() => JSON.parse(result.text) as unknown).not.toThrow();
  });

  it("keeps a conversation longer than the context window working (4096 tokens, ~1 per byte)", async () => {
    const conv = await call<Conversation>("conversations.create", {});
    let last: Message | null = null;
    for (let i = 0; i < 6; i++) {
      last = await send(conv.id, `Part ${i}: ${"lorem ipsum dolor sit amet ".repeat(40)}`);
      expect(last.status).toBe("complete");
    }
    expect(last!.context?.strategy).toBe("sliding-window");
    expect(last!.context!.droppedMessages).toBeGreaterThan(0);
    expect(last!.stats!.contextTokens).toBeLessThanOrEqual(last!.stats!.contextSize!);
    await call("settings.update", { contextStrategy: "summary" });
    const summarized = await send(conv.id, "What did I say first?");
    expect(summarized.status).toBe("complete");
    expect(summarized.context?.strategy).toBe("summary");
    // Memories are proposed in the background: every one of them waits for the user.
    const memories = await call<Memory[]>("memories.list", {});
    expect(memories.filter((m) => m.source === "model").every((m) => m.status === "proposed")).toBe(true);
  });
});
