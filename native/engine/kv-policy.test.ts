import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { randomValues } from "../gguf/prng";
import { TINY_MODEL_SHAPES } from "../gguf/tiny-model";
import { gv, writeGguf, type GgufWriteTensor } from "../gguf/writer";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { ModelSession } from "./model-session";
import type { AdapterUse, ChatTurn, KvPolicy } from "../../common/engine-protocol";
import { suiteDir } from "../../testing/core/temp-dir";

// Exactness of the KV policies after an adapter switch, against a fresh context evaluated
// under the new set. The demo adapters only touch output.weight, which leaves every cached
// key/value unchanged, so an attention LoRA is written here to make stale KV visible.
const dir = suiteDir("macaron-kv-policy-");
let fx: FixturePaths;
let backend: LlamaBackend;
let attention: AdapterUse[];
let coding: AdapterUse[];
const sessions: Partial<Record<1 | 2 | 4, ModelSession>> = {};
let reference: ModelSession | undefined;
const policies: KvPolicy[] = ["reevaluate", "sequence-per-set", "activated"];

/** A rank-4 LoRA with random weights on every layer's attn_q and attn_v. */
async function writeAttentionAdapter(path: string): Promise<string> {
  const { embedding: E, layers } = TINY_MODEL_SHAPES.tiny;
  const rank = 4;
  const tensors: GgufWriteTensor[] = [];
  for (let l = 0; l < layers; l++) {
    for (const target of [`blk.${l}.attn_q.weight`, `blk.${l}.attn_v.weight`]) {
      tensors.push(
        {
          name: `${target}.lora_a`,
          dims: [E, rank],
          type: "F32",
          data: randomValues(`a:${target}`, E * rank, 0.3),
        },
        {
          name: `${target}.lora_b`,
          dims: [rank, E],
          type: "F32",
          data: randomValues(`b:${target}`, E * rank, 0.3),
        },
      );
    }
  }
  await writeGguf(path, {
    metadata: {
      "general.architecture": gv.str("llama"),
      "general.type": gv.str("adapter"),
      "adapter.type": gv.str("lora"),
      "adapter.lora.alpha": gv.f32(rank),
    },
    tensors,
  });
  return path;
}

/**
 * A session whose caches are cleared (sessions are reused: opening one costs ~0.5 s). It has all
 * its sequences from the start: growing (the default) would install the bigger context in the
 * background, after a later answer or before it depending on the machine's load, and the
 * policies here are about a context's sequences, not about growth (kv-state.test.ts has that).
 */
async function session(sequences: 1 | 2 | 4): Promise<ModelSession> {
  const s = (sessions[sequences] ??= await ModelSession.open(
    backend,
    fx.basePath,
    { contextSize: 1024, sequences, growSequences: false },
    () => {},
  ));
  await s.slots.clear();
  return s;
}

function answer(s: ModelSession, history: ChatTurn[], adapters: AdapterUse[], kvPolicy?: KvPolicy) {
  return s.generate(
    history,
    { temperature: 0, maxTokens: 16, adapters, kvPolicy },
    () => {},
    new AbortController().signal,
  );
}

/** Greedy answer with nothing cached under `adapters`: what a fresh context gives. */
async function fresh(history: ChatTurn[], adapters: AdapterUse[]): Promise<string> {
  reference ??= await ModelSession.open(backend, fx.basePath, { contextSize: 1024, sequences: 1 }, () => {});
  await reference.slots.clear();
  return (await answer(reference, history, adapters, "reevaluate")).text;
}

const turn1: ChatTurn[] = [{ role: "user", text: "tell me a story about a cat" }];
const next = (history: ChatTurn[], reply: string, user: string): ChatTurn[] => [
  ...history,
  { role: "assistant", text: reply },
  { role: "user", text: user },
];

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  backend = await loadLlamaBackend(1);
  attention = [{ path: await writeAttentionAdapter(join(dir.path, "attention.gguf")), scale: 1 }];
  coding = [{ path: fx.adapters.find((a) => a.id === "coding")!.path, scale: 1 }];
});

