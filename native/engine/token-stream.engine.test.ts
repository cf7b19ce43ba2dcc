/**
 * Fewer messages per token, in the real engine (node-llama-cpp on the shipped demo model): a
 * request with `stream: false` gets no "token" messages and the same text in its result; a
 * streamed one gets its first token in a message of its own, the rest merged per window, all
 * of them before the result.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoBasePath } from "../gguf/demo-files";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import type { EngineMessage, GenerateResult } from "../../common/engine-protocol";
import { EngineRuntime } from "./runtime";

let backend: LlamaBackend;

beforeAll(async () => {
  backend = await loadLlamaBackend(1);
});

afterAll(async () => {
  await backend?.llama.dispose();
});

/** A runtime with the demo model loaded, and a way to send it requests. */
async function engine(tokenBatchMs: number) {
  const messages: EngineMessage[] = [];
  const runtime = new EngineRuntime(
    (message) => messages.push(message),
    () => Promise.resolve(backend),
    { tokenBatchMs },
  );
  let nextId = 1;
  async function request(body: Record<string, unknown>) {
    const id = nextId++;
    await runtime.handle({ ...body, id });
    const mine = messages.filter((m) => "id" in m && m.id === id);
    const reply = mine.at(-1)!;
    expect(reply.type).toBe("result");
    return {
      mine,
      result: (reply as { value: GenerateResult }).value,
      tokens: mine.flatMap((m) => (m.type === "token" ? [m.text] : [])),
    };
  }
  await request({ type: "load", path: demoBasePath(), contextSize: 512, sequences: 1 });
  return { runtime, request };
}

const STORY = {
  type: "generate",
  history: [{ role: "user", text: "Tell me a story." }],
  options: { temperature: 0, maxTokens: 24 },
};
const PROMPT = { type: "complete", prompt: "Once upon a time", options: { temperature: 0, maxTokens: 24 } };

describe("token messages", () => {
  let unbatched: Awaited<ReturnType<typeof engine>>;

  beforeAll(async () => {
    unbatched = await engine(0);
  });

  afterAll(async () => {
    await unbatched?.runtime.dispose();
  });

  it("stream: false sends no token messages, and the result has the same text", async () => {
    for (const body of [STORY, PROMPT]) {
      const streamed = await unbatched.request(body);
      expect(streamed.tokens.length).toBeGreaterThan(1);
      expect(streamed.tokens.join("")).toBe(streamed.result.text);
      const whole = await unbatched.request({ ...body, stream: false });
      expect(whole.tokens).toEqual([]);
      expect(whole.mine).toHaveLength(1); // the result alone
      expect(whole.result.text).toBe(streamed.result.text);
      expect(whole.result.tokens).toBe(streamed.result.tokens);
    }
  });

  it("batched: the first token alone, the rest merged, all before the result, the same text", async () => {
    const reference = await unbatched.request(STORY);
    // A window longer than the whole generation: everything after the first token is one message.
    const batched = await engine(60_000);
    try {
      const { mine, tokens, result } = await batched.request(STORY);
      expect(result.text).toBe(reference.result.text);
      expect(tokens.join("")).toBe(result.text);
      expect(tokens[0]).toBe(reference.tokens[0]);
      expect(tokens).toHaveLength(2);
      expect(mine.map((m) => m.type)).toEqual(["token", "token", "result"]);
    } finally {
      await batched.runtime.dispose();
    }
  });
});
