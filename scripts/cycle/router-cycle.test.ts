import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_ADAPTERS } from "../../native/gguf/adapters";
import { HELD_OUT_PROMPTS } from "../../testing/router/held-out-prompts";
import { lexicalEmbedder } from "../../testing/router/lexical-embedder";
import { testDir } from "../../testing/core/temp-dir";
import type { RouterCandidate } from "../../electron/core/router";
import {
  encodeRouterArtifact,
  headOf,
  trainRoutingHead,
  type RouterArtifact,
} from "../../electron/core/router/routing-head";
import {
  carryingRouter,
  judgeRouter,
  liveHead,
  normalizeRoutingText,
  parentRouterToCarry,
  routeSuite,
  routingOutcomes,
  seedRouterTexts,
  withoutSuiteTexts,
} from "./router-cycle";

const BASE = "d".repeat(64);
const candidates: RouterCandidate[] = DEMO_ADAPTERS.map((a) => ({
  ...a,
  routingExamples: [...a.routingExamples],
}));
const suite = HELD_OUT_PROMPTS.map((p, i) => ({ id: `case-${i}`, text: p.text, expected: p.expected }));

async function trained(version = 1): Promise<RouterArtifact> {
  const embed = lexicalEmbedder();
  const rows = candidates.flatMap((c) => c.routingExamples.map((text) => ({ label: c.id, text })));
  const vectors = await embed(rows.map((r) => r.text));
  return trainRoutingHead(
    rows.map((r, i) => ({ ...r, embedding: vectors[i]! })),
    { baseSha256: BASE, version },
  ).artifact;
}

