import { spawnSync } from "node:child_process";
import { open } from "node:fs/promises";
import { join } from "node:path";
import type { Llama } from "node-llama-cpp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sftLine, writeJsonl } from "../../testing/cloud/trainer/datasets";
import {
  llamaLogProbs,
  loadTestLlama,
  logSoftmax,
  maxAbsDiff,
} from "../../testing/cloud/trainer/llama-logprobs";
import {
  assertTorchAvailable,
  expectDone,
  PYTHON,
  runTrainer,
  trainerLogits,
} from "../../testing/cloud/trainer/trainer-process";
import { loraPair, peftConfig, writePeftFolder, type TestTensor } from "../../testing/peft/peft-folder";
import { readGguf, type GgufFile, type GgufTensorInfo } from "./gguf-parser";
import { convertPeftToFile, permuteRows } from "./peft-lora";
import { tinyModelSpec, vocabularySize } from "./tiny-model";
import { qwenVocabularySize, tinyQwenSpec } from "./tiny-qwen";
import { writeGguf, type GgufWriteSpec } from "./writer";
import { chatTokens, PARITY_PROMPT_LENGTH, PARITY_TOKENS } from "../../testing/trainer/chat-tokens";
import { suiteDir } from "../../testing/core/temp-dir";

/**
 * PEFT round trip, CI-sized: the trainer trains a LoRA on a tiny base and writes it both as its
 * own llama.cpp GGUF and as a PEFT folder (`--peft-out`); the converter turns the PEFT folder
 * into a GGUF that must hold the trainer's tensors bit for bit, and node-llama-cpp running the
 * converted adapter must give the trainer's LoRA log-probabilities within TOLERANCE (the
 * trainer's forward pass against llama.cpp, as cloud/trainer/parity.test.ts bounds it). Expert
 * LoRA, which the trainer does not train, is checked against the same base with the LoRA merged
 * into its expert weights.
 */

const TOLERANCE = 5e-4;
const TOKENS = PARITY_TOKENS;
const PROMPT_LENGTH = PARITY_PROMPT_LENGTH;

type Arch = "llama" | "qwen3" | "qwen3moe";
const SPECS: Record<Arch, () => GgufWriteSpec> = {
  llama: () => tinyModelSpec("tiny"),
  qwen3: () => tinyQwenSpec("qwen3"),
  qwen3moe: () => tinyQwenSpec("qwen3moe"),
};
const VOCAB: Record<Arch, number> = {
  llama: vocabularySize(),
  qwen3: qwenVocabularySize(),
  qwen3moe: qwenVocabularySize(),
};
const ALL = "attn_q,attn_k,attn_v,attn_output,ffn_gate,ffn_up,ffn_down,output";
const TARGETS: Record<Arch, string> = {
  llama: ALL,
  qwen3: ALL,
  qwen3moe: "attn_q,attn_k,attn_v,attn_output,ffn_gate_inp,output",
};

const dir = suiteDir("peft-parity-");
let llama: Llama;
const bases = {} as Record<Arch, string>;

beforeAll(async () => {
  for (const arch of Object.keys(SPECS) as Arch[]) {
    bases[arch] = join(dir.path, `${arch}.gguf`);
    await writeGguf(bases[arch], SPECS[arch]());
  }
  llama = await loadTestLlama();
});

afterAll(async () => {
  await llama?.dispose();
});

beforeEach(() => void assertTorchAvailable());

/** Every tensor of a GGUF file: name, dims, type and raw bytes. */
async function tensorBytes(
  path: string,
  file: GgufFile,
): Promise<[string, readonly number[], string, Buffer][]> {
  const handle = await open(path, "r");
  try {
    const out: [string, readonly number[], string, Buffer][] = [];
    for (const t of file.tensors) {
      const buf = Buffer.alloc(t.byteSize);
      await handle.read(buf, 0, t.byteSize, file.dataOffset + t.offset);
      out.push([t.name, t.dims, t.typeName, buf]);
    }
    return out;
  } finally {
    await handle.close();
  }
}

async function llamaRows(base: string, vocab: number, adapter?: string): Promise<number[][]> {
  const model = await llama.loadModel({ modelPath: base });
  try {
    return await llamaLogProbs(model, vocab, TOKENS, adapter ? { filePath: adapter, scale: 1 } : undefined);
  } finally {
    await model.dispose();
  }
}

