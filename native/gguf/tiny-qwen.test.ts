import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { demoAdapterSpec } from "./adapters";
import { writeFixtures, type FixturePaths } from "./fixtures";
import { assertAdapterFits, readGguf, summarizeModel, type GgufFile } from "./reader";
import {
  QWEN_ARCHITECTURES,
  QWEN_EOS_ID,
  qwenAdapterSpec,
  qwenAttentionAdapterSpec,
  qwenAttentionLora,
  qwenTokenId,
  qwenVocabularySize,
  TINY_QWEN_NAMES,
  TINY_QWEN_SHAPES,
  tinyQwenSpec,
} from "./tiny-qwen";
import { encodeGguf, writeGguf } from "./writer";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("gguf-tiny-qwen-");
const fixtures: Record<string, FixturePaths> = {};
const bases: Record<string, GgufFile> = {};

beforeAll(async () => {
  for (const arch of QWEN_ARCHITECTURES) {
    fixtures[arch] = await writeFixtures(dir.path, { architecture: arch });
    bases[arch] = await readGguf(fixtures[arch].basePath);
  }
});

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const dimsOf = (file: GgufFile, name: string) => file.tensors.find((t) => t.name === name)?.dims;

describe.each(QWEN_ARCHITECTURES)("tiny %s base", (arch) => {
  const shape = TINY_QWEN_SHAPES[arch];

  it("is the same bytes every time", () => {
    expect(sha256(encodeGguf(tinyQwenSpec(arch)))).toBe(sha256(encodeGguf(tinyQwenSpec(arch))));
  });

  it("has llama.cpp's keys and tensors for the architecture", () => {
    const file = bases[arch]!;
    const m = file.metadata;
    expect(m["general.architecture"]).toBe(arch);
    expect(m[`${arch}.attention.key_length`]).toBe(shape.headDim);
    expect(m[`${arch}.rope.dimension_count`]).toBe(shape.headDim);
    expect(m[`${arch}.pooling_type`]).toBe(1);
    expect(m["tokenizer.ggml.pre"]).toBe("qwen2");
    expect(m["tokenizer.ggml.eos_token_id"]).toBe(QWEN_EOS_ID);
    expect(m["tokenizer.chat_template"]).toEqual(expect.stringContaining("<think>"));
    // The query width differs from the embedding, as in the real models.
    expect(shape.heads * shape.headDim).not.toBe(shape.embedding);
    expect(dimsOf(file, "blk.0.attn_q.weight")).toEqual([shape.embedding, shape.heads * shape.headDim]);
    expect(dimsOf(file, "blk.0.attn_k.weight")).toEqual([shape.embedding, shape.kvHeads * shape.headDim]);
    expect(dimsOf(file, "blk.1.attn_q_norm.weight")).toEqual([shape.headDim]);
    expect(dimsOf(file, "blk.1.attn_k_norm.weight")).toEqual([shape.headDim]);
    expect(dimsOf(file, "token_embd.weight")).toEqual([shape.embedding, qwenVocabularySize()]);
    if (arch === "qwen3moe") {
      expect(m["qwen3moe.expert_count"]).toBe(4);
      expect(m["qwen3moe.expert_used_count"]).toBe(2);
      expect(m["qwen3moe.expert_feed_forward_length"]).toBe(shape.expertFeedForward);
      const E = shape.embedding;
      const FF = shape.expertFeedForward;
      expect(dimsOf(file, "blk.0.ffn_gate_inp.weight")).toEqual([E, 4]);
      expect(dimsOf(file, "blk.0.ffn_gate_exps.weight")).toEqual([E, FF, 4]);
      expect(dimsOf(file, "blk.0.ffn_up_exps.weight")).toEqual([E, FF, 4]);
      expect(dimsOf(file, "blk.0.ffn_down_exps.weight")).toEqual([FF, E, 4]);
      expect(dimsOf(file, "blk.0.ffn_gate.weight")).toBeUndefined();
    } else {
      expect(m["qwen3.expert_count"]).toBeUndefined();
      expect(dimsOf(file, "blk.0.ffn_gate.weight")).toEqual([shape.embedding, shape.feedForward]);
    }
    expect(summarizeModel(file, fixtures[arch]!.basePath)).toMatchObject({
      architecture: arch,
      name: TINY_QWEN_NAMES[arch],
      embeddingLength: 64,
      blockCount: 2,
      contextLength: shape.contextLength,
      isDemo: true,
    });
  });

  it("has Qwen's added tokens after the byte vocabulary", () => {
    const tokens = bases[arch]!.metadata["tokenizer.ggml.tokens"] as string[];
    expect(tokens.slice(256, 259)).toEqual(["<|im_start|>", "<|im_end|>", "<|endoftext|>"]);
    expect(tokens[qwenTokenId("<think>")]).toBe("<think>");
    expect(tokens).toHaveLength(qwenVocabularySize());
  });

  it("writes four demo adapters (attention q/v + output marker) whose manifests name the base", async () => {
    const fx = fixtures[arch]!;
    expect(fx.basePath).toBe(join(dir.path, `base-${arch}.gguf`));
    expect(fx.adaptersDir).toBe(join(dir.path, `adapters-${arch}`));
    expect(fx.adapters.map((a) => a.id)).toEqual(["chat", "coding", "agent", "ui"]);
    for (const adapter of fx.adapters) {
      expect(adapter.manifest.base).toEqual({
        architecture: arch,
        embeddingLength: 64,
        baseName: TINY_QWEN_NAMES[arch],
        baseSha256: fx.baseSha256,
      });
      const file = await assertAdapterFits(adapter.path, bases[arch]!);
      expect(file.metadata["general.architecture"]).toBe(arch);
      const names = file.tensors.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining([
          "blk.0.attn_q.weight.lora_a",
          "blk.1.attn_v.weight.lora_b",
          "output.weight.lora_a",
          "output.weight.lora_b",
        ]),
      );
      expect(adapter.manifest.sha256).toBe(sha256(await readFile(adapter.path)));
    }
    // Same input, same bytes.
    const again = await writeFixtures(join(dir.path, "again"), { architecture: arch });
    expect(again.baseSha256).toBe(fx.baseSha256);
    expect(again.adapters.map((a) => a.manifest.sha256)).toEqual(fx.adapters.map((a) => a.manifest.sha256));
  });

  it("refuses a llama adapter, naming both architectures", async () => {
    const llamaAdapter = join(dir.path, `llama-coding-${arch}.gguf`);
    await writeGguf(llamaAdapter, demoAdapterSpec("coding"));
    await expect(assertAdapterFits(llamaAdapter, bases[arch]!)).rejects.toThrow(
      `"llama-coding-${arch}.gguf" was made for the llama architecture, but the loaded model is ${arch}.`,
    );
  });
});