describe("the router gate (judgeRouter through the app's router)", () => {
  it("passes a trained head that routes at least as well as live, and rejects a head that always says one domain", async () => {
    const embed = lexicalEmbedder();
    const live = await routeSuite(suite, candidates, embed, BASE);
    const good = await trained();
    const withGood = await routeSuite(
      suite,
      carryingRouter(candidates, "chat", encodeRouterArtifact(good)),
      embed,
      BASE,
    );
    const verdict = judgeRouter(suite, withGood, live, { minRate: 0.2, liveName: "kernel classifier" });
    expect(verdict.passed).toBe(true);
    expect(verdict.candidatePassed).toBeGreaterThanOrEqual(verdict.livePassed);

    // The same head with a bias that drowns everything else: every text goes to chat.
    const chatIndex = good.labels.indexOf("chat");
    const degenerate = { ...good, version: 2, bias: good.labels.map((_, k) => (k === chatIndex ? 1000 : 0)) };
    expect(() => headOf(degenerate)).not.toThrow();
    const routes = await routeSuite(
      suite,
      carryingRouter(candidates, "chat", encodeRouterArtifact(degenerate)),
      embed,
      BASE,
    );
    expect(new Set(routes)).toEqual(new Set(["chat"]));
    const rejected = judgeRouter(suite, routes, live, { minRate: 0.2, liveName: "kernel classifier" });
    expect(rejected.passed).toBe(false);
    expect(rejected.reason).toMatch(/^degenerate: 20 of 20 cases routed to chat/);
    // Even with every chat case right and a live router that is no better.
    const alwaysChat = judgeRouter(suite, routes, routes, { minRate: 0, liveName: "head v1" });
    expect(alwaysChat.passed).toBe(false);
  });

  it("passes a perfect head on an unbalanced suite (the tester's 12 coding + 2 each), still rejecting a constant one", () => {
    const skewed = [
      ...Array.from({ length: 12 }, (_, i) => ({ id: `coding-${i}`, expected: "coding" })),
      ...["chat", "agent", "ui"].flatMap((l) => [0, 1].map((i) => ({ id: `${l}-${i}`, expected: l }))),
    ];
    const perfect = skewed.map((c) => c.expected);
    const live = skewed.map(() => "chat");
    expect(judgeRouter(skewed, perfect, live, { minRate: 0, liveName: "x" })).toMatchObject({
      passed: true,
      reason: "18 of 18 right (live x: 2)",
    });
    // One more case sent to coding than expect it: degenerate (13 > max(9, 12)).
    const oneMore = [...perfect.slice(0, 17), "coding"];
    expect(judgeRouter(skewed, oneMore, live, { minRate: 0, liveName: "x" })).toMatchObject({
      passed: false,
      reason: "degenerate: 13 of 18 cases routed to coding (at most 50%, or the 12 that expect it)",
    });
    // All-chat on the unbalanced suite: 18 > max(9, 2).
    expect(judgeRouter(skewed, live, live, { minRate: 0, liveName: "x" }).passed).toBe(false);
  });

  it("rejects a head worse than live, under the floor, or without cases", () => {
    const four = ["chat", "ui", "coding", "agent"].map((expected, i) => ({ id: `c${i}`, expected }));
    const right = ["chat", "ui", "coding", "agent"];
    expect(
      judgeRouter(four, ["chat", "ui", "coding", "chat"], right, { minRate: 0, liveName: "x" }),
    ).toMatchObject({
      passed: false,
      reason: "worse than live (x): 3 vs 4 of 4",
    });
    const wrong = ["ui", "chat", "agent", "coding"];
    expect(judgeRouter(four, wrong, wrong, { minRate: 0.5, liveName: "x" })).toMatchObject({
      passed: false,
      reason: "0 of 4 under the floor 0.5",
    });
    expect(judgeRouter([], [], [], { minRate: 0, liveName: "x" }).passed).toBe(false);
    expect(judgeRouter(four, right, wrong, { minRate: 0.5, liveName: "x" })).toMatchObject({
      passed: true,
      reason: "4 of 4 right (live x: 0)",
    });
  });

  it("finds the live head the app would use: the newest for the base, unusable ones ignored", async () => {
    const v1 = encodeRouterArtifact(await trained(1));
    const v3 = encodeRouterArtifact(await trained(3));
    const both = carryingRouter(carryingRouter(candidates, "chat", v1), "ui", v3);
    expect(liveHead(both, BASE)?.version).toBe(3);
    expect(liveHead(both, "e".repeat(64))).toBeNull();
    expect(liveHead(carryingRouter(candidates, "chat", { gz: "broken" }), BASE)).toBeNull();
  });
});