describe.each(Object.keys(SPECS) as Arch[])("PEFT from the trainer → GGUF → llama.cpp: %s", (arch) => {
  it("holds the trainer's tensors and gives the trainer's LoRA logits", async () => {
    const data = join(dir.path, `${arch}.jsonl`);
    await writeJsonl(data, [sftLine(TOKENS, PROMPT_LENGTH), sftLine(chatTokens("Hello", "Hi!"), 10)]);
    const trained = join(dir.path, `${arch}-trainer.gguf`);
    const peft = join(dir.path, `${arch}-peft`);
    expectDone(
      await runTrainer([
        "train",
        ...[
          "--base",
          bases[arch],
          "--data",
          data,
          "--out",
          trained,
          "--report",
          join(dir.path, `${arch}.json`),
        ],
        ...["--steps", "6", "--lr", "0.02", "--rank", "4", "--alpha", "8", "--targets", TARGETS[arch]],
        ...["--peft-out", peft],
      ]),
    );
    const converted = join(dir.path, `${arch}-converted.gguf`);
    const started = performance.now();
    const result = await convertPeftToFile({ peftDir: peft, base: bases[arch], out: converted });
    const ms = performance.now() - started;

    const theirs = await readGguf(trained);
    const ours = await readGguf(converted);
    expect(ours.metadata["general.architecture"]).toBe(arch);
    expect(ours.metadata["adapter.lora.alpha"]).toBe(theirs.metadata["adapter.lora.alpha"]);
    expect(await tensorBytes(converted, ours)).toEqual(await tensorBytes(trained, theirs));

    const vocab = VOCAB[arch];
    const reference = logSoftmax(await trainerLogits(bases[arch], TOKENS, { path: trained, scale: 1 }));
    const baseOnly = logSoftmax(await trainerLogits(bases[arch], TOKENS));
    expect(maxAbsDiff(baseOnly, reference)).toBeGreaterThan(0.5); // the adapter matters
    const delta = maxAbsDiff(await llamaRows(bases[arch], vocab, converted), reference);
    console.log(
      `peft ${arch}: ${result.pairs} LoRA pairs (${result.targets.join(",")}) converted in ${ms.toFixed(1)} ms; ` +
        `max |Δ log p| vs the trainer's LoRA = ${delta.toExponential(2)} (tolerance ${TOLERANCE})`,
    );
    expect(delta).toBeLessThan(TOLERANCE);
  });
});

describe("PEFT experts (qwen3moe) → GGUF → llama.cpp", () => {
  it("gives the logits of the base with the LoRA merged into its expert weights", async () => {
    const r = 2;
    const alpha = 4;
    const spec = SPECS.qwen3moe();
    const byName = new Map(spec.tensors.map((t) => [t.name, t]));
    const tensors: TestTensor[] = [];
    const deltas = new Map<string, (e: number) => TestTensor[]>();
    for (const layer of [0, 1])
      for (const [proj, gguf] of [
        ["gate_proj", "ffn_gate_exps"],
        ["up_proj", "ffn_up_exps"],
        ["down_proj", "ffn_down_exps"],
      ] as const) {
        const w = byName.get(`blk.${layer}.${gguf}.weight`)!;
        const [nIn, nOut, experts] = w.dims as [number, number, number];
        const pairs: TestTensor[][] = [];
        for (let e = 0; e < experts; e++) {
          const pair = loraPair(
            `model.layers.${layer}.mlp.experts.${e}.${proj}`,
            nIn,
            nOut,
            r,
            1000 * layer + 100 * e + proj.length,
          );
          // Strong enough to move the logits visibly.
          for (const t of pair) t.data.forEach((x, i) => (t.data[i] = x * 12));
          pairs.push(pair);
          tensors.push(...pair);
        }
        deltas.set(w.name, (e) => pairs[e]!);
      }
    const peft = await writePeftFolder(
      join(dir.path, "moe-experts-peft"),
      peftConfig(r, { lora_alpha: alpha, target_modules: ["gate_proj", "up_proj", "down_proj"] }),
      tensors,
    );
    const converted = join(dir.path, "moe-experts.gguf");
    const started = performance.now();
    await convertPeftToFile({ peftDir: peft, base: bases.qwen3moe, out: converted });
    const ms = performance.now() - started;

    // W_e[o][i] += alpha/r · Σ_k B_e[o][k] · A_e[k][i]; GGUF [n_in, n_out, experts] is index e·out·in + o·in + i.
    const merged = join(dir.path, "moe-merged.gguf");
    await writeGguf(merged, {
      ...spec,
      tensors: spec.tensors.map((t) => {
        const pairsOf = deltas.get(t.name);
        if (!pairsOf) return t;
        const [nIn, nOut, experts] = t.dims as [number, number, number];
        const data = Float32Array.from(typeof t.data === "function" ? t.data() : t.data);
        for (let e = 0; e < experts; e++) {
          const [a, b] = pairsOf(e) as [TestTensor, TestTensor];
          for (let o = 0; o < nOut; o++)
            for (let i = 0; i < nIn; i++) {
              let sum = 0;
              for (let k = 0; k < r; k++) sum += b.data[o * r + k]! * a.data[k * nIn + i]!;
              data[e * nOut * nIn + o * nIn + i]! += (alpha / r) * sum;
            }
        }
        return { ...t, data };
      }),
    });
    const vocab = VOCAB.qwen3moe;
    const base = await llamaRows(bases.qwen3moe, vocab);
    const adapted = await llamaRows(bases.qwen3moe, vocab, converted);
    const reference = await llamaRows(merged, vocab);
    expect(maxAbsDiff(base, logSoftmax(reference))).toBeGreaterThan(0.05); // the experts' LoRA matters
    const delta = maxAbsDiff(adapted, reference);
    console.log(
      `peft qwen3moe experts (2 layers × 3 projections × 4 experts): converted in ${ms.toFixed(1)} ms; ` +
        `max |Δ log p| vs merged weights = ${delta.toExponential(2)} (tolerance ${TOLERANCE})`,
    );
    expect(delta).toBeLessThan(TOLERANCE);
  });
});

