/**
 * Batched serving (issue 28) in the real engine on the tiny fixtures: generations under the same
 * adapter set run together, each on its own sequence of the one context (node-llama-cpp batches
 * their decodes), and each answers exactly what it answers alone; a generation under another
 * set waits for the running group to drain and then runs under its own adapters; a waiting
 * conversation turn goes before waiting API requests. Concurrency is asserted on the engine's
 * own state (sequences in use, who streamed before whom), never on timing.
 */
import { freemem } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { GgmlType, GgufInsights, readGgufFileInfo } from "node-llama-cpp";
import {
  defaultContextSize,
  fittingSequences,
  KV_MEMORY_SHARE,
  sequencesSetting,
  sequencesWithin,
} from "./fit-estimate";
import { DEFAULT_SEQUENCES, ModelSession, nextSequenceCount } from "./model-session";
import type { AdapterUse, ChatTurn, GenerateOptions, GenerateResult } from "../../common/engine-protocol";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("macaron-batching-");
let fx: FixturePaths;
let backend: LlamaBackend;
let session: ModelSession;

const ask = (text: string): ChatTurn[] => [{ role: "user", text }];
const use = (id: string): AdapterUse[] => [{ path: fx.adapters.find((a) => a.id === id)!.path, scale: 1 }];

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  backend = await loadLlamaBackend(1);
  session = await ModelSession.open(
    backend,
    fx.basePath,
    { contextSize: 512, sequences: 4, growSequences: false },
    () => {},
  );
});

afterAll(async () => {
  await session?.dispose();
  await backend?.llama.dispose();
});

/** A generation whose streamed pieces and end are written to `events` as they happen. */
function run(
  name: string,
  history: ChatTurn[],
  options: GenerateOptions,
  events: string[],
  onPiece: () => void = () => {},
): Promise<GenerateResult> {
  let first = true;
  return session
    .generate(
      history,
      options,
      () => {
        if (first) events.push(`${name}:first`);
        first = false;
        onPiece();
      },
      new AbortController().signal,
    )
    .then((result) => {
      events.push(`${name}:done`);
      return result;
    });
}

/** The answer with nothing cached and nothing else running. */
async function alone(history: ChatTurn[], options: GenerateOptions): Promise<string> {
  await session.slots.clear();
  return (await session.generate(history, options, () => {}, new AbortController().signal)).text;
}

