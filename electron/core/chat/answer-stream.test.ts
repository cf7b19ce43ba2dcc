/**
 * The answer's `chat.delta` events are merged per window (DeltaBatcher): the text they add up to
 * is the answer, the first piece is not held back, the last ones come before stream() returns
 * (before chat.done), and after Stop nothing more is emitted.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MessageStore } from "../conversations/message-store";
import type { ChatTurn, GenerateOptions, GenerateResult } from "../engine/types";
import { EventBus } from "../events/event-bus";
import { EventRecorder } from "../../../testing/core/events";
import { FakeEngine, loadedModel } from "../../../testing/engine/fake-engine";
import { AnswerStreamer } from "./answer-stream";
import type { Generation } from "./generations";
import type { LoadedModelTokens } from "./token-estimate";

const HISTORY: ChatTurn[] = [{ role: "user", text: "Go" }];
const OPTIONS: GenerateOptions = { temperature: 0, maxTokens: 64 };

/** An engine whose tokens and end the test drives: `started` resolves with the call's hooks. */
function manualEngine() {
  let began!: (hooks: { onToken: (t: string) => void; signal: AbortSignal }) => void;
  const started = new Promise<{ onToken: (t: string) => void; signal: AbortSignal }>((r) => (began = r));
  let finish!: (result: GenerateResult) => void;
  let fail!: (error: Error) => void;
  const engine = new FakeEngine();
  engine.loaded = loadedModel("/models/m.gguf");
  engine.generate = (_history, _options, onToken, signal) =>
    new Promise<GenerateResult>((resolve, reject) => {
      finish = resolve;
      fail = reject;
      began({ onToken, signal: signal! });
    });
  return { engine, started, finish: (r: GenerateResult) => finish(r), fail: (e: Error) => fail(e) };
}

function setup(engine: FakeEngine, deltaBatchMs?: number) {
  const bus = new EventBus();
  const events = new EventRecorder((l) => bus.subscribe(l));
  const saved: string[] = [];
  const messages = {
    saveContent: (_id: string, content: string) => saved.push(content),
  } as unknown as MessageStore;
  const tokens = { learn: () => undefined } as unknown as LoadedModelTokens;
  const streamer = new AnswerStreamer({
    engine,
    events: bus,
    messages,
    tokens,
    flushIntervalMs: 10_000,
    log: () => undefined,
    ...(deltaBatchMs === undefined ? {} : { deltaBatchMs }),
  });
  const gen: Generation = { controller: new AbortController(), shutdown: false, done: Promise.resolve() };
  const deltas = () => events.of("chat.delta").map((d) => d.delta);
  return { streamer, gen, deltas, events };
}

function result(text: string, stopReason: GenerateResult["stopReason"] = "eos"): GenerateResult {
  return {
    text,
    stopReason,
    tokens: text.length,
    ttftMs: 1,
    durationMs: 1,
    promptTokensEvaluated: 1,
    contextTokens: 1,
    contextSize: 512,
  };
}

describe("AnswerStreamer deltas", () => {
  it("add up to the answer and start with its first piece, for any pieces", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: "grapheme", minLength: 1, maxLength: 5 }), {
          minLength: 1,
          maxLength: 40,
        }),
        async (pieces) => {
          const engine = new FakeEngine();
          engine.loaded = loadedModel("/models/m.gguf");
          engine.scripts.push({ tokens: pieces });
          const s = setup(engine, 8);
          const { final } = await s.streamer.stream(s.gen, "c1", "m1", HISTORY, OPTIONS);
          expect(final.status).toBe("complete");
          expect(s.deltas().join("")).toBe(pieces.join(""));
          expect(final.content).toBe(pieces.join(""));
          expect(s.deltas()[0]).toBe(pieces[0]);
          expect(s.events.of("chat.delta").every((d) => d.messageId === "m1")).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("merges the pieces that come within the window, and sends the rest before it returns", async () => {
    const m = manualEngine();
    const s = setup(m.engine, 60_000);
    const answer = s.streamer.stream(s.gen, "c1", "m1", HISTORY, OPTIONS);
    const { onToken } = await m.started;
    onToken("Hel");
    onToken("lo");
    onToken(" there");
    expect(s.deltas()).toEqual(["Hel"]);
    m.finish(result("Hello there"));
    const { final } = await answer;
    expect(s.deltas()).toEqual(["Hel", "lo there"]);
    expect(final).toMatchObject({ status: "complete", content: "Hello there" });
  });

  it("after Stop emits nothing more, and keeps what was shown", async () => {
    const m = manualEngine();
    const s = setup(m.engine, 60_000);
    const answer = s.streamer.stream(s.gen, "c1", "m1", HISTORY, OPTIONS);
    const { onToken } = await m.started;
    onToken("Par");
    onToken("tial"); // merged, not yet shown
    s.gen.controller.abort();
    onToken(" late");
    m.finish(result("Partial late", "abort"));
    const { final } = await answer;
    expect(s.deltas()).toEqual(["Par"]);
    expect(final).toMatchObject({ status: "stopped", content: "Par" });
  });

  it("on an engine failure shows the text generated before it", async () => {
    const m = manualEngine();
    const s = setup(m.engine, 60_000);
    const answer = s.streamer.stream(s.gen, "c1", "m1", HISTORY, OPTIONS);
    const { onToken } = await m.started;
    onToken("a");
    onToken("b");
    m.fail(new Error("boom"));
    const { final } = await answer;
    expect(s.deltas()).toEqual(["a", "b"]);
    expect(final).toMatchObject({ status: "error", content: "ab" });
  });

  it("with a window of 0 emits one delta per piece", async () => {
    const engine = new FakeEngine();
    engine.loaded = loadedModel("/models/m.gguf");
    engine.scripts.push({ tokens: ["a", "b", "c"] });
    const s = setup(engine, 0);
    await s.streamer.stream(s.gen, "c1", "m1", HISTORY, OPTIONS);
    expect(s.deltas()).toEqual(["a", "b", "c"]);
  });
});