describe("qwen3 vs qwen3moe adapters", () => {
  it("refuses each one's adapters on the other by architecture", async () => {
    await expect(assertAdapterFits(fixtures.qwen3!.adapters[0]!.path, bases.qwen3moe!)).rejects.toThrow(
      /was made for the qwen3 architecture, but the loaded model is qwen3moe\./,
    );
    await expect(assertAdapterFits(fixtures.qwen3moe!.adapters[0]!.path, bases.qwen3!)).rejects.toThrow(
      /was made for the qwen3moe architecture, but the loaded model is qwen3\./,
    );
  });

  it("refuses qwen3's attention shapes on qwen3moe even when the file claims qwen3moe", async () => {
    const relabelled = join(dir.path, "qwen3-shapes-as-moe.gguf");
    await writeGguf(relabelled, qwenAdapterSpec("qwen3moe", "relabelled", qwenAttentionLora("qwen3", "x")));
    await expect(assertAdapterFits(relabelled, bases.qwen3moe!)).rejects.toThrow(
      "does not fit the loaded model: blk.0.attn_q.weight is [64, 256] in the model but [64, 128] in the adapter",
    );
  });

  it("checks the expert dimension of LoRA on expert tensors", async () => {
    const E = 64;
    const FF = TINY_QWEN_SHAPES.qwen3moe.expertFeedForward;
    const path = join(dir.path, "experts-3.gguf");
    // Three experts' LoRA for a four-expert model.
    await writeGguf(
      path,
      qwenAdapterSpec("qwen3moe", "three experts", [
        {
          name: "blk.0.ffn_up_exps.weight.lora_a",
          dims: [E, 1, 3],
          type: "F32",
          data: new Float32Array(E * 3),
        },
        {
          name: "blk.0.ffn_up_exps.weight.lora_b",
          dims: [1, FF, 3],
          type: "F32",
          data: new Float32Array(FF * 3),
        },
      ]),
    );
    await expect(assertAdapterFits(path, bases.qwen3moe!)).rejects.toThrow(
      `blk.0.ffn_up_exps.weight is [${E}, ${FF}, 4] in the model but [${E}, ${FF}, 3] in the adapter`,
    );
    const fits = join(dir.path, "experts-4.gguf");
    await writeGguf(
      fits,
      qwenAdapterSpec("qwen3moe", "four experts", [
        {
          name: "blk.0.ffn_up_exps.weight.lora_a",
          dims: [E, 1, 4],
          type: "F32",
          data: new Float32Array(E * 4),
        },
        {
          name: "blk.0.ffn_up_exps.weight.lora_b",
          dims: [1, FF, 4],
          type: "F32",
          data: new Float32Array(FF * 4),
        },
      ]),
    );
    await assertAdapterFits(fits, bases.qwen3moe!);
  });

  it("the attention-only test adapter fits its base", async () => {
    for (const arch of QWEN_ARCHITECTURES) {
      const path = join(dir.path, `attention-${arch}.gguf`);
      await writeGguf(path, qwenAttentionAdapterSpec(arch));
      const file = await assertAdapterFits(path, bases[arch]!);
      expect(file.tensors.every((t) => /attn_[qv]\.weight\.lora_[ab]$/.test(t.name))).toBe(true);
    }
  });
});
