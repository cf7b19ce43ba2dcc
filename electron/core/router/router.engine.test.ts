import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures, type FixturePaths } from "../../../native/gguf/fixtures";
import { spawnNodeEngine } from "../engine/spawn-node";
import { EngineSupervisor } from "../engine/supervisor";
import { AdapterRouter } from "./adapter-router";
import { HELD_OUT_PROMPTS } from "../../../testing/router/held-out-prompts";
import { MemoryRouterStore } from "./store";
import type { EmbedFn, RouterCandidate } from "./types";
import { suiteDir } from "../../../testing/core/temp-dir";

// The real engine process (node-llama-cpp) embedding with the tiny generated base model. Its
// weights are random, so its embeddings carry mostly lexical similarity: the floor asserted
// here is modest on purpose, the measured numbers are printed.
const dir = suiteDir("macaron-router-");
let fixtures: FixturePaths;
let engine: EngineSupervisor;
let candidates: RouterCandidate[];

beforeAll(async () => {
  fixtures = await writeFixtures(dir.path);
  engine = new EngineSupervisor(spawnNodeEngine());
  await engine.load(fixtures.basePath);
  // The fixture manifests as the registry would hand them over (enabled adapters).
  candidates = fixtures.adapters.map((a) => a.manifest);
});

afterAll(async () => {
  await engine?.close();
});

function counting(embed: EmbedFn): EmbedFn & { texts: number } {
  const fn = async (texts: string[]) => {
    fn.texts += texts.length;
    return embed(texts);
  };
  fn.texts = 0;
  return fn;
}

describe("AdapterRouter with the real engine's embeddings", () => {
  it("routes held-out prompts to their domain's adapter, and measures the latency", async () => {
    const store = new MemoryRouterStore();
    const embed = counting((texts) => engine.embed(texts));
    const router = new AdapterRouter({ embed, modelKey: () => fixtures.baseSha256, store });

    const coldStart = performance.now();
    await router.prepare(candidates);
    const seedMs = performance.now() - coldStart;

    const latencies: number[] = [];
    const misses: string[] = [];
    for (const { expected, text } of HELD_OUT_PROMPTS) {
      const d = await router.decide({ text, candidates, mode: { kind: "auto" } });
      latencies.push(d.latencyMs);
      expect(d.confidence).toBeGreaterThanOrEqual(0);
      expect(d.confidence).toBeLessThanOrEqual(1);
      const top = Object.entries(d.scores).sort((a, b) => b[1] - a[1])[0]?.[0];
      if (top !== expected) misses.push(`${text} → ${d.reason}`);
    }
    const accuracy = 1 - misses.length / HELD_OUT_PROMPTS.length;
    latencies.sort((a, b) => a - b);
    const median = latencies[Math.floor(latencies.length / 2)] ?? 0;
    console.log(
      `router on the tiny model: accuracy ${(accuracy * 100).toFixed(0)}% (${HELD_OUT_PROMPTS.length - misses.length}/${HELD_OUT_PROMPTS.length}), ` +
        `seed embedding ${seedMs.toFixed(1)} ms for ${embed.texts - HELD_OUT_PROMPTS.length} examples, ` +
        `decision median ${median.toFixed(2)} ms, max ${(latencies.at(-1) ?? 0).toFixed(2)} ms` +
        (misses.length ? `\nmisses:\n  ${misses.join("\n  ")}` : ""),
    );
    expect(accuracy).toBeGreaterThanOrEqual(0.6);
    // One embedding per decision once the seeds are cached.
    expect(embed.texts).toBe(
      candidates.reduce((n, c) => n + c.routingExamples.length, 0) + HELD_OUT_PROMPTS.length,
    );

    // Same model, same store: a restarted router embeds only the turn.
    const restartedEmbed = counting((texts) => engine.embed(texts));
    const restarted = new AdapterRouter({
      embed: restartedEmbed,
      modelKey: () => fixtures.baseSha256,
      store,
    });
    const sample = HELD_OUT_PROMPTS[5]?.text ?? "";
    const a = await router.decide({ text: sample, candidates, mode: { kind: "auto" } });
    const b = await restarted.decide({ text: sample, candidates, mode: { kind: "auto" } });
    expect({ ...b, latencyMs: 0 }).toEqual({ ...a, latencyMs: 0 });
    expect(restartedEmbed.texts).toBe(1);
  });

  it("learns a user's override on real embeddings", async () => {
    const router = new AdapterRouter({
      embed: (t) => engine.embed(t),
      modelKey: () => fixtures.baseSha256,
      store: new MemoryRouterStore(),
    });
    const text = "Draw the quarterly revenue numbers for the team.";
    const before = await router.decide({ text, candidates, mode: { kind: "auto" } });
    const target = before.adapters[0]?.id === "agent" ? "coding" : "agent";
    await router.recordOverride({ text, chosenAdapterId: target });
    const after = await router.decide({
      text: "Draw the quarterly revenue numbers for my team.",
      candidates,
      mode: { kind: "auto" },
    });
    expect(after.adapters[0]?.id).toBe(target);
    expect(after.confidence).toBeGreaterThanOrEqual(0.5);
  });
});