afterAll(async () => {
  for (const s of [...Object.values(sessions), reference]) await s?.dispose();
});

describe("KV policies after an adapter switch", () => {
  it("with an attention adapter: the exact policies match a fresh evaluation, activated does not", async () => {
    const results: Record<string, { text: string; promptTokensEvaluated: number }> = {};
    let expected = "";
    for (const policy of policies) {
      const s = await session(4);
      const first = await answer(s, turn1, [], policy);
      const history = next(turn1, first.text, "and then what happened next?");
      expected ||= await fresh(history, attention);
      results[policy] = await answer(s, history, attention, policy);
    }
    // The adapter matters for this prompt, so the comparisons below can tell stale from exact.
    const baseFirst = await fresh(turn1, []);
    expect(await fresh(next(turn1, baseFirst, "and then what happened next?"), [])).not.toBe(expected);
    expect(results.reevaluate!.text).toBe(expected);
    expect(results["sequence-per-set"]!.text).toBe(expected);
    // Recorded behaviour: activated keeps turn 1's keys/values computed under the base, so it
    // evaluates fewer tokens and its answer differs from the fresh one.
    expect(results.activated!.text).not.toBe(expected);
    expect(results.activated!.promptTokensEvaluated).toBeLessThan(results.reevaluate!.promptTokensEvaluated);
  });

  it("with an output-layer adapter every policy is exact (cached keys/values do not depend on it)", async () => {
    for (const policy of policies) {
      const s = await session(4);
      const first = await answer(s, turn1, attention, policy);
      const history = next(turn1, first.text, "write some code");
      expect((await answer(s, history, coding, policy)).text).toBe(await fresh(history, coding));
    }
  });

  it("sequence-per-set: alternating sets reuse each set's own cached prefix and stay exact", async () => {
    const s = await session(4);
    let history = turn1;
    const sets = [attention, [], attention, []];
    const evaluated: number[] = [];
    for (const [i, set] of sets.entries()) {
      const result = await answer(s, history, set, "sequence-per-set");
      expect(result.text).toBe(await fresh(history, set));
      evaluated.push(result.promptTokensEvaluated);
      history = next(history, result.text, `question ${i + 2}`);
    }
    // Turns 3 and 4 only evaluate what was added since their set's last turn (two turns' worth),
    // not the whole history as reevaluate would.
    const historyTokens = s.model.tokenize(JSON.stringify(history)).length;
    expect(evaluated[2]).toBeLessThan(historyTokens / 2);
    expect(evaluated[3]).toBeLessThan(historyTokens / 2);
  });

  it("sequence-per-set: evicts the least recently used set when the sequences are full", async () => {
    const s = await session(2);
    const b = [{ ...coding[0]!, scale: 0.5 }];
    for (const set of [attention, coding, attention, b]) await answer(s, turn1, set, "sequence-per-set");
    expect(s.slots.size).toBe(2);
    // `coding` was the least recently used, so its cache went to `b`; `attention` kept its own.
    expect((await answer(s, turn1, attention, "sequence-per-set")).promptTokensEvaluated).toBeLessThan(5);
    expect((await answer(s, turn1, coding, "sequence-per-set")).text).toBe(await fresh(turn1, coding));
  });

  it("reevaluate with one sequence evaluates the whole history again after a switch, and exactly", async () => {
    const s = await session(1);
    const first = await answer(s, turn1, attention, "reevaluate");
    const history = next(turn1, first.text, "more");
    const same = await answer(s, history, attention, "reevaluate");
    const switched = await answer(s, next(history, same.text, "again"), [], "reevaluate");
    expect(switched.text).toBe(await fresh(next(history, same.text, "again"), []));
    expect(switched.promptTokensEvaluated).toBeGreaterThan(same.promptTokensEvaluated * 2);
  });
});
