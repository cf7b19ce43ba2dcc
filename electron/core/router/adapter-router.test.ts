import { describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors";
import { DEMO_ADAPTERS } from "../../../native/gguf/adapters";
import { AdapterRouter, formatBelow, type AdapterRouterOptions } from "./adapter-router";
import { HELD_OUT_PROMPTS } from "../../../testing/router/held-out-prompts";
import { lexicalEmbedder } from "../../../testing/router/lexical-embedder";
import { encodeRouterArtifact, trainRoutingHead } from "./routing-head";
import { MemoryRouterStore } from "./store";
import type { EmbedFn, RouterCandidate, RouterDecision, RouterMode } from "./types";

// Unit tests with a deterministic lexical embedder; router.engine.test.ts uses the real engine.
const candidates: RouterCandidate[] = DEMO_ADAPTERS.map((a) => ({
  ...a,
  routingExamples: [...a.routingExamples],
}));
const auto: RouterMode = { kind: "auto" };

function setup(options: AdapterRouterOptions = {}, store = new MemoryRouterStore(), modelKey = "model-1") {
  const embed = lexicalEmbedder();
  let time = 1000;
  const router = new AdapterRouter(
    { embed, modelKey: () => modelKey, store, clock: { now: () => time++ } },
    options,
  );
  return { router, embed, store };
}

async function expectInvalid(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => new Error("expected a rejection"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe("invalid_input");
  expect((error as ApiError).message).toMatch(message);
}

function expectWellFormed(d: RouterDecision): void {
  expect(d.confidence).toBeGreaterThanOrEqual(0);
  expect(d.confidence).toBeLessThanOrEqual(1);
  const values = Object.values(d.scores);
  for (const v of values) expect(v).toBeGreaterThanOrEqual(0);
  if (values.some((v) => v > 0)) expect(values.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  expect(d.latencyMs).toBeGreaterThanOrEqual(0);
}

describe("formatBelow (the low-confidence reason)", () => {
  it("writes both numbers alike, with the decimals that keep them apart", () => {
    expect(formatBelow(0.42, 0.5)).toBe("0.42 < 0.50");
    expect(formatBelow(0.4996, 0.5)).toBe("0.4996 < 0.5000");
    expect(formatBelow(0.499, 0.5)).toBe("0.499 < 0.500");
  });
});

describe("AdapterRouter pinned and blend modes", () => {
  it("pins one adapter at its default scale with confidence 1, without embedding", async () => {
    const { router, embed } = setup();
    const d = await router.decide({
      text: "anything",
      candidates,
      mode: { kind: "pinned", adapterId: "coding" },
    });
    expect(d).toMatchObject({
      mode: "pinned",
      adapters: [{ id: "coding", scale: 1 }],
      confidence: 1,
      reason: "pinned: coding",
    });
    expect(d.scores).toEqual({ chat: 0, coding: 1, agent: 0, ui: 0 });
    expect(embed.calls).toEqual([]);
  });

  it("refuses to pin an adapter that is not enabled", async () => {
    const { router } = setup();
    const mode: RouterMode = { kind: "pinned", adapterId: "poetry" };
    await expectInvalid(
      router.decide({ text: "x", candidates, mode }),
      /"poetry" is not installed or not enabled \(enabled: chat, coding, agent, ui\)/,
    );
    await expectInvalid(router.decide({ text: "x", candidates: [], mode }), /enabled: none/);
  });

  it("applies the given blend, largest first, dropping zero scales", async () => {
    const { router } = setup();
    const d = await router.decide({
      text: "x",
      candidates,
      mode: { kind: "blend", weights: { ui: 0.5, coding: 1.5, chat: 0 } },
    });
    expect(d.adapters).toEqual([
      { id: "coding", scale: 1.5 },
      { id: "ui", scale: 0.5 },
    ]);
    expect(d).toMatchObject({ mode: "blend", confidence: 1, reason: "blend: coding 1.50 + ui 0.50" });
    expect(d.scores).toEqual({ chat: 0, coding: 0.75, agent: 0, ui: 0.25 });
    expectWellFormed(d);
  });

  it("rejects invalid blends with a clear message", async () => {
    const { router } = setup();
    const blend = (weights: Record<string, number>) =>
      router.decide({ text: "x", candidates, mode: { kind: "blend", weights } });
    await expectInvalid(blend({}), /at least one adapter/);
    await expectInvalid(blend({ coding: 1, nope: 0.5 }), /"nope" is not installed/);
    await expectInvalid(blend({ coding: 2.5 }), /scale of "coding" must be a number from 0 to 2, got 2.5/);
    await expectInvalid(blend({ coding: -0.1 }), /got -0.1/);
    await expectInvalid(blend({ coding: Number.NaN }), /got NaN/);
    await expectInvalid(blend({ coding: 0, ui: 0 }), /scale above 0/);
  });
});

describe("AdapterRouter auto mode", () => {
  it("routes held-out prompts to the adapter of their domain", async () => {
    const { router } = setup();
    let correct = 0;
    for (const { expected, text } of HELD_OUT_PROMPTS) {
      const d = await router.decide({ text, candidates, mode: auto });
      expectWellFormed(d);
      const top = Object.entries(d.scores).sort((a, b) => b[1] - a[1])[0]?.[0];
      if (top === expected) correct++;
    }
    expect(correct / HELD_OUT_PROMPTS.length).toBeGreaterThanOrEqual(0.8);
  });

  it("picks one adapter at its default scale when confident", async () => {
    const { router } = setup();
    const d = await router.decide({
      text: "Write a TypeScript function that reverses an array.",
      candidates,
      mode: auto,
    });
    expect(d.adapters).toEqual([{ id: "coding", scale: 1 }]);
    expect(d.confidence).toBeGreaterThanOrEqual(0.5);
    expect(d.confidence).toBe(d.scores.coding);
    expect(d.reason).toBe(`auto: coding (${d.confidence.toFixed(2)})`);
  });

  it("blends the top two in proportion to their probabilities when confidence is low", async () => {
    const { router } = setup({ lowConfidenceThreshold: 1.01 });
    const d = await router.decide({
      text: "Write a TypeScript function that reverses an array.",
      candidates,
      mode: auto,
    });
    expect(d.adapters).toHaveLength(2);
    const [a, b] = d.adapters;
    expect(a?.id).toBe("coding");
    const pa = d.scores[a?.id ?? ""] ?? 0;
    const pb = d.scores[b?.id ?? ""] ?? 0;
    expect(pa).toBeGreaterThanOrEqual(pb);
    expect(a?.scale).toBeCloseTo(pa / (pa + pb), 2);
    expect((a?.scale ?? 0) + (b?.scale ?? 0)).toBeCloseTo(1, 2);
    expect(d.reason).toMatch(/^auto: low confidence \(\d\.\d\d < 1\.01\), blend coding /);
  });

  it("is deterministic: same inputs, same decision, across router instances", async () => {
    const decisions = await Promise.all(
      [0, 1].map(async () => {
        const { router } = setup();
        return Promise.all(
          HELD_OUT_PROMPTS.map(({ text }) => router.decide({ text, candidates, mode: auto })),
        );
      }),
    );
    const strip = (ds: RouterDecision[]) => ds.map(({ latencyMs: _, ...rest }) => rest);
    expect(strip(decisions[0] ?? [])).toEqual(strip(decisions[1] ?? []));
  });

  it("falls back to chat when it cannot classify, and recovers", async () => {
    const store = new MemoryRouterStore();
    let fail = true;
    const real = lexicalEmbedder();
    const embed: EmbedFn = (texts) => (fail ? Promise.reject(new Error("engine restarting")) : real(texts));
    const router = new AdapterRouter({ embed, modelKey: () => "m", store });
    const text = "Fix the bug in my Python code.";
    const down = await router.decide({ text, candidates, mode: auto });
    expect(down).toMatchObject({
      adapters: [{ id: "chat", scale: 1 }],
      confidence: 0,
      reason: "auto: embedding failed: engine restarting; fallback chat",
    });
    fail = false;
    expect((await router.decide({ text, candidates, mode: auto })).adapters).toEqual([
      { id: "coding", scale: 1 },
    ]);

    expect((await router.decide({ text: "  ", candidates, mode: auto })).reason).toBe(
      "auto: empty text; fallback chat",
    );
    const noExamples = candidates.map((c) => ({ ...c, routingExamples: [] }));
    expect((await router.decide({ text, candidates: noExamples, mode: auto })).reason).toBe(
      "auto: no routing examples; fallback chat",
    );
    const none = await router.decide({ text, candidates: [], mode: auto });
    expect(none).toMatchObject({
      adapters: [],
      confidence: 0,
      reason: "auto: no adapters enabled; base model",
    });
  });

  it("only chooses among the enabled adapters", async () => {
    const { router } = setup();
    const enabled = candidates.filter((c) => c.id !== "coding");
    const d = await router.decide({
      text: "Write a TypeScript function that reverses a string.",
      candidates: enabled,
      mode: auto,
    });
    expect(Object.keys(d.scores).sort()).toEqual(["agent", "chat", "ui"]);
    expect(d.adapters.every((a) => a.id !== "coding")).toBe(true);
  });
});

describe("AdapterRouter seed vector cache", () => {
  it("embeds the routing examples once per model and example set", async () => {
    const store = new MemoryRouterStore();
    const first = setup({}, store);
    await first.router.decide({ text: "hello there", candidates, mode: auto });
    await first.router.decide({ text: "hello again", candidates, mode: auto });
    const seedCount = candidates.reduce((n, c) => n + c.routingExamples.length, 0);
    expect(first.embed.calls.map((c) => c.length)).toEqual([seedCount, 1, 1]);

    // A restart with the same store: only the turn is embedded.
    const second = setup({}, store);
    await second.router.decide({ text: "hello there", candidates, mode: auto });
    expect(second.embed.calls).toEqual([["hello there"]]);

    // One new example: only it is embedded. Another model: everything again.
    const changed = candidates.map((c) =>
      c.id === "ui" ? { ...c, routingExamples: [...c.routingExamples, "Draw a pie chart."] } : c,
    );
    await second.router.prepare(changed);
    expect(second.embed.calls.at(-1)).toEqual(["Draw a pie chart."]);
    const other = setup({}, store, "model-2");
    await other.router.prepare(candidates);
    expect(other.embed.calls.map((c) => c.length)).toEqual([seedCount]);
  });
});

describe("AdapterRouter shared turn embedding", () => {
  it("takes the turn's vector from embedQuery (trimmed), deciding as it would alone", async () => {
    const alone = setup();
    const embed = lexicalEmbedder();
    const asked: string[] = [];
    const shared = new AdapterRouter({
      embed,
      embedQuery: async (text) => {
        asked.push(text);
        return (await lexicalEmbedder()([text]))[0]!;
      },
      modelKey: () => "model-1",
      store: new MemoryRouterStore(),
      clock: { now: () => 0 },
    });
    for (const text of ["  Write a python function that sorts a list  ", "Plot my expenses"]) {
      const expected = await alone.router.decide({ text, candidates, mode: auto });
      const got = await shared.decide({ text, candidates, mode: auto });
      expect({ ...got, latencyMs: 0 }).toEqual({ ...expected, latencyMs: 0 });
    }
    expect(asked).toEqual(["Write a python function that sorts a list", "Plot my expenses"]);
    // Only the routing examples went through embed: the turns did not.
    const seedCount = candidates.reduce((n, c) => n + c.routingExamples.length, 0);
    expect(embed.calls.map((c) => c.length)).toEqual([seedCount]);
  });

  it("falls back when the shared embedding fails or is invalid", async () => {
    let answer: () => Promise<number[]> = () => Promise.reject(new Error("engine restarting"));
    const router = new AdapterRouter({
      embed: lexicalEmbedder(),
      embedQuery: () => answer(),
      modelKey: () => "m",
      store: new MemoryRouterStore(),
    });
    const failed = await router.decide({ text: "hello", candidates, mode: auto });
    expect(failed.reason).toBe("auto: embedding failed: engine restarting; fallback chat");
    answer = () => Promise.resolve([Number.NaN]);
    const invalid = await router.decide({ text: "hello", candidates, mode: auto });
    expect(invalid.reason).toBe(
      "auto: embedding failed: the engine returned an invalid embedding; fallback chat",
    );
  });
});

describe("AdapterRouter learning from overrides", () => {
  const probe = "Draw the quarterly revenue numbers for the team.";
  const similar = "Draw the quarterly revenue numbers for my team.";

  it("routes the overridden text and similar ones to the chosen adapter", async () => {
    const { router } = setup();
    const before = await router.decide({ text: probe, candidates, mode: auto });
    const target = before.adapters[0]?.id === "agent" ? "coding" : "agent";
    await router.recordOverride({ text: probe, chosenAdapterId: target });
    for (const text of [probe, similar]) {
      const d = await router.decide({ text, candidates, mode: auto });
      expect(d.adapters[0]?.id).toBe(target);
      expect(d.confidence).toBeGreaterThan(before.scores[target] ?? 1);
    }
    // Unrelated prompts keep their route.
    expect(
      (await router.decide({ text: "Make a table comparing these four phones.", candidates, mode: auto }))
        .adapters[0]?.id,
    ).toBe("ui");
  });

  it("persists learned examples through the store across restarts", async () => {
    const store = new MemoryRouterStore();
    const first = setup({}, store);
    await first.router.recordOverride({ text: probe, chosenAdapterId: "agent" });
    const learned = await first.router.decide({ text: similar, candidates, mode: auto });
    first.router.dispose();
    expect(store.listLearned()).toEqual([expect.objectContaining({ text: probe, adapterId: "agent" })]);

    const second = setup({}, store);
    const again = await second.router.decide({ text: similar, candidates, mode: auto });
    expect({ ...again, latencyMs: 0 }).toEqual({ ...learned, latencyMs: 0 });
    expect(second.embed.calls).toEqual([[similar]]);
  });

  it("keeps a bounded number of learned examples per adapter, newest label winning", async () => {
    const { router, store } = setup({ maxLearnedPerAdapter: 2 });
    for (const n of [1, 2, 3]) await router.recordOverride({ text: `turn ${n}`, chosenAdapterId: "ui" });
    await router.recordOverride({ text: "turn 3", chosenAdapterId: "coding" });
    expect(store.listLearned().map((e) => [e.text, e.adapterId])).toEqual([
      ["turn 2", "ui"],
      ["turn 3", "coding"],
    ]);
  });

  it("rejects an override without text or adapter", async () => {
    const { router } = setup();
    await expectInvalid(router.recordOverride({ text: " ", chosenAdapterId: "ui" }), /needs the text/);
    await expectInvalid(router.recordOverride({ text: "hi", chosenAdapterId: "" }), /needs an adapter id/);
  });
});

describe("AdapterRouter with a learned routing head (issue 29)", () => {
  const BASE = "b".repeat(64);
  async function headCandidates(router: unknown = undefined): Promise<RouterCandidate[]> {
    const embed = lexicalEmbedder();
    const rows = candidates.flatMap((c) => c.routingExamples.map((text) => ({ label: c.id, text })));
    const vectors = await embed(rows.map((r) => r.text));
    const head = trainRoutingHead(
      rows.map((r, i) => ({ ...r, embedding: vectors[i]! })),
      { baseSha256: BASE, version: 7 },
    );
    const encoded = router === undefined ? encodeRouterArtifact(head.artifact) : router;
    // The head rides in one version's lineage (here coding's), like a release carries it.
    return candidates.map((c) =>
      c.id === "coding"
        ? { ...c, lineage: { parent: null, trainedFrom: "x", details: { router: encoded } } }
        : c,
    );
  }
  function headRouter(base: string | null) {
    const logged: string[] = [];
    let time = 1000;
    const router = new AdapterRouter({
      embed: lexicalEmbedder(),
      modelKey: () => "model-1",
      store: new MemoryRouterStore(),
      clock: { now: () => time++ },
      baseSha256: () => Promise.resolve(base),
      log: (m) => logged.push(m),
    });
    return { router, logged };
  }

  it("routes with the head trained for the loaded base, and says so", async () => {
    const { router } = headRouter(BASE);
    const withHead = await headCandidates();
    const d = await router.decide({
      text: "Write a TypeScript function that sorts an array.",
      candidates: withHead,
      mode: auto,
    });
    expectWellFormed(d);
    expect(d.adapters[0]?.id).toBe("coding");
    expect(d.reason).toMatch(/\[router v7\]$/);
  });

  it("keeps the kernel classifier on another base, without a base hash, or for a candidate the head does not know", async () => {
    const withHead = await headCandidates();
    for (const base of ["c".repeat(64), null]) {
      const d = await headRouter(base).router.decide({
        text: "Tell me a fun fact about dolphins.",
        candidates: withHead,
        mode: auto,
      });
      expect(d.reason).not.toMatch(/router v/);
    }
    const extra: RouterCandidate = {
      id: "poetry",
      domain: "poetry",
      defaultScale: 1,
      routingExamples: ["Write a haiku."],
    };
    const d = await headRouter(BASE).router.decide({
      text: "Write a haiku.",
      candidates: [...withHead, extra],
      mode: auto,
    });
    expect(d.reason).not.toMatch(/router v/);
  });

  it("keeps the old router when a release's router artifact is corrupt, with a clear log line", async () => {
    const { router, logged } = headRouter(BASE);
    const corrupt = await headCandidates({ gz: "bm90IGd6aXA=" });
    const first = await router.decide({
      text: "Write a TypeScript function that sorts an array.",
      candidates: corrupt,
      mode: auto,
    });
    await router.decide({
      text: "Show me a form to register for the event.",
      candidates: corrupt,
      mode: auto,
    });
    expect(first.adapters[0]?.id).toBe("coding"); // the kernel classifier still answers
    expect(first.reason).toMatch(/router of coding unusable, kernel classifier$/);
    expect(logged).toEqual([
      expect.stringMatching(/^The router artifact of coding is not used: the router artifact cannot be read/),
    ]);
  });

  it("keeps the kernel classifier when a head was made for another embedding length, logged once", async () => {
    const { router, logged } = headRouter(BASE);
    // Decodable and for this base, but for 32-value embeddings (the engine gives 64 here).
    const embed = lexicalEmbedder();
    const rows = candidates.flatMap((c) => c.routingExamples.map((text) => ({ label: c.id, text })));
    const vectors = await embed(rows.map((r) => r.text));
    const short = trainRoutingHead(
      rows.map((r, i) => ({ ...r, embedding: vectors[i]!.slice(0, 32) })),
      { baseSha256: BASE, version: 9, steps: 5 },
    );
    const withHead = await headCandidates(encodeRouterArtifact(short.artifact));
    const first = await router.decide({
      text: "Write a TypeScript function that sorts an array.",
      candidates: withHead,
      mode: auto,
    });
    const second = await router.decide({
      text: "Show me a form to register for the event.",
      candidates: withHead,
      mode: auto,
    });
    expect(first.adapters[0]?.id).toBe("coding"); // not the chat fallback
    expect(first.reason).not.toMatch(/embedding failed|fallback/);
    expect(first.reason).toMatch(/router of coding unusable, kernel classifier$/);
    expect(second.adapters[0]?.id).toBe("ui");
    expect(logged).toEqual([
      expect.stringMatching(
        /^The router artifact of coding is not used: it is made for embeddings of 32 values, the engine's have 64$/,
      ),
    ]);
  });

  it("lets the user's override win on top of the head", async () => {
    const { router } = headRouter(BASE);
    const withHead = await headCandidates();
    const text = "Write a TypeScript function that sorts an array.";
    await router.recordOverride({ text, chosenAdapterId: "ui" });
    const d = await router.decide({ text, candidates: withHead, mode: auto });
    expect(d.adapters[0]?.id).toBe("ui");
    expect(d.reason).toMatch(/\[router v7\], your overrides$/);
    // Far from the override the head decides as before.
    const other = await router.decide({
      text: "Tell me a fun fact about dolphins.",
      candidates: withHead,
      mode: auto,
    });
    expect(other.adapters[0]?.id).toBe("chat");
  });
});
