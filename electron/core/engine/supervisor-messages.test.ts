/**
 * Malformed messages from the engine (common/engine-message-schema.ts): each fails the request it
 * names with a clear error, or is logged and dropped; the supervisor keeps working either way.
 * The engine is a scripted stand-in, in this process.
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { ApiError } from "../../api/errors";
import type { EngineRequest, GenerateResult, LoadedModel } from "../../../common/engine-protocol";
import { EngineSupervisor } from "./supervisor";
import type { EngineProcess } from "./types";

const model: LoadedModel = {
  path: "/m.gguf",
  contextSize: 512,
  gpu: null,
  threads: 1,
  trainContextSize: 512,
};
const answer: GenerateResult = {
  text: "hi",
  stopReason: "eos",
  tokens: 1,
  ttftMs: 1,
  durationMs: 2,
  promptTokensEvaluated: 3,
  contextTokens: 4,
  contextSize: 512,
};

/**
 * An engine that says ready and answers each request with `script` (raw messages, anything the
 * test wants); by default a valid answer. `sent` records the requests.
 */
/** Valid answers to the requests these tests make. */
function validReplies(request: EngineRequest): unknown[] {
  const value =
    request.type === "load"
      ? model
      : request.type === "generate"
        ? answer
        : request.type === "abort"
          ? { aborted: true }
          : null;
  return [{ type: "result", id: request.id, value }];
}

/**
 * An engine that says ready and answers each request with `script` (raw messages, anything the
 * test wants), valid answers by default. `sent` records the requests.
 */
function scriptedEngine() {
  const sent: EngineRequest[] = [];
  let listener: (message: unknown) => void = () => {};
  let exitListener: (code: number | null, signal: string | null) => void = () => {};
  const engine = {
    sent,
    emit: (message: unknown) => listener(message),
    script: validReplies,
    killed: false,
  };
  const proc: EngineProcess = {
    pid: 4242,
    send(message) {
      const request = message as EngineRequest;
      sent.push(request);
      setImmediate(() => {
        for (const reply of engine.script(request)) listener(reply);
      });
    },
    onMessage(l) {
      listener = l;
      setImmediate(() => l({ type: "ready", pid: 4242 }));
    },
    onExit(l) {
      exitListener = l;
    },
    kill() {
      engine.killed = true;
      setImmediate(() => exitListener(null, "SIGTERM"));
    },
  };
  return { engine, spawn: () => proc };
}

const hello = [{ role: "user" as const, text: "hi" }];
const greedy = { temperature: 0, maxTokens: 4 };

