/**
 * /v1/responses end to end: the official `openai` client's `responses.create` and
 * `responses.stream` against the headless server on loopback, the real engine (node-llama-cpp)
 * with the trained demo that ships with the app (its base and its Agent adapter).
 */
import OpenAI, { APIError } from "openai";
import type { ResponseInputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../../core/chat/turn-deps";
import { checkArguments } from "../../core/tools/argument-check";
import type { RunningServer } from "../start";
import { startDemoServer, type DemoServer } from "../../../testing/server/demo-server";

let demo: DemoServer;
let server: RunningServer;
let client: OpenAI;
/** The base model's id on /v1 (its file name). */
let base: string;

beforeAll(async () => {
  demo = await startDemoServer("v1-responses");
  ({ server, base } = demo);
  client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await demo?.close();
});

const timerParams = {
  type: "object",
  properties: { minutes: { type: "integer" } },
  required: ["minutes"],
  additionalProperties: false,
};
const setTimer: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "set_timer",
  description: "Start a timer",
  parameters: timerParams,
  strict: true,
};

describe("/v1/responses with the real engine", () => {
  it("answers responses.create with text and exact-looking usage", async () => {
    const response = await client.responses.create({
      model: base,
      input: "Say hello.",
      temperature: 0,
      max_output_tokens: 16,
    });
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(["completed", "incomplete"]).toContain(response.status);
    const usage = response.usage!;
    expect(usage.input_tokens).toBeGreaterThan(3);
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBeLessThanOrEqual(16);
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    expect(usage.output_tokens_details.reasoning_tokens).toBe(0);
    // Cut at the limit: incomplete, as OpenAI reports it.
    if (usage.output_tokens === 16) expect(response.incomplete_details?.reason).toBe("max_output_tokens");
  });

  it("evaluates only the prompt's last token again when a request repeats the previous one (KV cache reused)", async () => {
    // Issue 18: a /v1 request that missed the cache would evaluate its whole prompt again
    // every time. cached_tokens = prompt tokens - those the engine evaluated.
    const ask = () =>
      client.responses.create({
        model: base,
        input: "Count from one to five, slowly.",
        temperature: 0,
        max_output_tokens: 8,
      });
    await ask();
    const again = (await ask()).usage!;
    // LlamaChat decodes the prompt's last token again for its logits: one token, never more.
    expect(again.input_tokens_details.cached_tokens).toBe(again.input_tokens - 1);
  });

  it("is the same answer twice when greedy, and instructions reach the prompt", async () => {
    const ask = (instructions?: string) =>
      client.responses.create({
        model: base,
        input: "Name a colour.",
        ...(instructions ? { instructions } : {}),
        temperature: 0,
        max_output_tokens: 12,
      });
    const first = await ask("You are a painter. Answer in one word.");
    const second = await ask("You are a painter. Answer in one word.");
    expect(second.output_text).toBe(first.output_text);
    expect(first.instructions).toBe("You are a painter. Answer in one word.");
    // The instructions are a system message ahead of the input: counted in the prompt.
    const bare = await ask();
    expect(first.usage!.input_tokens).toBeGreaterThan(bare.usage!.input_tokens + 5);
  });

  it("streams events in order and a final response that matches the deltas", async () => {
    const stream = client.responses.stream({
      model: base,
      input: "Tell me about the sea.",
      temperature: 0,
      max_output_tokens: 12,
    });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.at(-1)).toMatch(/^response\.(completed|incomplete)$/);
    expect(types.slice(-4, -1)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(0);
    expect(final.output_text).toBe(deltas.join(""));
    expect(final.usage!.output_tokens).toBeGreaterThan(0);
  });

  it("runs a function-call round trip with the demo's Agent: the call, its output, then text", async () => {
    // The demo's adapters were trained under the app's system prompt: a client sends it as instructions.
    const input: ResponseInputItem[] = [
      { role: "user", content: "Call a tool and set a timer for 15 minutes." },
    ];
    const first = await client.responses.create({
      model: "agent",
      instructions: DEFAULT_SYSTEM_PROMPT,
      input,
      tools: [setTimer],
      temperature: 0,
      max_output_tokens: 48,
    });
    expect(first.status).toBe("completed");
    const call = first.output.find((o) => o.type === "function_call");
    if (call?.type !== "function_call") throw new Error(`no function call: ${JSON.stringify(first.output)}`);
    expect(call).toMatchObject({ name: "set_timer", status: "completed" });
    expect(call.call_id).toMatch(/^call_/);
    const args = JSON.parse(call.arguments) as unknown;
    expect(checkArguments(timerParams, args)).toEqual({ ok: true });
    expect(args).toEqual({ minutes: 15 });

    // The client runs the tool and sends everything back: the server keeps nothing.
    const second = await client.responses.create({
      model: "agent",
      instructions: DEFAULT_SYSTEM_PROMPT,
      input: [
        ...input,
        ...(first.output as ResponseInputItem[]),
        { type: "function_call_output", call_id: call.call_id, output: "Timer set for 15 minutes." },
      ],
      tools: [setTimer],
      temperature: 0,
      max_output_tokens: 24,
    });
    expect(second.output.some((o) => o.type === "function_call")).toBe(false);
    expect(second.output_text.length).toBeGreaterThan(0);
  });

  it("streams the Agent's call as a function_call item, with no call syntax in the text", async () => {
    const stream = client.responses.stream({
      model: "agent",
      instructions: DEFAULT_SYSTEM_PROMPT,
      input: "Please set a timer for 25 minutes with a tool.",
      tools: [setTimer],
      temperature: 0,
      max_output_tokens: 48,
    });
    const types: string[] = [];
    stream.on("event", (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output_text).not.toContain('{"tool"');
    const call = final.output.find((o) => o.type === "function_call");
    if (call?.type !== "function_call") throw new Error(`no function call: ${JSON.stringify(final.output)}`);
    expect(call.name).toBe("set_timer");
    expect(checkArguments(timerParams, JSON.parse(call.arguments))).toEqual({ ok: true });
    expect(types).toContain("response.function_call_arguments.done");
    expect(types.at(-1)).toBe("response.completed");
  });

  it("answers JSON that validates against a json_schema text.format", async () => {
    const schema = {
      type: "object",
      properties: { answer: { type: "string", enum: ["yes", "no"] } },
      required: ["answer"],
      additionalProperties: false,
    };
    const response = await client.responses.create({
      model: base,
      input: "Is the sky blue? Answer in JSON.",
      text: { format: { type: "json_schema", name: "yes_no", schema, strict: true } },
      temperature: 0,
      max_output_tokens: 24,
    });
    expect(response.status).toBe("completed");
    expect(checkArguments(schema, JSON.parse(response.output_text))).toEqual({ ok: true });
  });

  it("reports each answer token's log-probability with the logprobs include", async () => {
    const response = await client.responses.create({
      model: base,
      input: "Say hello.",
      include: ["message.output_text.logprobs"],
      top_logprobs: 2,
      temperature: 0,
      max_output_tokens: 8,
    });
    const message = response.output[0];
    if (message?.type !== "message" || message.content[0]?.type !== "output_text") throw new Error("no text");
    const logprobs = message.content[0].logprobs ?? [];
    expect(logprobs).toHaveLength(response.usage!.output_tokens);
    expect(logprobs.map((l) => l.token).join("")).toBe(response.output_text);
    for (const entry of logprobs) {
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.top_logprobs).toHaveLength(2);
      // Greedy: the chosen token is the most likely one.
      expect(entry.top_logprobs[0]!.logprob).toBeCloseTo(entry.logprob, 4);
    }
  });

  it("refuses an unknown field with a 400 naming it", async () => {
    const error = await client.responses
      .create({ model: base, input: "Hi", max_output_tokens: 4, frobnicate: 1 } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({
      status: 400,
      param: "frobnicate",
      message: expect.stringContaining("Unrecognized request argument supplied: frobnicate") as unknown,
    });
  });
});
