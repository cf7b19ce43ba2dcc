/**
 * More official clients end to end against the headless server on loopback, the real engine
 * (node-llama-cpp) with the trained demo that ships with the app (its base and its Agent
 * adapter): the Vercel AI SDK's own OpenAI provider (its default Responses model and its Chat
 * Completions model) and Anthropic provider, LangChain's ChatOpenAI and OpenAIEmbeddings, and the
 * OpenAI Agents SDK on its Chat Completions model (its default Responses model too, for the tool
 * round trip). Greedy where output is compared, unless the client passes a seed.
 *
 * Every request body is recorded as the client sent it: the tests check what reached the server
 * (a tool's result in the request after the call), and a failed test prints them, which is how a
 * client's field the server refuses is found.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type { AIMessageChunk } from "@langchain/core/messages";
import { HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI, OpenAIEmbeddings } from "@langchain/openai";
import {
  Agent,
  OpenAIChatCompletionsModel,
  OpenAIProvider,
  run,
  setTracingDisabled,
  tool as agentTool,
  type Model,
} from "@openai/agents";
import {
  cosineSimilarity,
  embed,
  embedMany,
  generateObject,
  generateText,
  jsonSchema,
  stepCountIs,
  streamObject,
  streamText,
  tool,
  type LanguageModel,
} from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../core/chat/turn-deps";
import { checkArguments } from "../core/tools/argument-check";
import type { RunningServer } from "./start";
import { startDemoServer, type DemoServer } from "../../testing/server/demo-server";
import { expectSameVector } from "../../testing/engine/same-vector";

/** One request as a client sent it: the path it went to and its JSON body. */
interface Sent {
  path: string;
  body: Record<string, unknown>;
}

const sent: Sent[] = [];
const realFetch = globalThis.fetch;

/**
 * Every client here sends through the global fetch unless it is given its own, and the Agents
 * SDK's provider takes none: recording at the global sees each body exactly as it went out, for
 * every client alike, without changing what the client sends.
 */
function recordingFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (typeof init?.body === "string") {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(init.body) as Record<string, unknown>;
    } catch {
      body = { unparsed: init.body };
    }
    sent.push({ path: new URL(url).pathname, body });
  }
  return realFetch(input, init);
}

let demo: DemoServer;
let server: RunningServer;
/** The base model's id on /v1 (its file name). */
let base: string;
let openai: ReturnType<typeof createOpenAI>;
let anthropic: ReturnType<typeof createAnthropic>;
let agentsProvider: OpenAIProvider;