describe("batched generations", () => {
  it("same adapter set: two requests run at once on separate sequences and each answers as alone", async () => {
    const a = ask("tell me a story about a cat");
    const b = ask("write a poem about the sea");
    for (const options of [
      { temperature: 0, maxTokens: 24 },
      { temperature: 0.9, maxTokens: 24, seed: 1234 },
    ] satisfies GenerateOptions[]) {
      const expectedA = await alone(a, options);
      const expectedB = await alone(b, options);
      await session.slots.clear();
      const events: string[] = [];
      let maxInUse = 0;
      const seen = () => (maxInUse = Math.max(maxInUse, session.slots.inUse));
      const [ra, rb] = await Promise.all([
        run("a", a, options, events, seen),
        run("b", b, options, events, seen),
      ]);
      // Both streamed before either finished, on two sequences at once.
      expect(events.slice(0, 2).sort()).toEqual(["a:first", "b:first"]);
      expect(maxInUse).toBe(2);
      expect(ra.text).toBe(expectedA);
      expect(rb.text).toBe(expectedB);
      expect(session.slots.inUse).toBe(0);
      expect(session.groups.active).toBe(0);
    }
  });

  it("steps decoded one micro-batch per sequence (MACARON_ENGINE_MICRO_BATCHES=apart) answer as alone", async () => {
    const a = ask("tell me a story about a cat");
    const b = ask("write a poem about the sea");
    const previous = process.env.MACARON_ENGINE_MICRO_BATCHES;
    process.env.MACARON_ENGINE_MICRO_BATCHES = "apart";
    let apart: ModelSession | null = null;
    try {
      apart = await ModelSession.open(
        backend,
        fx.basePath,
        { contextSize: 512, sequences: 4, growSequences: false },
        () => {},
      );
      // The sequences of each batch, in the order node-llama-cpp added their tokens (its addon).
      const batches: { sequence: number; tokens: number }[][] = [];
      const addon = (apart.context as unknown as { _ctx: Record<string, (...args: never[]) => unknown> })
        ._ctx;
      const initBatch = addon.initBatch!.bind(addon);
      const addToBatch = addon.addToBatch!.bind(addon);
      // The addon's methods are read-only on its prototype: shadowed by own properties.
      const own = (key: string, value: (...args: never[]) => unknown) =>
        Object.defineProperty(addon, key, { value, writable: true, configurable: true });
      own("initBatch", (...args: never[]) => {
        batches.push([]);
        return initBatch(...args);
      });
      own("addToBatch", (...args: never[]) => {
        const [sequence, , tokens] = args as unknown as [number, number, Uint32Array];
        batches[batches.length - 1]!.push({ sequence, tokens: tokens.length });
        return addToBatch(...args);
      });
      for (const options of [
        { temperature: 0, maxTokens: 24 },
        { temperature: 0.9, maxTokens: 24, seed: 1234 },
      ] satisfies GenerateOptions[]) {
        const expected = [await alone(a, options), await alone(b, options)];
        const signal = new AbortController().signal;
        let maxInUse = 0;
        const seen = () => (maxInUse = Math.max(maxInUse, apart!.slots.inUse));
        const got = await Promise.all([a, b].map((h) => apart!.generate(h, options, seen, signal)));
        expect(maxInUse).toBe(2);
        expect(got.map((r) => r.text)).toEqual(expected);
      }
      // Both answers' steps went in descending sequence order (one micro-batch per sequence).
      const steps = batches.filter((b) => b.length === 2 && b.every((item) => item.tokens === 1));
      expect(steps.length).toBeGreaterThanOrEqual(2 * 20);
      for (const step of steps) expect(step[0]!.sequence).toBeGreaterThan(step[1]!.sequence);
    } finally {
      if (previous === undefined) delete process.env.MACARON_ENGINE_MICRO_BATCHES;
      else process.env.MACARON_ENGINE_MICRO_BATCHES = previous;
      await apart?.dispose();
    }
  });

  it("unseeded sampled requests running together get their own seeds", async () => {
    await session.slots.clear();
    const options: GenerateOptions = { temperature: 1.5, maxTokens: 24 };
    const results = await Promise.all([1, 2, 3, 4].map(() => run("x", ask("hello"), options, [])));
    expect(new Set(results.map((r) => r.text)).size).toBeGreaterThan(1);
  });

  it("another adapter set waits for the running group, then runs under its own adapters", async () => {
    await session.slots.clear();
    const events: string[] = [];
    let queuedWhileChat = 0;
    const chat = run(
      "chat",
      ask("hello"),
      { temperature: 0, maxTokens: 12, adapters: use("chat") },
      events,
      () => {
        queuedWhileChat = Math.max(queuedWhileChat, session.groups.queued);
      },
    );
    const coding = run(
      "coding",
      ask("hello"),
      { temperature: 0, maxTokens: 6, adapters: use("coding") },
      events,
    );
    const [rc, rk] = await Promise.all([chat, coding]);
    expect(queuedWhileChat).toBe(1);
    expect(events).toEqual(["chat:first", "chat:done", "coding:first", "coding:done"]);
    expect(rc.text).toBe("c".repeat(12));
    expect(rk.text).toBe("{{{{{{");
  });

  it("a waiting conversation turn goes before waiting API requests; a waiting request can be aborted", async () => {
    await session.slots.clear();
    const events: string[] = [];
    const running = run(
      "api1",
      ask("hello"),
      { temperature: 0, maxTokens: 8, adapters: use("chat") },
      events,
    );
    const api2 = run("api2", ask("hello"), { temperature: 0, maxTokens: 4, adapters: use("coding") }, events);
    const stop = new AbortController();
    const aborted = session.generate(ask("hello"), { temperature: 0, maxTokens: 4 }, () => {}, stop.signal);
    const chat = run(
      "chat",
      ask("hello"),
      { temperature: 0, maxTokens: 4, adapters: use("ui"), sessionKey: "conversation-1" },
      events,
    );
    stop.abort();
    expect(await aborted).toMatchObject({ text: "", stopReason: "abort", tokens: 0 });
    const [, r2, rc] = await Promise.all([running, api2, chat]);
    expect(events).toEqual(["api1:first", "api1:done", "chat:first", "chat:done", "api2:first", "api2:done"]);
    expect(rc.text).toBe("uuuu");
    expect(r2.text).toBe("{{{{");
  });
});

