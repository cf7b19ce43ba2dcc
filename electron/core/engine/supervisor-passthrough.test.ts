/**
 * The supervisor passes issue 14's requests through as they are: embedCounted and complete go
 * to the engine process with their fields, complete streams its tokens and aborts like
 * generate, and the engine's context_length_exceeded arrives as that ApiError. The process is
 * a scripted stand-in speaking the protocol (the real engine: native/engine/sampling.engine.test.ts).
 */
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api/errors";
import type { EngineMessage, EngineRequest, GenerateResult } from "../../../common/engine-protocol";
import { EngineSupervisor } from "./supervisor";
import type { EngineProcess } from "./types";

/** Answers requests from `script`; `sent` records every request the supervisor made. */
function scriptedEngine(script: (request: EngineRequest, reply: (m: EngineMessage) => void) => void) {
  const sent: EngineRequest[] = [];
  let listener: (message: unknown) => void = () => {};
  let exitListener: (code: number | null, signal: string | null) => void = () => {};
  const proc: EngineProcess = {
    pid: 4242,
    send(message) {
      const request = message as EngineRequest;
      sent.push(request);
      // Asynchronous, as a child process is.
      setImmediate(() => script(request, (m) => listener(m)));
    },
    onMessage(l) {
      listener = l;
      setImmediate(() => l({ type: "ready", pid: 4242 }));
    },
    onExit(l) {
      exitListener = l;
    },
    kill() {
      setImmediate(() => exitListener(null, "SIGTERM"));
    },
  };
  return { spawn: () => proc, sent };
}

const result = (text: string, stopReason: GenerateResult["stopReason"]): GenerateResult => ({
  text,
  stopReason,
  tokens: text.length,
  ttftMs: 1,
  durationMs: 2,
  promptTokensEvaluated: 3,
  promptTokens: 3,
  contextTokens: 3 + text.length,
  contextSize: 512,
});

describe("EngineSupervisor pass-through (issue 14)", () => {
  it("embedCounted sends the texts and resolves with vectors and counts; none sends nothing", async () => {
    const engine = scriptedEngine((request, reply) => {
      if (request.type === "embedCounted")
        reply({ type: "result", id: request.id, value: { vectors: [[1, 0]], tokens: [2] } });
    });
    const supervisor = new EngineSupervisor(engine.spawn);
    expect(await supervisor.embedCounted(["hi there"])).toEqual({ vectors: [[1, 0]], tokens: [2] });
    expect(engine.sent).toEqual([{ type: "embedCounted", texts: ["hi there"], id: 1 }]);
    expect(await supervisor.embedCounted([])).toEqual({ vectors: [], tokens: [] });
    expect(engine.sent).toHaveLength(1);
    await supervisor.close();
  });

  it("maps the engine's context_length_exceeded to that ApiError, message kept", async () => {
    const engine = scriptedEngine((request, reply) => {
      if (request.type === "embedCounted")
        reply({
          type: "error",
          id: request.id,
          code: "context_length_exceeded",
          message: "Input 1 has 5000 tokens",
        });
    });
    const supervisor = new EngineSupervisor(engine.spawn);
    const error = await supervisor.embedCounted(["a", "b"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "context_length_exceeded", message: "Input 1 has 5000 tokens" });
    await supervisor.close();
  });

  it("an aborted embedCounted sends the engine an abort naming it; its aborted error arrives as such", async () => {
    const engine = scriptedEngine((request, reply) => {
      if (request.type === "abort")
        reply({ type: "error", id: request.target, code: "aborted", message: "stopped" });
    });
    const supervisor = new EngineSupervisor(engine.spawn);
    const controller = new AbortController();
    const running = supervisor.embedCounted(["a", "b"], controller.signal).catch((e: unknown) => e);
    await vi.waitFor(() => expect(engine.sent.map((r) => r.type)).toEqual(["embedCounted"]));
    controller.abort();
    expect(await running).toMatchObject({ code: "aborted", message: "stopped" });
    expect(engine.sent).toEqual([
      { type: "embedCounted", texts: ["a", "b"], id: 1 },
      { type: "abort", id: 2, target: 1 },
    ]);
    await supervisor.close();
  });

  it("complete sends the prompt and options as they are and streams the tokens", async () => {
    const engine = scriptedEngine((request, reply) => {
      if (request.type !== "complete") return;
      reply({ type: "token", id: request.id, text: "lo" });
      reply({ type: "token", id: request.id, text: "ng" });
      reply({ type: "result", id: request.id, value: result("long", "maxTokens") });
    });
    const supervisor = new EngineSupervisor(engine.spawn);
    const options = {
      temperature: 0.7,
      maxTokens: 4,
      topP: 0.9,
      topK: 40,
      minP: 0.05,
      repeatPenalty: { presencePenalty: 1, frequencyPenalty: 0.5, penalty: 1.1, lastTokens: 32 },
      tokenBias: { 12: -100 },
      json: true,
      logprobs: { top: 2 },
      stop: ["\n"],
      seed: 7,
    };
    const pieces: string[] = [];
    const answer = await supervisor.complete("Once", options, (t) => pieces.push(t));
    expect(answer).toEqual(result("long", "maxTokens"));
    expect(pieces).toEqual(["lo", "ng"]);
    expect(engine.sent).toEqual([{ type: "complete", prompt: "Once", options, id: 1 }]);
    await supervisor.close();
  });

  it("aborting a completion sends an abort naming it; the engine's abort result resolves it", async () => {
    const engine = scriptedEngine((request, reply) => {
      if (request.type === "complete") reply({ type: "token", id: request.id, text: "a" });
      if (request.type === "abort") {
        reply({ type: "result", id: request.id, value: { aborted: true } });
        reply({ type: "result", id: request.target, value: result("a", "abort") });
      }
    });
    const supervisor = new EngineSupervisor(engine.spawn);
    const controller = new AbortController();
    const answer = await supervisor.complete(
      "x",
      { temperature: 0, maxTokens: 8 },
      () => controller.abort(),
      controller.signal,
    );
    expect(answer.stopReason).toBe("abort");
    expect(engine.sent.map((r) => r.type)).toEqual(["complete", "abort"]);
    expect(engine.sent[1]).toMatchObject({ type: "abort", target: engine.sent[0]!.id });
    await supervisor.close();
  });
});