describe("llama's q/k permutation", () => {
  it("equals convert_hf_to_gguf's LlamaModel.permute", () => {
    // conversion/llama.py in node-llama-cpp's bundled llama.cpp, verbatim (numpy has the same calls).
    const script = [
      "import json, sys, numpy as np",
      "def permute(weights, n_head, n_head_kv):",
      "    if n_head_kv is not None and n_head != n_head_kv:",
      "        n_head = n_head_kv",
      "    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])",
      "            .swapaxes(1, 2)",
      "            .reshape(weights.shape))",
      "w = np.arange(96 * 3, dtype=np.float32).reshape(96, 3)",
      "print(json.dumps([permute(w, 6, 6).ravel().tolist(), permute(w, 6, 2).ravel().tolist()]))",
    ].join("\n");
    const run = spawnSync(PYTHON, ["-c", script], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const [q, k] = JSON.parse(run.stdout) as [number[], number[]];
    const w = Float32Array.from({ length: 96 * 3 }, (_, i) => i);
    expect([...permuteRows(w, 96, 3, 6)]).toEqual(q);
    expect([...permuteRows(w, 96, 3, 2)]).toEqual(k);
  });
});

describe("PEFT conversion at a real model's size", () => {
  it("converts a rank-16 LoRA on every projection of a Qwen3-0.6B-shaped base", async () => {
    // Qwen3-0.6B's shapes: 28 layers, hidden 1024, 16 query heads and 8 KV heads of 128, FFN 3072.
    // Only the base's header matters to the converter, so the base is a tensor table in memory.
    const [layers, hidden, q, kv, ff, r] = [28, 1024, 2048, 1024, 3072, 16];
    const shapes: [string, string, number, number][] = [
      ["self_attn.q_proj", "attn_q", hidden, q],
      ["self_attn.k_proj", "attn_k", hidden, kv],
      ["self_attn.v_proj", "attn_v", hidden, kv],
      ["self_attn.o_proj", "attn_output", q, hidden],
      ["mlp.gate_proj", "ffn_gate", hidden, ff],
      ["mlp.up_proj", "ffn_up", hidden, ff],
      ["mlp.down_proj", "ffn_down", ff, hidden],
    ];
    const baseTensors: GgufTensorInfo[] = [];
    const tensors: TestTensor[] = [];
    for (let l = 0; l < layers; l++)
      for (const [module, gguf, nIn, nOut] of shapes) {
        baseTensors.push({
          name: `blk.${l}.${gguf}.weight`,
          dims: [nIn, nOut],
          type: 1,
          typeName: "F16",
          offset: 0,
          byteSize: 0,
        });
        tensors.push(...loraPair(`model.layers.${l}.${module}`, nIn, nOut, r, l * 10 + nIn));
      }
    const base: GgufFile = {
      version: 3,
      metadata: {
        "general.architecture": "qwen3",
        "qwen3.block_count": layers,
        "qwen3.attention.head_count": 16,
        "qwen3.attention.head_count_kv": 8,
      },
      tensors: baseTensors,
      alignment: 32,
      dataOffset: 0,
      fileSize: 0,
    };
    const peft = await writePeftFolder(
      join(dir.path, "qwen3-0.6b-peft"),
      peftConfig(r, { lora_alpha: 32 }),
      tensors,
    );
    const out = join(dir.path, "qwen3-0.6b-lora.gguf");
    const started = performance.now();
    const result = await convertPeftToFile({ peftDir: peft, base, out });
    const ms = performance.now() - started;
    const written = await readGguf(out);
    expect(result.pairs).toBe(layers * shapes.length);
    expect(written.tensors).toHaveLength(2 * layers * shapes.length);
    const mb = written.fileSize / 2 ** 20;
    console.log(
      `peft qwen3-0.6b shape, rank ${r}, ${result.pairs} pairs, ${mb.toFixed(1)} MiB F32: converted in ${ms.toFixed(0)} ms`,
    );
  });
});
