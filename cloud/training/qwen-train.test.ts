/**
 * `npm run train` on the Tall base's architectures in miniature: the tiny qwen3 and qwen3moe
 * bases (native/gguf/tiny-qwen.ts). The prompts are laid out by the chat wrapper node-llama-cpp
 * resolves for Qwen3's template (QwenChatWrapper); the adapter the CLI writes loads in the
 * engine against its base and changes greedy output.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManifestFile } from "../../common/adapter-manifest";
import { suiteDir } from "../../testing/core/temp-dir";
import { loadLlamaBackend, type LlamaBackend } from "../../native/engine/llama-backend";
import { ModelSession } from "../../native/engine/model-session";
import { assertAdapterFits, readGguf } from "../../native/gguf/reader";
import { QWEN_ARCHITECTURES, tinyQwenSpec, type QwenArchitecture } from "../../native/gguf/tiny-qwen";
import { writeGguf } from "../../native/gguf/writer";
import type { TrainedAdapterManifest } from "./trained-manifest";
import { runTrainCli } from "../../testing/cloud/training/cli-process";
import { sftLines, writeJsonl } from "../../testing/cloud/training/test-data";

const dir = suiteDir("macaron-train-qwen-");
let data: string;
let backend: LlamaBackend;

beforeAll(async () => {
  data = await writeJsonl(dir.path, "sums.jsonl", sftLines(20));
  backend = await loadLlamaBackend(1);
});
afterAll(async () => {
  await backend?.llama.dispose();
});

/** Greedy answers to a few prompts, with and without `adapter`. */
async function greedy(base: string, adapter?: string): Promise<string[]> {
  const session = await ModelSession.open(backend, base, { contextSize: 512, sequences: 1 }, () => {});
  try {
    const out: string[] = [];
    for (const text of ["What is 3 plus 3?", "What is 7 plus 7?"]) {
      const result = await session.generate(
        [{ role: "user", text }],
        { temperature: 0, maxTokens: 12, adapters: adapter ? [{ path: adapter, scale: 1 }] : [] },
        () => {},
        new AbortController().signal,
      );
      out.push(result.text);
    }
    return out;
  } finally {
    await session.dispose();
  }
}

describe.each(QWEN_ARCHITECTURES)("npm run train on the tiny %s base", (arch: QwenArchitecture) => {
  it("writes an adapter for the architecture that loads in the engine and changes greedy output", async () => {
    const base = join(dir.path, `base-${arch}.gguf`);
    await writeGguf(base, tinyQwenSpec(arch));
    const out = join(dir.path, `adapters-${arch}`);
    const started = performance.now();
    const run = await runTrainCli([
      ...["--base", base, "--data", data, "--out", out, "--id", "sums", "--domain", "coding"],
      ...["--steps", "20", "--lr", "5e-3", "--threads", "1", "--device", "cpu", "--seed", "7"],
    ]);
    const wallSeconds = (performance.now() - started) / 1000;
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const trained = /training (\d+\.\d) s/.exec(run.stdout)?.[1];
    console.log(`train ${arch}: 20 steps, trainer ${trained} s, CLI wall ${wallSeconds.toFixed(1)} s`);
    expect(run.stdout).toMatch(/held-out loss \(\d+ examples\): \d+\.\d{4} → \d+\.\d{4}/);

    const manifest = JSON.parse(await readFile(join(out, "sums.json"), "utf8")) as TrainedAdapterManifest;
    expect(ManifestFile.safeParse(manifest).success).toBe(true);
    expect(manifest.base).toMatchObject({ architecture: arch, embeddingLength: 64 });
    expect(manifest.lineage.heldout.lossAfter!).toBeLessThan(manifest.lineage.heldout.lossBefore!);
    const adapter = join(out, "sums.gguf");
    const file = await assertAdapterFits(adapter, await readGguf(base));
    expect(file.metadata["general.architecture"]).toBe(arch);
    const targets = new Set(file.tensors.map((t) => t.name.split(".")[2]));
    if (arch === "qwen3moe") {
      // The experts take no LoRA; the default targets that exist (attention) do.
      expect([...targets].sort()).toEqual(["attn_k", "attn_output", "attn_q", "attn_v"]);
      expect(manifest.lineage.hyperparameters).toMatchObject({
        targets: ["attn_q", "attn_k", "attn_v", "attn_output"],
      });
    } else {
      expect(targets).toEqual(
        new Set(["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]),
      );
    }

    const plain = await greedy(base);
    const tuned = await greedy(base, adapter);
    console.log(`train ${arch}: base ${JSON.stringify(plain)} → trained ${JSON.stringify(tuned)}`);
    expect(tuned).not.toEqual(plain);
    // Two processes (the CLI under tsx, then Python importing torch) and four generations: about
    // 5 s alone, 20 s beside the rest of the suite here, over 60 s on a busier CI machine.
  }, 180_000);
});
