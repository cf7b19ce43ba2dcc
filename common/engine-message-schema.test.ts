import { describe, expect, it } from "vitest";
import type { EngineMessage, EngineReplies, GenerateResult } from "./engine-protocol";
import { parseEngineMessage, parseEngineReply } from "./engine-message-schema";

const answer: Required<GenerateResult> = {
  text: "The time is",
  stopReason: "toolCalls",
  toolCalls: [{ name: "clock", arguments: { zone: "UTC" } }],
  cutOffCall: { name: "clock", arguments: '{"zo' },
  tokens: 3,
  ttftMs: 1.5,
  durationMs: 9.25,
  promptTokensEvaluated: 7,
  promptTokens: 7,
  stopSequence: "\n",
  logprobs: [
    {
      token: "The",
      logprob: -0.5,
      bytes: [84, 104, 101],
      top: [{ token: "A", logprob: -9999, bytes: [65] }],
    },
  ],
  contextTokens: 10,
  contextSize: 512,
};

describe("parseEngineMessage", () => {
  it("accepts every message type of the protocol as it is", () => {
    const messages: EngineMessage[] = [
      { type: "ready", pid: 12 },
      { type: "progress", id: 1, progress: 0.5 },
      { type: "token", id: 2, text: "" },
      { type: "result", id: 3, value: { anything: [1] } },
      { type: "result", id: 3, value: null },
      { type: "error", id: -1, code: "invalid_request", message: "Invalid engine request" },
    ];
    for (const message of messages) expect(parseEngineMessage(message)).toEqual({ ok: true, message });
  });

  it("keeps the id of a malformed message and says what is wrong", () => {
    expect(parseEngineMessage({ type: "token", id: 4, text: 5 })).toEqual({
      ok: false,
      id: 4,
      problem: expect.stringMatching(/^"token" message: text: /) as string,
    });
    expect(parseEngineMessage({ type: "bye", id: 5 })).toMatchObject({ ok: false, id: 5 });
    expect(parseEngineMessage({ type: "result", id: "5", value: 1 })).toMatchObject({
      ok: false,
      id: undefined,
    });
    expect(parseEngineMessage(undefined)).toMatchObject({
      ok: false,
      problem: /^not an object \(undefined\)/,
    });
    expect(parseEngineMessage({ id: 1 })).toMatchObject({ ok: false, problem: /^message without a type/ });
  });

  it("reads an error code it does not know as internal, the message kept", () => {
    expect(parseEngineMessage({ type: "error", id: 1, code: "new_code", message: "m" })).toEqual({
      ok: true,
      message: { type: "error", id: 1, code: "internal", message: "m" },
    });
  });
});

describe("parseEngineReply", () => {
  it("accepts the reply to every request type, every field present", () => {
    const replies: { [K in keyof EngineReplies]: EngineReplies[K] } = {
      load: {
        path: "/m.gguf",
        contextSize: 512,
        gpu: "cuda",
        threads: 2,
        trainContextSize: 2048,
        settings: {
          contextSize: 512,
          sequences: 4,
          gpuLayers: 3,
          totalLayers: 3,
          flashAttention: "auto",
          kvCacheType: "q8_0",
          batchSize: 512,
          threads: 2,
        },
      },
      unload: null,
      generate: answer,
      abort: { aborted: false },
      ping: { pid: 3 },
      embed: [[0.6, 0.8], []],
      embedCounted: { vectors: [[1, 0]], tokens: [2] },
      countTokens: [0, 4],
      complete: { ...answer, toolCalls: undefined, cutOffCall: undefined, stopReason: "eos" },
      forget: { deletedFiles: 2 },
      fit: {
        contextSize: 4096,
        gpuLayers: 0,
        totalLayers: 4,
        ramBytes: 1e9,
        vramBytes: 0,
        maxContextSize: 8192,
        trainContextSize: 8192,
        machine: {
          ramTotalBytes: 8e9,
          ramFreeBytes: 4e9,
          vramTotalBytes: 0,
          vramFreeBytes: 0,
          gpu: null,
          cpuCores: 2,
        },
        fits: true,
        summary: "fits in RAM",
        model: {
          architecture: "qwen3moe",
          name: null,
          parameters: 1e6,
          fileBytes: 2e6,
          expertCount: 4,
          expertUsedCount: 2,
          headSize: null,
        },
      },
      info: { buildType: "localBuild", gpu: null, llamaCpp: "b6000" },
    };
    for (const [type, value] of Object.entries(replies)) {
      const parsed = parseEngineReply(type as keyof EngineReplies, value);
      expect(parsed, type).toEqual({ ok: true, value });
    }
    // A fit is read from a header of any origin: whatever numbers it gives pass, as before.
    const odd = { ...replies.fit, model: { ...replies.fit.model, parameters: NaN, headSize: Infinity } };
    expect(parseEngineReply("fit", odd)).toEqual({ ok: true, value: odd });
  });

  it("drops fields the protocol does not have, and refuses wrong shapes naming the field", () => {
    expect(parseEngineReply("abort", { aborted: true, extra: 1 })).toEqual({
      ok: true,
      value: { aborted: true },
    });
    expect(parseEngineReply("generate", { ...answer, stopReason: "tired" })).toMatchObject({
      ok: false,
      problem: /^"generate" result: stopReason: /,
    });
    expect(
      parseEngineReply("generate", { ...answer, logprobs: [{ token: "a", logprob: -1, bytes: [] }] }),
    ).toMatchObject({ ok: false, problem: /logprobs: must be a list/ });
    expect(parseEngineReply("embed", [[1], "x"])).toMatchObject({
      ok: false,
      problem: /must be arrays of numbers/,
    });
    expect(parseEngineReply("unload", undefined)).toMatchObject({ ok: false });
    expect(parseEngineReply("countTokens", [1.5])).toMatchObject({
      ok: false,
      problem: /^"countTokens" result: 0: /,
    });
  });
});