let stderr: MockInstance<typeof process.stderr.write>;
beforeEach(() => {
  stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
});
afterEach(() => {
  stderr.mockRestore();
});
const logged = (): string => stderr.mock.calls.map((call) => String(call[0])).join("");

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => new Error("expected a rejection"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

/** The supervisor still answers: a generation goes through with the default script. */
async function stillWorks(supervisor: EngineSupervisor, engine: ReturnType<typeof scriptedEngine>["engine"]) {
  engine.script = validReplies;
  await expect(supervisor.generate(hello, greedy, () => {})).resolves.toEqual(answer);
  expect(engine.killed).toBe(false);
  expect(supervisor.state).toBe("ready");
}

describe("EngineSupervisor: malformed messages from the engine", () => {
  it("a result whose value is not its request's reply rejects that request, and aborts a generation", async () => {
    const { engine, spawn } = scriptedEngine();
    const supervisor = new EngineSupervisor(spawn);
    await supervisor.load("/m.gguf");
    engine.script = (request) => {
      if (request.type !== "generate") return [];
      return [
        { type: "result", id: request.id, value: { ...answer, tokens: "many" } },
        // Late messages for the failed request: dropped quietly.
        { type: "token", id: request.id, text: "late" },
        { type: "result", id: request.id, value: answer },
      ];
    };
    const error = await rejection(supervisor.generate(hello, greedy, () => {}));
    expect(error.code).toBe("internal");
    expect(error.message).toMatch(
      /^The engine sent a malformed reply while answering \("generate" result: tokens: .*number/,
    );
    const generate = engine.sent.find((r) => r.type === "generate")!;
    expect(engine.sent.at(-1)).toMatchObject({ type: "abort", target: generate.id });
    await stillWorks(supervisor, engine);
    expect(logged()).toMatch(/\[engine\] malformed message dropped \(request \d+\): "generate" result/);
    expect(logged()).not.toMatch(/not in flight/);
    await supervisor.close();
  });

  it("a malformed token, an unknown type or a bad error naming a request in flight reject it", async () => {
    const { engine, spawn } = scriptedEngine();
    const supervisor = new EngineSupervisor(spawn);
    await supervisor.load("/m.gguf");
    const cases: [unknown, RegExp][] = [
      [{ type: "token", text: 5 }, /"token" message: text: .*string/],
      [{ type: "tokens", text: "a" }, /"tokens" message: type: /],
      [{ type: "error", code: "busy" }, /"error" message: message: /],
    ];
    for (const [message, problem] of cases) {
      const pieces: string[] = [];
      engine.script = (request) =>
        request.type === "generate"
          ? [
              { type: "token", id: request.id, text: "ok" },
              { ...(message as object), id: request.id },
            ]
          : [];
      const error = await rejection(supervisor.generate(hello, greedy, (t) => pieces.push(t)));
      expect(error.code).toBe("internal");
      expect(error.message).toMatch(/^The engine sent a malformed reply while answering/);
      expect(error.message).toMatch(problem);
      expect(pieces).toEqual(["ok"]);
    }
    await stillWorks(supervisor, engine);
    await supervisor.close();
  });

  it("a reply that is not a request's (unknown id, no id, not an object) is logged and dropped", async () => {
    const { engine, spawn } = scriptedEngine();
    const supervisor = new EngineSupervisor(spawn);
    await supervisor.load("/m.gguf");
    engine.emit({ type: "result", id: 999, value: answer });
    engine.emit({ type: "error", id: -1, code: "invalid_request", message: "Invalid engine request" });
    engine.emit({ type: "result", value: answer });
    engine.emit("hello");
    engine.emit(null);
    engine.emit({ type: "ready" });
    expect(logged()).toContain('dropped a "result" message for request 999, which is not in flight');
    expect(logged()).toContain(
      "request -1, which is not in flight (invalid_request: Invalid engine request)",
    );
    expect(logged()).toMatch(/malformed message dropped: "result" message: id: /);
    expect(logged()).toContain("malformed message dropped: not an object (string)");
    expect(logged()).toContain("malformed message dropped: not an object (null)");
    expect(logged()).toMatch(/malformed message dropped: "ready" message: pid: /);
    await stillWorks(supervisor, engine);
    await supervisor.close();
  });

  it("a malformed load reply fails the load; an unknown error code keeps the engine's message", async () => {
    const { engine, spawn } = scriptedEngine();
    const supervisor = new EngineSupervisor(spawn);
    engine.script = (request) =>
      request.type === "load" ? [{ type: "result", id: request.id, value: { path: "/m.gguf" } }] : [];
    const error = await rejection(supervisor.load("/m.gguf"));
    expect(error.message).toMatch(
      /^The engine sent a malformed reply while loading the model \("load" result: /,
    );
    expect(supervisor.loaded).toBeNull();
    // Not a generation: nothing to abort.
    expect(engine.sent.map((r) => r.type)).toEqual(["load"]);
    engine.script = (request) => [
      { type: "error", id: request.id, code: "out_of_cheese", message: "The engine ran out of cheese." },
    ];
    await expect(supervisor.load("/m.gguf")).rejects.toMatchObject({
      code: "internal",
      message: "The engine ran out of cheese.",
    });
    engine.script = validReplies;
    await expect(supervisor.load("/m.gguf")).resolves.toEqual(model);
    await stillWorks(supervisor, engine);
    await supervisor.close();
  });

  it("checks each request type's reply: embeddings, counts, fit and info", async () => {
    const { engine, spawn } = scriptedEngine();
    const supervisor = new EngineSupervisor(spawn);
    await supervisor.load("/m.gguf");
    const replies: Record<string, unknown> = {
      embed: [[0.5, "x"]],
      countTokens: [3, -1],
      fit: { contextSize: 512 },
      info: { buildType: "remote", gpu: null, llamaCpp: "b1" },
    };
    engine.script = (request) => [{ type: "result", id: request.id, value: replies[request.type] }];
    for (const [call, type] of [
      [() => supervisor.embed(["a"]), "embed"],
      [() => supervisor.countTokens(["a"]), "countTokens"],
      [() => supervisor.fit({ path: "/m.gguf" }), "fit"],
      [() => supervisor.info(), "info"],
    ] as const) {
      const error = await rejection(call());
      expect(error.message).toContain(`malformed reply while`);
      expect(error.message).toContain(`"${type}" result`);
    }
    await stillWorks(supervisor, engine);
    await supervisor.close();
  });
});
