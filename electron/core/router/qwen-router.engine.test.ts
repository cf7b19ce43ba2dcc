import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures } from "../../../native/gguf/fixtures";
import { QWEN_ARCHITECTURES } from "../../../native/gguf/tiny-qwen";
import { spawnNodeEngine } from "../engine/spawn-node";
import { EngineSupervisor } from "../engine/supervisor";
import { AdapterRouter } from "./adapter-router";
import { HELD_OUT_PROMPTS } from "../../../testing/router/held-out-prompts";
import { MemoryRouterStore } from "./store";
import { suiteDir } from "../../../testing/core/temp-dir";

// The router on the real engine process's embeddings (mean pooling) of the tiny qwen3 and
// qwen3moe bases, as router.engine.test.ts does for the llama fixture: random weights, so the
// floor is modest and the measured accuracy is printed.
const dir = suiteDir("macaron-router-qwen-");
let engine: EngineSupervisor;

beforeAll(() => {
  engine = new EngineSupervisor(spawnNodeEngine());
});

afterAll(async () => {
  await engine?.close();
});

describe.each(QWEN_ARCHITECTURES)("AdapterRouter on the tiny %s base's embeddings", (arch) => {
  it("routes held-out prompts to their domain's adapter", async () => {
    const fixtures = await writeFixtures(dir.path, { architecture: arch });
    await engine.load(fixtures.basePath);
    const candidates = fixtures.adapters.map((a) => a.manifest);
    const router = new AdapterRouter({
      embed: (texts) => engine.embed(texts),
      modelKey: () => fixtures.baseSha256,
      store: new MemoryRouterStore(),
    });
    await router.prepare(candidates);
    const misses: string[] = [];
    for (const { expected, text } of HELD_OUT_PROMPTS) {
      const d = await router.decide({ text, candidates, mode: { kind: "auto" } });
      const top = Object.entries(d.scores).sort((a, b) => b[1] - a[1])[0]?.[0];
      if (top !== expected) misses.push(`${text} → ${d.reason}`);
    }
    const accuracy = 1 - misses.length / HELD_OUT_PROMPTS.length;
    console.log(
      `router on the tiny ${arch} model: accuracy ${(accuracy * 100).toFixed(0)}% ` +
        `(${HELD_OUT_PROMPTS.length - misses.length}/${HELD_OUT_PROMPTS.length})`,
    );
    expect(accuracy).toBeGreaterThanOrEqual(0.6);
  });
});