describe("sequences per context", () => {
  it("MACARON_ENGINE_SEQUENCES sets the default (1–64); unset or invalid leaves it to the memory", () => {
    expect(sequencesSetting({ MACARON_ENGINE_SEQUENCES: "8" })).toBe(8);
    expect(sequencesSetting({ MACARON_ENGINE_SEQUENCES: "1" })).toBe(1);
    for (const bad of ["0", "65", "2.5", "many", ""])
      expect(sequencesSetting({ MACARON_ENGINE_SEQUENCES: bad })).toBeNull();
    expect(sequencesSetting({})).toBeNull();
  });

  it("a load that names none gets as many sequences as KV_MEMORY_SHARE of the free memory holds, at least 1", async () => {
    // node-llama-cpp's own estimates for the fixture at its default context, as the engine asks.
    const insights = await GgufInsights.from(await readGgufFileInfo(fx.basePath), backend.llama);
    const weights = (await insights.estimateModelResourceRequirementsV2({ gpuLayers: 0 })).cpuRam;
    const contextSize = defaultContextSize(insights.trainContextSize!);
    const kv = async (sequences: number): Promise<number> =>
      (
        await insights.estimateContextResourceRequirementsV2({
          contextSize,
          modelGpuLayers: 0,
          sequences,
          flashAttention: false,
          kvCacheKeyType: GgmlType.F16,
          kvCacheValueType: GgmlType.F16,
        })
      ).cpuRam;
    expect(await kv(2)).toBeGreaterThan(await kv(1));
    const fit = (ramFreeBytes: number) =>
      fittingSequences(
        insights,
        null,
        { flashAttention: false, kvCacheType: "f16", max: DEFAULT_SEQUENCES },
        { ramFreeBytes, vramFreeBytes: 0 },
      );
    const freeFor = async (sequences: number) => weights + (await kv(sequences)) / KV_MEMORY_SHARE;
    expect(await fit(await freeFor(DEFAULT_SEQUENCES))).toBe(DEFAULT_SEQUENCES);
    expect(await fit(1e15)).toBe(DEFAULT_SEQUENCES);
    expect(await fit(await freeFor(2))).toBe(2);
    expect(await fit((await freeFor(3)) - 1)).toBe(2);
    expect(await fit(await freeFor(1))).toBe(1);
    expect(await fit(0)).toBe(1);
  });

  it("the count is the largest within both budgets: the most asked first, then by halving", async () => {
    let asked: number[] = [];
    const need = (n: number) => {
      asked.push(n);
      return Promise.resolve({ ram: n * 100, vram: n * 10 });
    };
    expect(await sequencesWithin(4, { ram: 250, vram: 1000 }, need)).toBe(2);
    expect(asked).toEqual([4, 2, 3]);
    asked = [];
    expect(await sequencesWithin(8, { ram: 1000, vram: 1000 }, need)).toBe(8);
    expect(asked).toEqual([8]);
    for (let fit = 1; fit <= 8; fit++) {
      asked = [];
      expect(await sequencesWithin(8, { ram: fit * 100, vram: 1000 }, need)).toBe(fit);
      expect(asked.length).toBeLessThanOrEqual(4);
    }
    expect(await sequencesWithin(4, { ram: 1000, vram: 25 }, need)).toBe(2);
    expect(await sequencesWithin(4, { ram: 0, vram: 0 }, need)).toBe(1);
    expect(await sequencesWithin(1, { ram: 0, vram: 0 }, need)).toBe(1);
  });

  it("a load with no count takes its sequences from the memory: all of them with room, 1 when the reserve leaves none", async () => {
    const saved = { ...process.env };
    delete process.env.MACARON_ENGINE_SEQUENCES;
    const open = async () => {
      const plain = await ModelSession.open(
        backend,
        fx.basePath,
        { contextSize: 256, growSequences: false },
        () => {},
      );
      const sequences = plain.context.totalSequences;
      expect(plain.info.settings?.sequences).toBe(sequences);
      await plain.dispose();
      return sequences;
    };
    try {
      delete process.env.MACARON_ENGINE_RAM_RESERVE_MB;
      expect(await open()).toBe(DEFAULT_SEQUENCES);
      // The RAM the user keeps for the rest of the machine is not the KV caches' to take.
      process.env.MACARON_ENGINE_RAM_RESERVE_MB = String(Math.ceil(freemem() / 2 ** 20));
      expect(await open()).toBe(1);
      process.env.MACARON_ENGINE_SEQUENCES = "3";
      expect(await open()).toBe(3);
    } finally {
      process.env = saved;
    }
  });
});