describe("carrying the parent's router on", () => {
  it("carries a usable parent head and drops an unusable one (corrupt, or another feature version) with a log line", async () => {
    const good = encodeRouterArtifact(await trained(3));
    expect(parentRouterToCarry(good)).toEqual({ encoded: good, dropped: null });
    expect(parentRouterToCarry(undefined)).toEqual({ encoded: undefined, dropped: null });

    const art = await trained(3);
    const future = encodeRouterArtifact({
      ...art,
      features: { ...art.features, version: 2 as unknown as 1 },
    });
    const lines: string[] = [];
    const dropped = parentRouterToCarry(future, (l) => lines.push(l));
    expect(dropped.encoded).toBeUndefined();
    expect(dropped.dropped).toMatch(/features are version 2, this build reads version 1/);
    expect(lines).toEqual([
      expect.stringMatching(/parent's router artifact is unusable and is not carried on/),
    ]);

    const corrupt = parentRouterToCarry({ gz: "bm90IGd6aXA=" });
    expect(corrupt.encoded).toBeUndefined();
    expect(corrupt.dropped).toMatch(/cannot be read/);
  });
});

describe("router training data", () => {
  it("leaves out suite texts in trivial variants (the tester's card-games line), keeping other texts", () => {
    const held = [{ text: "Quick question: are you a fan of card games?" }, { text: "Hi there" }];
    expect(normalizeRoutingText(" Quick question:  are  you  a  FAN  of  card  games !!")).toBe(
      "quick question are you a fan of card games",
    );
    expect(normalizeRoutingText("Ｗｒｉｔｅ　ａ　ｆｕｎｃｔｉｏｎ…")).toBe("write a function");
    const texts = [
      " quick question:  are  you  a  fan  of  card  games !!", // the tester's: got through
      "Quick question — are you a fan of card games???",
      "So, quick question: are you a fan of card games, or not?", // the suite text with words around it
      "Quick question: are you a big fan of card games?", // word sets' Jaccard 9/10
      "HI THERE!",
      "Hi there, can you write a Python function?", // a 2-word suite text is not matched by containment
      "Are you a fan of board games?",
      "Write a TypeScript function that sorts an array.",
    ].map((text) => ({ text }));
    expect(withoutSuiteTexts(texts, held).map((t) => t.text)).toEqual([
      "Hi there, can you write a Python function?",
      "Are you a fan of board games?",
      "Write a TypeScript function that sorts an array.",
    ]);
  });

  it("reads the seed training prompts only, never a held-out file", async () => {
    const dir = testDir("router-seeds-");
    const line = (q: string) =>
      JSON.stringify({
        messages: [
          { role: "user", content: q },
          { role: "assistant", content: "a" },
        ],
      });
    writeFileSync(join(dir, "chat.train.jsonl"), `${line("Hello there")}\n\n${line(" Nice day ")}\n`);
    writeFileSync(join(dir, "chat.heldout.jsonl"), `${line("HELD OUT")}\n`);
    writeFileSync(join(dir, "poetry.train.jsonl"), `${line("A haiku please")}\n`);
    const texts = await seedRouterTexts(dir, ["chat", "ui"]);
    expect(texts).toEqual([
      { label: "chat", text: "Hello there", source: "seeds", weight: 1 },
      { label: "chat", text: "Nice day", source: "seeds", weight: 1 },
    ]);
    // A broken line (the tester's truncated one) is named by file and line.
    writeFileSync(
      join(dir, "ui.train.jsonl"),
      `${line("A form")}\n\n{"messages":[{"role":"user","content":\n`,
    );
    await expect(seedRouterTexts(dir, ["chat", "ui"])).rejects.toThrow(
      `${join(dir, "ui.train.jsonl")}:3: not a JSON line (Unexpected end of JSON input)`,
    );
  });

  it("turns the raw export's overrides, pins and good ratings into labels, strongest signal first", () => {
    const item = (over: Record<string, unknown>) => ({
      installId: "i",
      receivedAt: 1,
      item: {
        kind: "rating",
        createdAt: 1,
        rating: "good",
        prompt: [{ role: "user", text: "Plot my steps" }],
        versions: { adapters: [{ id: "chat" }], router: { mode: "auto" } },
        ...over,
      },
    });
    const lines = [
      item({}), // rated good under chat (auto)
      item({ kind: "router_override", rating: null, interaction: { from: ["chat"], chosen: "ui" } }),
      item({
        prompt: [{ role: "user", text: "Pinned one" }],
        versions: { adapters: [{ id: "coding" }], router: { mode: "pinned" } },
        rating: null,
        kind: "copy",
      }),
      item({ prompt: [{ role: "user", text: "Bad one" }], rating: "bad" }),
      item({ prompt: [{ role: "user", text: "Bad one" }], createdAt: 0 }),
      item({
        prompt: [{ role: "user", text: "Unknown" }],
        kind: "router_override",
        interaction: { chosen: "poetry" },
      }),
      item({ prompt: null }),
      item({
        prompt: [{ role: "user", text: "Blend" }],
        versions: { adapters: [{ id: "chat" }, { id: "ui" }], router: { mode: "auto" } },
      }),
    ];
    expect(routingOutcomes(lines, ["chat", "coding", "agent", "ui"])).toEqual([
      { label: "ui", text: "Plot my steps", source: "override", weight: 4 },
      { label: "coding", text: "Pinned one", source: "pin", weight: 2 },
    ]);
  });
});
