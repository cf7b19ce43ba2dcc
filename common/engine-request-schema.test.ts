import { describe, expect, it } from "vitest";
import type { ChatTurn, GenerateOptions, LoadOptions } from "./engine-protocol";
import { parseEngineRequest } from "./engine-request-schema";

describe("parseEngineRequest", () => {
  it("accepts every request type of the protocol", () => {
    const requests = [
      { id: 1, type: "load", path: "/m/a.gguf", contextSize: 2048 },
      { id: 2, type: "unload" },
      {
        id: 3,
        type: "generate",
        history: [{ role: "user", text: "hi" }],
        options: { temperature: 0, maxTokens: 5, stop: ["\n"] },
      },
      { id: 4, type: "abort", target: 3 },
      { id: 5, type: "ping" },
      { id: 6, type: "embed", texts: ["a", ""] },
      { id: 7, type: "load", path: "/m/a.gguf", sequences: 2 },
      {
        id: 8,
        type: "generate",
        history: [{ role: "user", text: "hi" }],
        options: {
          temperature: 0,
          maxTokens: 5,
          adapters: [{ path: "/a/chat.gguf", scale: 0.5 }],
          kvPolicy: "sequence-per-set",
        },
      },
    ];
    for (const request of requests) expect(parseEngineRequest(request)).toEqual({ ok: true, request });
  });

  it("takes a state folder on load (absolute only) and a session key on generate", () => {
    const load = { id: 1, type: "load", path: "/m/a.gguf", stateDir: "/data/kv" };
    expect(parseEngineRequest(load)).toEqual({ ok: true, request: load });
    const generate = {
      id: 2,
      type: "generate",
      history: [{ role: "user", text: "hi" }],
      options: { temperature: 0, maxTokens: 5, sessionKey: "conversation-1" },
    };
    expect(parseEngineRequest(generate)).toEqual({ ok: true, request: generate });
    const relative = parseEngineRequest({ ...load, stateDir: "kv" });
    expect(relative).toMatchObject({ ok: false, id: 1 });
    expect(relative.ok ? "" : relative.message).toMatch(/stateDir: must be an absolute folder path/);
  });

  it("keeps the id and names the bad field", () => {
    const parsed = parseEngineRequest({
      id: 9,
      type: "generate",
      history: [],
      options: { temperature: 0, maxTokens: 5 },
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.id).toBe(9);
    expect(parsed.message).toMatch(/^Invalid engine request at history:/);
  });

  it("answers garbage with id -1", () => {
    expect(parseEngineRequest("hello")).toMatchObject({ ok: false, id: -1 });
    expect(parseEngineRequest({ id: 2, type: "explode" })).toMatchObject({ ok: false, id: 2 });
  });

  it("rejects nonsense sampling settings", () => {
    const bad = {
      id: 1,
      type: "generate",
      history: [{ role: "user", text: "x" }],
      options: { temperature: -1, maxTokens: 0 },
    };
    expect(parseEngineRequest(bad).ok).toBe(false);
  });

  it("rejects relative adapter paths, wild scales and unknown KV policies", () => {
    const generate = (options: object) => ({
      id: 1,
      type: "generate",
      history: [{ role: "user", text: "x" }],
      options: { temperature: 0, maxTokens: 5, ...options },
    });
    const relative = parseEngineRequest(generate({ adapters: [{ path: "chat.gguf", scale: 1 }] }));
    expect(relative).toMatchObject({ ok: false, message: /adapters\.0\.path: must be an absolute path/ });
    expect(parseEngineRequest(generate({ adapters: [{ path: "/a.gguf", scale: 40 }] })).ok).toBe(false);
    expect(parseEngineRequest(generate({ kvPolicy: "sometimes" })).ok).toBe(false);
    expect(parseEngineRequest({ id: 1, type: "embed", texts: [1] }).ok).toBe(false);
  });

  describe("tools", () => {
    const timer = {
      name: "set_timer",
      description: "Start a timer.",
      parameters: { type: "object", properties: { minutes: { type: "integer" } }, required: ["minutes"] },
    };
    const generate = (options: object, history: object[] = [{ role: "user", text: "x" }]) => ({
      id: 4,
      type: "generate",
      history,
      options: { temperature: 0, maxTokens: 5, ...options },
    });

    it("accepts tools, every choice, parallel calls, a call format and calls in assistant turns", () => {
      const format = {
        callPrefix: '{"tool":"',
        paramsPrefix: '","arguments":',
        callSuffix: "}",
        resultPrefix: "\n",
        resultSuffix: "\n",
        documented: false,
      };
      for (const toolChoice of ["auto", "required", { name: "set_timer" }]) {
        const request = generate({
          tools: [timer, { name: "now" }],
          toolChoice,
          parallelToolCalls: false,
          toolFormat: format,
        });
        expect(parseEngineRequest(request)).toEqual({ ok: true, request });
      }
      const history = [
        { role: "user", text: "x" },
        {
          role: "assistant",
          text: "",
          calls: [{ name: "set_timer", arguments: { minutes: 5 }, result: "ok" }],
        },
      ];
      expect(parseEngineRequest(generate({ tools: [timer] }, history)).ok).toBe(true);
    });

    it("refuses bad names, duplicates, a choice naming no tool, tools with jsonSchema and calls on user turns", () => {
      const message = (options: object, history?: object[]) => {
        const parsed = parseEngineRequest(generate(options, history));
        expect(parsed.ok).toBe(false);
        return parsed.ok ? "" : parsed.message;
      };
      expect(message({ tools: [{ name: "set timer" }] })).toMatch(/options\.tools\.0\.name/);
      expect(message({ tools: [{ name: "x".repeat(65) }] })).toMatch(/name/);
      expect(message({ tools: [{ name: "t", parameters: [] }] })).toMatch(/parameters/);
      expect(message({ tools: [timer, timer] })).toMatch(/two tools are named "set_timer"/);
      expect(message({ tools: [timer], toolChoice: { name: "open_file" } })).toMatch(
        /toolChoice names "open_file", which is not among the tools/,
      );
      expect(message({ toolChoice: "required" })).toMatch(
        /toolChoice "required" needs at least one tool in tools/,
      );
      expect(message({ tools: [timer], jsonSchema: { type: "object" } })).toMatch(/cannot be used together/);
      expect(message({ tools: [timer], toolChoice: "none" })).toMatch(/toolChoice/);
      const onUser = [{ role: "user", text: "x", calls: [{ name: "a", arguments: {}, result: 1 }] }];
      expect(message({}, onUser)).toMatch(/only assistant turns carry tool calls/);
    });

    it("refuses a schema the grammar cannot express, with the reason", () => {
      const tools = [
        { name: "t", parameters: { type: "object", properties: { a: { if: { type: "string" } } } } },
      ];
      expect(parseEngineRequest(generate({ tools }))).toMatchObject({
        ok: false,
        id: 4,
        message: /options\.tools\.0\.parameters: tools\.t\.parameters\.properties\.a uses "if"/,
      });
    });
  });

  it('refuses a "__proto__" key in tokenBias and the other JSON objects instead of dropping it', () => {
    // JSON.parse (and a structured clone) make "__proto__" an own key; z.record alone skips it,
    // so `tokenBias: {"__proto__": 3}` used to parse as ok with `{}`.
    const generate = (options: string) =>
      parseEngineRequest(
        JSON.parse(
          `{"id":6,"type":"generate","history":[{"role":"user","text":"hi"}],"options":{"temperature":0,"maxTokens":4,${options}}}`,
        ),
      );
    expect(generate('"tokenBias":{"__proto__":3,"5":1}')).toEqual({
      ok: false,
      id: 6,
      message: 'Invalid engine request at options.tokenBias: token ids must be integers ≥ 0, not "__proto__"',
    });
    expect(generate('"jsonSchema":{"type":"object","__proto__":{"type":"string"}}')).toMatchObject({
      ok: false,
      message: /at options\.jsonSchema: the key "__proto__" is not allowed/,
    });
    expect(generate('"tools":[{"name":"t","parameters":{"__proto__":{}}}]')).toMatchObject({
      ok: false,
      message: /at options\.tools\.0\.parameters: the key "__proto__" is not allowed/,
    });
    const fit = parseEngineRequest(
      JSON.parse('{"id":7,"type":"fit","source":{"url":"https://h/m.gguf","headers":{"__proto__":"x"}}}'),
    );
    expect(fit).toMatchObject({
      ok: false,
      id: 7,
      message: /at source\.headers: the key "__proto__" is not allowed/,
    });
    // Ordinary keys are unchanged: token ids become numbers, a "__proto__" nested in a schema is kept.
    expect(generate('"tokenBias":{"5":1,"0":-100}')).toMatchObject({
      ok: true,
      request: { options: { tokenBias: { 5: 1, 0: -100 } } },
    });
    const nested = generate('"jsonSchema":{"type":"object","properties":{"__proto__":{"type":"string"}}}');
    expect(nested.ok).toBe(true);
    if (nested.ok && nested.request.type === "generate")
      expect(Object.keys(nested.request.options.jsonSchema!.properties as object)).toEqual(["__proto__"]);
  });

  it("knows every field of the protocol's types, and refuses fields it does not know", () => {
    // Typed Required<…>: a field added to the protocol makes this test fail to compile until it
    // is sent here, and then the strict schema refuses it until the schema has it too.
    const options: Required<GenerateOptions> = {
      temperature: 0.5,
      maxTokens: 8,
      stop: ["\n"],
      seed: 7,
      adapters: [{ path: "/a/chat.gguf", scale: 1 }],
      kvPolicy: "activated",
      jsonSchema: {},
      sessionKey: "c1",
      tools: [],
      toolChoice: "auto",
      parallelToolCalls: false,
      toolFormat: {
        callPrefix: "<call>",
        paramsPrefix: " ",
        callSuffix: "</call>",
        resultPrefix: "<result>",
        resultSuffix: "</result>",
        documented: true,
      },
      topP: 0.9,
      topK: 40,
      minP: 0.05,
      repeatPenalty: { penalty: 1.1, frequencyPenalty: 0, presencePenalty: 0, lastTokens: 64 },
      tokenBias: { 5: -100 },
      json: false,
      logprobs: { top: 2 },
    };
    const turn: Required<ChatTurn> = {
      role: "assistant",
      text: "",
      calls: [{ name: "t", arguments: {}, result: "ok" }],
    };
    const history: ChatTurn[] = [turn, { role: "user", text: "hi" }];
    const generate = parseEngineRequest({ id: 1, type: "generate", history, options });
    expect(generate.ok).toBe(true);
    if (generate.ok && generate.request.type === "generate") {
      expect(Object.keys(generate.request.options).sort()).toEqual(Object.keys(options).sort());
      expect(generate.request.history[0]).toEqual(turn);
    }
    const load: Required<LoadOptions> = {
      contextSize: 512,
      gpuLayers: "auto",
      flashAttention: "auto",
      kvCacheType: "f16",
      batchSize: 64,
      threads: 2,
    };
    const loadRequest = { id: 2, type: "load", path: "/m/a.gguf", sequences: 1, stateDir: "/kv", ...load };
    expect(parseEngineRequest(loadRequest)).toEqual({ ok: true, request: loadRequest });

    // typicalP was once added to the options everywhere but the schema, and silently dropped.
    const unknown = parseEngineRequest({
      id: 3,
      type: "generate",
      history,
      options: { ...options, typicalP: 0.9 },
    });
    expect(unknown).toMatchObject({ ok: false, id: 3 });
    expect(!unknown.ok && unknown.message).toMatch(/typicalP/);
    expect(parseEngineRequest({ id: 4, type: "ping", extra: 1 })).toMatchObject({ ok: false, id: 4 });
    expect(parseEngineRequest({ id: 5, type: "load", path: "/m/a.gguf", contextsize: 512 })).toMatchObject({
      ok: false,
    });
  });
});