beforeAll(async () => {
  vi.stubGlobal("fetch", recordingFetch);
  demo = await startDemoServer("more-clients");
  ({ server, base } = demo);
  openai = createOpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1` });
  // The provider adds /messages to its base URL, and sends the key as x-api-key.
  anthropic = createAnthropic({ apiKey: server.apiKey, baseURL: `${server.url}/v1` });
  // Its own OpenAI client (the SDK's documented way to another base URL), on Chat Completions.
  agentsProvider = new OpenAIProvider({
    apiKey: server.apiKey,
    baseURL: `${server.url}/v1`,
    useResponses: false,
  });
  // Otherwise the SDK exports a trace of every run to OpenAI's platform (with OPENAI_API_KEY when set).
  setTracingDisabled(true);
}, 120_000);
afterAll(async () => {
  await demo?.close();
  vi.unstubAllGlobals();
});

/** The requests sent since the current test started. */
let sentInTest: () => Sent[] = () => [];
beforeEach((context) => {
  const mark = sent.length;
  sentInTest = () => sent.slice(mark);
  context.onTestFailed(() => {
    console.error(`Requests sent in "${context.task.name}":\n${JSON.stringify(sentInTest(), null, 1)}`);
  });
});

/** A small answer: the demo's tokenizer spells JSON a character at a time, so it stays short. */
const verdict = {
  type: "object" as const,
  properties: { answer: { type: "string" as const, enum: ["yes", "no"] } },
  // Literal types, not `as const`: the clients' schema types take mutable arrays.
  required: ["answer" as const],
  additionalProperties: false as const,
};
type Verdict = { answer: "yes" | "no" };
/** Enough for `{ "answer": "yes" }` with the grammar's whitespace, one character a token. */
const JSON_TOKENS = 32;

const timerParams = {
  type: "object" as const,
  properties: { minutes: { type: "integer" as const } },
  required: ["minutes" as const],
  additionalProperties: false as const,
};
/** The demo's Agent adapter was trained under the app's system prompt to call tools for this. */
const TIMER_ASK = "Call a tool and set a timer for 15 minutes.";
const TIMER_RESULT = "Timer set for 15 minutes.";

/** Texts whose embeddings must order by meaning: the first two alike, the third not. */
const SIMILAR = ["A cat on a mat.", "A kitten on a rug.", "Interest rates rose again."];

/**
 * The tool results a request carries, in any of the three wire formats: a chat completions
 * `tool` message, a Responses `function_call_output` item, an Anthropic `tool_result` block.
 */
function toolResults(body: Record<string, unknown>): Array<{ id: unknown; output: string }> {
  const text = (content: unknown): string =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content.map((part: { text?: string }) => part.text ?? "").join("")
        : JSON.stringify(content);
  const items = [
    ...((body.messages as Record<string, unknown>[] | undefined) ?? []),
    ...((body.input as Record<string, unknown>[] | undefined) ?? []),
  ];
  return items.flatMap((item) => {
    if (item.role === "tool") return [{ id: item.tool_call_id, output: text(item.content) }];
    if (item.type === "function_call_output") return [{ id: item.call_id, output: text(item.output) }];
    if (item.role === "user" && Array.isArray(item.content))
      return (item.content as Record<string, unknown>[])
        .filter((block) => block.type === "tool_result")
        .map((block) => ({ id: block.tool_use_id, output: text(block.content) }));
    return [];
  });
}

/** The JSON Schema a request asked the answer to follow, in OpenAI's two wire formats. */
function answerSchema(body: Record<string, unknown>): unknown {
  const chat = body.response_format as { type: string; json_schema?: { schema?: unknown } } | undefined;
  if (chat) return chat.type === "json_schema" ? chat.json_schema?.schema : chat.type;
  const responses = (body.text as { format?: { type: string; schema?: unknown } } | undefined)?.format;
  return responses?.type === "json_schema" ? responses.schema : responses?.type;
}

/**
 * The Vercel AI SDK's providers: `ai`'s generate/stream functions over the server's three wire
 * formats. `sampling` is what makes whole and streamed answers comparable: a seed where the wire
 * format takes one (chat completions), else greedy decoding.
 */
const aiSdkModels: Array<{
  name: string;
  path: string;
  model: (id: string) => LanguageModel;
  sampling: { temperature: number; seed?: number };
}> = [
  {
    name: "@ai-sdk/openai (Responses, its default)",
    path: "/v1/responses",
    model: (id) => openai(id),
    // The Responses API has no seed (the provider warns and drops one).
    sampling: { temperature: 0 },
  },
  {
    name: "@ai-sdk/openai .chat (Chat Completions)",
    path: "/v1/chat/completions",
    model: (id) => openai.chat(id),
    sampling: { temperature: 1, seed: 7 },
  },
  {
    name: "@ai-sdk/anthropic (Messages)",
    path: "/v1/messages",
    model: (id) => anthropic(id),
    // Anthropic's API has no seed.
    sampling: { temperature: 0 },
  },
];

describe.each(aiSdkModels)("Vercel AI SDK: $name", ({ path, model, sampling }) => {
  it("generateText and streamText: text, finish reason and usage, the stream the same answer", async () => {
    const settings = { prompt: "Say hello.", maxOutputTokens: 10, ...sampling };
    const whole = await generateText({ model: model(base), ...settings });
    expect(whole.text.length).toBeGreaterThan(0);
    expect(["stop", "length"]).toContain(whole.finishReason);
    expect(whole.usage.inputTokens).toBeGreaterThan(3);
    expect(whole.usage.outputTokens).toBeGreaterThan(0);
    expect(whole.usage.outputTokens).toBeLessThanOrEqual(10);
    const streamed = streamText({ model: model(base), ...settings });
    expect(await streamed.text).toBe(whole.text);
    expect(await streamed.finishReason).toBe(whole.finishReason);
    const usage = await streamed.usage;
    expect([usage.inputTokens, usage.outputTokens]).toEqual([
      whole.usage.inputTokens,
      whole.usage.outputTokens,
    ]);
    const requests = sentInTest();
    expect(requests.map((r) => r.path)).toEqual([path, path]);
    if (sampling.seed === undefined) return;
    for (const r of requests) expect(r.body.seed).toBe(sampling.seed);
    // The seed reproduced a sample, not a greedy answer: greedy and another seed do not all agree.
    const greedy = await generateText({ model: model(base), ...settings, temperature: 0 });
    const other = await generateText({ model: model(base), ...settings, seed: sampling.seed + 1 });
    expect(new Set([whole.text, greedy.text, other.text]).size).toBeGreaterThan(1);
  });

  // Deprecated in `ai` 7 for generateText's `output` (api-clients tests that), and still what
  // most code written against the SDK calls.
  it("generateObject and streamObject: an object that validates against the schema", async () => {
    const settings = {
      schema: jsonSchema<Verdict>(verdict),
      prompt: "Is the sea salty?",
      temperature: 0,
      maxOutputTokens: JSON_TOKENS,
    };
    const whole = await generateObject({ model: model(base), ...settings });
    expect(checkArguments(verdict, whole.object)).toEqual({ ok: true });
    expect(whole.finishReason).toBe("stop");
    const streamed = streamObject({ model: model(base), ...settings });
    // Its promises settle only once the stream is read.
    const partials: unknown[] = [];
    for await (const partial of streamed.partialObjectStream) partials.push(partial);
    expect(await streamed.object).toEqual(whole.object);
    expect(partials.at(-1)).toEqual(whole.object);
    expect(await streamed.finishReason).toBe("stop");
    // The schema went as what the engine enforces with a grammar, not as an instruction in the prompt:
    // OpenAI's formats as the answer's format, Anthropic's (for a model it does not know) as the
    // one tool, named "json", that the answer must call.
    for (const { body } of sentInTest()) {
      if (path === "/v1/messages") {
        expect(body.tool_choice).toMatchObject({ type: "any" });
        expect(body.tools).toEqual([expect.objectContaining({ name: "json", input_schema: verdict })]);
      } else {
        expect(answerSchema(body)).toMatchObject(verdict);
      }
    }
  });

  it("a tool round trip with the Agent adapter, whole and streamed: the call, the client's result, then text", async () => {
    const received: unknown[] = [];
    const setTimer = tool({
      description: "Start a timer",
      inputSchema: jsonSchema<{ minutes: number }>(timerParams),
      execute: (input) => {
        received.push(input);
        return TIMER_RESULT;
      },
    });
    const settings = {
      system: DEFAULT_SYSTEM_PROMPT,
      prompt: TIMER_ASK,
      tools: { set_timer: setTimer },
      temperature: 0,
      maxOutputTokens: 60,
      stopWhen: stepCountIs(2),
    };
    const whole = await generateText({ model: model("agent"), ...settings });
    expect(whole.steps.map((s) => s.finishReason)).toEqual([
      "tool-calls",
      expect.stringMatching(/^(stop|length)$/),
    ]);
    const call = whole.steps[0]!.toolCalls[0]!;
    expect(call).toMatchObject({ toolName: "set_timer", input: { minutes: 15 } });
    expect(received).toEqual([{ minutes: 15 }]);
    expect(whole.steps[1]!.toolCalls).toEqual([]);
    expect(whole.text.length).toBeGreaterThan(0);
    // The second request carries the tool's result, answering the call by its id.
    const [first, second] = sentInTest();
    expect(toolResults(first!.body)).toEqual([]);
    expect(toolResults(second!.body)).toEqual([{ id: call.toolCallId, output: TIMER_RESULT }]);

    const streamed = streamText({ model: model("agent"), ...settings });
    const steps = await streamed.steps;
    expect(steps.map((s) => s.finishReason)).toEqual(whole.steps.map((s) => s.finishReason));
    expect(steps[0]!.toolCalls[0]).toMatchObject({ toolName: "set_timer", input: { minutes: 15 } });
    expect(received).toEqual([{ minutes: 15 }, { minutes: 15 }]);
    expect(await streamed.text).toBe(whole.text);
    const requests = sentInTest();
    expect(requests.map((r) => [r.path, Boolean(r.body.stream)])).toEqual([
      [path, false],
      [path, false],
      [path, true],
      [path, true],
    ]);
    // The Anthropic provider asks for a streamed tool's input early, on every streamed tool.
    if (path === "/v1/messages")
      expect(requests[2]!.body.tools).toEqual([expect.objectContaining({ eager_input_streaming: true })]);
    expect(toolResults(requests[3]!.body)).toEqual([
      { id: steps[0]!.toolCalls[0]!.toolCallId, output: TIMER_RESULT },
    ]);
  });
});

describe("Vercel AI SDK: @ai-sdk/openai embeddings", () => {
  it("embed and embedMany under OpenAI's model name give the base model's vectors", async () => {
    const named = await embed({ model: openai.embedding("text-embedding-3-small"), value: SIMILAR[0]! });
    const own = await embed({ model: openai.embedding(base), value: SIMILAR[0]! });
    expect(named.embedding.length).toBeGreaterThan(8);
    expectSameVector(named.embedding, own.embedding);
    expect(named.usage.tokens).toBeGreaterThan(0);
    const many = await embedMany({ model: openai.embedding("text-embedding-3-small"), values: SIMILAR });
    expectSameVector(many.embeddings[0], named.embedding);
    const [a, b, c] = many.embeddings;
    expect(cosineSimilarity(a!, b!)).toBeGreaterThan(cosineSimilarity(a!, c!));
    expect(many.usage.tokens).toBeGreaterThan(named.usage.tokens);
    expect(sentInTest().map((r) => [r.path, r.body.model])).toEqual([
      ["/v1/embeddings", "text-embedding-3-small"],
      ["/v1/embeddings", base],
      ["/v1/embeddings", "text-embedding-3-small"],
    ]);
  });
});

describe("LangChain: @langchain/openai", () => {
  const chat = (model: string, fields: ConstructorParameters<typeof ChatOpenAI>[0] = {}) =>
    new ChatOpenAI({
      model,
      apiKey: server.apiKey,
      configuration: { baseURL: `${server.url}/v1` },
      maxRetries: 0,
      ...fields,
    });
  const concat = async (stream: AsyncIterable<AIMessageChunk>): Promise<AIMessageChunk> => {
    let full: AIMessageChunk | undefined;
    for await (const chunk of stream) full = full ? full.concat(chunk) : chunk;
    if (!full) throw new Error("an empty stream");
    return full;
  };

  it("invoke and stream: the same seeded answer, its finish reason and usage", async () => {
    const llm = chat(base, { temperature: 1, maxTokens: 10 });
    const whole = await llm.invoke("Say hello.", { seed: 7 });
    expect(typeof whole.content).toBe("string");
    expect((whole.content as string).length).toBeGreaterThan(0);
    expect(["stop", "length"]).toContain(whole.response_metadata.finish_reason);
    expect(whole.usage_metadata?.output_tokens).toBeGreaterThan(0);
    expect(whole.usage_metadata?.output_tokens).toBeLessThanOrEqual(10);
    const streamed = await concat(await llm.stream("Say hello.", { seed: 7 }));
    expect(streamed.content).toBe(whole.content);
    expect(streamed.usage_metadata).toMatchObject({
      input_tokens: whole.usage_metadata?.input_tokens,
      output_tokens: whole.usage_metadata?.output_tokens,
    });
    const requests = sentInTest();
    expect(requests.map((r) => [r.path, r.body.seed])).toEqual([
      ["/v1/chat/completions", 7],
      ["/v1/chat/completions", 7],
    ]);
    // The seed reproduced a sample, not a greedy answer: greedy and another seed do not all agree.
    const greedy = await chat(base, { temperature: 0, maxTokens: 10 }).invoke("Say hello.");
    const other = await llm.invoke("Say hello.", { seed: 8 });
    expect(new Set([whole.content, greedy.content, other.content]).size).toBeGreaterThan(1);
  });

  it("withStructuredOutput, by JSON schema (its default) and by function calling", async () => {
    const llm = chat(base, { temperature: 0, maxTokens: JSON_TOKENS });
    for (const method of ["jsonSchema", "functionCalling"] as const) {
      const structured = llm.withStructuredOutput<Verdict>(verdict, { name: "verdict", method });
      const answer = await structured.invoke("Is the sea salty?");
      expect(checkArguments(verdict, answer)).toEqual({ ok: true });
    }
    const [bySchema, byCall] = sentInTest();
    expect(answerSchema(bySchema!.body)).toMatchObject(verdict);
    expect(byCall!.body.tool_choice).toMatchObject({ type: "function", function: { name: "verdict" } });
  });

  it("bindTools: the Agent's call, the ToolMessage answered with text; streamed, the same call", async () => {
    const llm = chat("agent", { temperature: 0, maxTokens: 60 }).bindTools([
      {
        type: "function",
        function: { name: "set_timer", description: "Start a timer", parameters: timerParams },
      },
    ]);
    const messages = [new SystemMessage(DEFAULT_SYSTEM_PROMPT), new HumanMessage(TIMER_ASK)];
    const first = await llm.invoke(messages);
    expect(first.response_metadata.finish_reason).toBe("tool_calls");
    expect(first.tool_calls).toHaveLength(1);
    const call = first.tool_calls![0]!;
    expect(call).toMatchObject({ name: "set_timer", args: { minutes: 15 } });
    expect(checkArguments(timerParams, call.args)).toEqual({ ok: true });
    const answer = await llm.invoke([
      ...messages,
      first,
      new ToolMessage({ tool_call_id: call.id!, content: TIMER_RESULT }),
    ]);
    expect(answer.tool_calls).toEqual([]);
    expect((answer.content as string).length).toBeGreaterThan(0);
    expect(toolResults(sentInTest()[1]!.body)).toEqual([{ id: call.id, output: TIMER_RESULT }]);

    const streamed = await concat(await llm.stream(messages));
    expect(streamed.tool_calls?.map(({ name, args }) => ({ name, args }))).toEqual([
      { name: "set_timer", args: { minutes: 15 } },
    ]);
  });

  it("OpenAIEmbeddings with its default model name gives the base model's vectors", async () => {
    const embeddings = new OpenAIEmbeddings({
      apiKey: server.apiKey,
      configuration: { baseURL: `${server.url}/v1` },
      maxRetries: 0,
    });
    const query = await embeddings.embedQuery(SIMILAR[0]!);
    const documents = await embeddings.embedDocuments(SIMILAR);
    const own = await embed({ model: openai.embedding(base), value: SIMILAR[0]! });
    expect(query).toHaveLength(own.embedding.length);
    // The same vector; the client may take it as base64 (float32) where embed takes floats.
    expect(cosineSimilarity(query, own.embedding)).toBeCloseTo(1, 6);
    expect(cosineSimilarity(documents[0]!, query)).toBeCloseTo(1, 6);
    expect(cosineSimilarity(documents[0]!, documents[1]!)).toBeGreaterThan(
      cosineSimilarity(documents[0]!, documents[2]!),
    );
    const [one, batch] = sentInTest();
    expect([one!.body.model, batch!.body.model]).toEqual([
      "text-embedding-ada-002",
      "text-embedding-ada-002",
    ]);
  });
});

describe("OpenAI Agents SDK: @openai/agents", () => {
  let baseModel: Model;
  let agentModel: Model;
  let agentResponsesModel: Model;
  beforeAll(async () => {
    baseModel = await agentsProvider.getModel(base);
    agentModel = await agentsProvider.getModel("agent");
    // The SDK's default API, for the tool round trip too (it works against the server as well).
    agentResponsesModel = await new OpenAIProvider({
      apiKey: server.apiKey,
      baseURL: `${server.url}/v1`,
    }).getModel("agent");
  });

  it("runs on the SDK's Chat Completions model", () => {
    expect(baseModel).toBeInstanceOf(OpenAIChatCompletionsModel);
  });

  it("run, whole and streamed: the same greedy text, with usage", async () => {
    const agent = new Agent({
      name: "Greeter",
      instructions: "Greet the user.",
      model: baseModel,
      modelSettings: { temperature: 0, maxTokens: 10 },
    });
    const whole = await run(agent, "Say hello.");
    expect(typeof whole.finalOutput).toBe("string");
    expect(whole.finalOutput!.length).toBeGreaterThan(0);
    expect(whole.rawResponses[0]?.usage.outputTokens).toBeGreaterThan(0);
    const streamed = await run(agent, "Say hello.", { stream: true });
    let text = "";
    for await (const delta of streamed.toTextStream()) text += delta;
    await streamed.completed;
    expect(text).toBe(whole.finalOutput);
    expect(streamed.finalOutput).toBe(whole.finalOutput);
    expect(sentInTest().map((r) => r.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"]);
  });

  it("an outputType JSON schema answers an object that validates", async () => {
    const agent = new Agent({
      name: "Judge",
      instructions: "Answer yes or no.",
      model: baseModel,
      modelSettings: { temperature: 0, maxTokens: JSON_TOKENS },
      outputType: { type: "json_schema", name: "verdict", strict: true, schema: verdict },
    });
    const result = await run(agent, "Is the sea salty?");
    expect(checkArguments(verdict, result.finalOutput)).toEqual({ ok: true });
    expect(answerSchema(sentInTest()[0]!.body)).toMatchObject(verdict);
  });

  it.each([
    ["Chat Completions", "/v1/chat/completions"],
    ["Responses, the SDK's default", "/v1/responses"],
  ])(
    "an Agent with one function tool on %s: the call, the tool's result in the next request, then text",
    async (_, path) => {
      const received: unknown[] = [];
      const agent = new Agent({
        name: "Timer",
        instructions: DEFAULT_SYSTEM_PROMPT,
        model: path === "/v1/responses" ? agentResponsesModel : agentModel,
        modelSettings: { temperature: 0, maxTokens: 60 },
        tools: [
          agentTool({
            name: "set_timer",
            description: "Start a timer",
            parameters: timerParams,
            strict: true,
            execute: (input) => {
              received.push(input);
              return TIMER_RESULT;
            },
          }),
        ],
      });
      for (const stream of [false, true]) {
        const mark = sentInTest().length;
        const result = stream
          ? await run(agent, TIMER_ASK, { stream: true, maxTurns: 3 }).then(async (streamed) => {
              await streamed.completed;
              return streamed;
            })
          : await run(agent, TIMER_ASK, { maxTurns: 3 });
        expect(received.at(-1)).toEqual({ minutes: 15 });
        expect(typeof result.finalOutput).toBe("string");
        expect(result.finalOutput!.length).toBeGreaterThan(0);
        const call = result.newItems.find((item) => item.type === "tool_call_item")?.rawItem;
        if (call?.type !== "function_call") throw new Error("no function call");
        expect(call.name).toBe("set_timer");
        const requests = sentInTest().slice(mark);
        expect(requests.map((r) => [r.path, Boolean(r.body.stream)])).toEqual([
          [path, stream],
          [path, stream],
        ]);
        expect(toolResults(requests[1]!.body)).toEqual([{ id: call.callId, output: TIMER_RESULT }]);
      }
      expect(received).toHaveLength(2);
    },
  );
});