describe("a context that grows", () => {
  /** A session that starts with one sequence and grows to `sequences`. */
  const growing = (contextSize: number, sequences: number) =>
    ModelSession.open(backend, fx.basePath, { contextSize, sequences, growSequences: true }, () => {});

  it("grows to 4 sequences first, then to twice as many each time, never past its most", () => {
    expect(DEFAULT_SEQUENCES).toBe(8);
    expect(nextSequenceCount(1, 8)).toBe(4);
    expect(nextSequenceCount(2, 8)).toBe(4);
    expect(nextSequenceCount(4, 8)).toBe(8);
    expect(nextSequenceCount(4, 6)).toBe(6);
    expect(nextSequenceCount(1, 2)).toBe(2);
    expect(nextSequenceCount(8, 64)).toBe(16);
  });

  it("grows 1 → 4 → 8 as bursts of requests find every sequence taken, each answer as alone", async () => {
    const s = await growing(256, 8);
    try {
      const options: GenerateOptions = { temperature: 0, maxTokens: 16 };
      let inUse = 0;
      const generate = (text: string) =>
        s.generate(
          ask(text),
          options,
          () => (inUse = Math.max(inUse, s.slots.inUse)),
          new AbortController().signal,
        );
      const questions = [
        "tell me a story about a cat",
        "write a poem about the sea",
        "what makes bread rise",
        "describe the city at night",
        "why is the sky blue",
        "explain how a bicycle works",
        "describe a walk in the mountains",
        "write a letter to a friend",
      ];
      const alone: string[] = [];
      for (const q of questions) {
        alone.push((await generate(q)).text);
        await s.slots.clear();
      }
      expect(s.context.totalSequences).toBe(1);
      const burst = async (n: number) => {
        inUse = 0;
        const texts = (await Promise.all(questions.slice(0, n).map(generate))).map((r) => r.text);
        expect(texts).toEqual(alone.slice(0, n));
        await s.settled();
      };
      // A second request finds the one sequence taken: 4, not 8 (where llama.cpp writes every
      // KV cell at creation, two clients should not pay for eight).
      await burst(2);
      expect(s.context.totalSequences).toBe(4);
      // Four at once fit.
      await burst(4);
      expect(s.context.totalSequences).toBe(4);
      expect(inUse).toBe(4);
      // A fifth finds the four taken.
      await burst(5);
      expect(s.context.totalSequences).toBe(8);
      await burst(8);
      expect(inUse).toBe(8);
      expect(s.context.totalSequences).toBe(8);
      expect(s.groups.active).toBe(0);
    } finally {
      await s.dispose();
    }
  });

  it("a burst that fills the grown context while the first one is still freed grows it again at once", async () => {
    const s = await growing(512, 8);
    try {
      const generate = (text: string, onText: () => void, signal: AbortSignal) =>
        s.generate(ask(text), { temperature: 0, maxTokens: 480 }, onText, signal);
      // The first request keeps the one-sequence context, so the growth to 4 is not over, while
      // five more come: four take the new sequences, the fifth finds them taken and waits. Then
      // the first ends (aborted once that is so) and the context grows again for the fifth. The
      // five run until it has (or to the end of their context, and then the test fails).
      const stopFirst = new AbortController();
      const stopOthers = new AbortController();
      let fifthWaited = false;
      const first = generate(
        "tell me a story about a cat",
        () => {
          if (s.context.totalSequences === 4 && s.groups.active === 4 && s.groups.queued === 1) {
            fifthWaited = true;
            stopFirst.abort();
          }
        },
        stopFirst.signal,
      );
      const grown = () => {
        if (s.context.totalSequences === 8) stopOthers.abort();
      };
      const others = Promise.all(
        ["a", "b", "c", "d", "e"].map((x) =>
          generate(`a poem about the letter ${x}`, grown, stopOthers.signal),
        ),
      );
      const [firstResult] = await Promise.all([first, others]);
      expect(fifthWaited).toBe(true);
      expect(firstResult.stopReason).toBe("abort");
      await s.settled();
      expect(s.context.totalSequences).toBe(8);
    } finally {
      await s.dispose();
    }
  });
  it("starts with one sequence, grows when a second request comes, and answers both as alone", async () => {
    const s = await growing(512, 4);
    try {
      const options: GenerateOptions = { temperature: 0, maxTokens: 24 };
      const generate = (history: ChatTurn[], onPiece: () => void = () => {}) =>
        s.generate(history, options, onPiece, new AbortController().signal);
      const a = ask("tell me a story about a cat");
      const b = ask("write a poem about the sea");
      const expectedA = (await generate(a)).text;
      await s.slots.clear();
      const expectedB = (await generate(b)).text;
      const small = s.context;
      // Answered one after the other, nothing needed a second sequence.
      expect(small.totalSequences).toBe(1);
      await s.slots.clear();
      // b finds the one sequence taken: the context grows while a runs, and b runs on the new one.
      const [ra, rb] = await Promise.all([generate(a), generate(b)]);
      expect([ra.text, rb.text]).toEqual([expectedA, expectedB]);
      await s.settled();
      expect(s.context.totalSequences).toBe(4);
      expect(small.disposed).toBe(true);
      // Grown: the next two run together on two sequences.
      let maxInUse = 0;
      const seen = () => (maxInUse = Math.max(maxInUse, s.slots.inUse));
      const [ra2, rb2] = await Promise.all([generate(a, seen), generate(b, seen)]);
      expect(maxInUse).toBe(2);
      expect([ra2.text, rb2.text]).toEqual([expectedA, expectedB]);
      expect(s.groups.active).toBe(0);
    } finally {
      await s.dispose();
    }
  });
});
