import { readFileSync, statSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer } from "node:net";
import { basename, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  loraPair,
  peftConfig,
  testValues,
  writePeftFolder,
  type TestTensor,
} from "../../testing/peft/peft-folder";
import { readGguf, type GgufFile } from "./gguf-parser";
import {
  checkPeft,
  convertPeft,
  convertPeftToFile,
  isPeftFolder,
  permuteRows,
  parsePeftConfig,
  readPeftConfig,
  type PeftError,
} from "./peft-lora";
import { readSafetensorsHeader } from "./safetensors";
import { tinyModelSpec } from "./tiny-model";
import { tinyQwenSpec } from "./tiny-qwen";
import { gv, writeGguf } from "./writer";
import { suiteDir } from "../../testing/core/temp-dir";

/**
 * The PEFT → GGUF LoRA converter without an engine: names, layout, scales, and the refusals;
 * checkPeft (config and safetensors header only, what the hub search reads) refuses each
 * refusal with the same message. Its parity with the trainer's LoRA logits in llama.cpp is
 * peft-lora.integration.test.ts.
 */

const dir = suiteDir("peft-lora-");
const bases: Record<string, { path: string; file: GgufFile }> = {};

beforeAll(async () => {
  const specs = {
    llama: tinyModelSpec("tiny"),
    qwen3: tinyQwenSpec("qwen3"),
    qwen3moe: tinyQwenSpec("qwen3moe"),
    phi3: {
      metadata: { ...tinyModelSpec("tiny").metadata, "general.architecture": gv.str("phi3") },
      tensors: [],
    },
  };
  for (const [name, spec] of Object.entries(specs)) {
    const path = join(dir.path, `${name}.gguf`);
    await writeGguf(path, spec);
    bases[name] = { path, file: await readGguf(path) };
  }
});

/** dims of a base tensor ([n_in, n_out(, experts)]). */
function dims(arch: string, name: string): readonly number[] {
  const t = bases[arch]!.file.tensors.find((x) => x.name === name);
  if (!t) throw new Error(`${arch} has no ${name}`);
  return t.dims;
}

/** A PEFT pair for HF `module` shaped for the base tensor `gguf` of `arch`. */
function pairFor(arch: string, module: string, gguf: string, r: number, seed: number): TestTensor[] {
  const [nIn, nOut] = dims(arch, gguf);
  return loraPair(module, nIn!, nOut!, r, seed);
}

let folders = 0;
async function folder(config: Record<string, unknown>, tensors: readonly TestTensor[]): Promise<string> {
  return writePeftFolder(join(dir.path, `peft-${++folders}`), config, tensors);
}

async function refusal(peft: string, base: string): Promise<PeftError> {
  const err = await convertPeft({ peftDir: peft, base: bases[base]!.file }).then(
    () => null,
    (e: unknown) => e as PeftError,
  );
  if (!err) throw new Error("the conversion was expected to be refused");
  expect(err.name).toBe("PeftError");
  // The check from the header alone says the same, wherever the config and header can be read.
  const header = await Promise.all([
    readPeftConfig(peft),
    readSafetensorsHeader(join(peft, "adapter_model.safetensors")),
  ]).catch(() => null);
  if (header) {
    const [config, weights] = header;
    expect(() =>
      checkPeft({ config, tensors: weights.tensors, base: bases[base]!.file, name: basename(peft) }),
    ).toThrow(err.message);
  }
  return err;
}

const parseConfig = (config: Record<string, unknown>) => parsePeftConfig(JSON.stringify(config), "config");

/** checkPeft on a folder's config and safetensors header. */
async function check(peft: string, base: string) {
  const config = await readPeftConfig(peft);
  const { tensors } = await readSafetensorsHeader(join(peft, "adapter_model.safetensors"));
  return checkPeft({ config, tensors, base: bases[base]!.file, name: basename(peft) });
}

const QWEN3_ATTENTION = (r: number) => [
  ...pairFor("qwen3", "model.layers.0.self_attn.q_proj", "blk.0.attn_q.weight", r, 1),
  ...pairFor("qwen3", "model.layers.1.self_attn.v_proj", "blk.1.attn_v.weight", r, 3),
  ...pairFor("qwen3", "model.layers.1.mlp.down_proj", "blk.1.ffn_down.weight", r, 5),
];

describe("PEFT → GGUF names, layout and scale", () => {
  it("maps HF names to GGUF LoRA names, A [n_in, r] and B [r, n_out] with the bytes unchanged", async () => {
    const tensors = QWEN3_ATTENTION(4);
    const peft = await folder(peftConfig(4), tensors);
    expect(await isPeftFolder(peft)).toBe(true);
    expect(await isPeftFolder(bases.qwen3!.path)).toBe(false);
    const out = join(dir.path, "qwen3-lora.gguf");
    const result = await convertPeftToFile({ peftDir: peft, base: bases.qwen3!.path, out });
    expect(result.architecture).toBe("qwen3");
    expect(result.alpha).toBe(8);
    expect(result.ranks).toEqual([4]);
    expect(result.targets).toEqual(["attn_q", "attn_v", "ffn_down"]);
    const written = await readGguf(out);
    expect(written.metadata["general.type"]).toBe("adapter");
    expect(written.metadata["adapter.type"]).toBe("lora");
    expect(written.metadata["general.architecture"]).toBe("qwen3");
    expect(written.metadata["adapter.lora.alpha"]).toBe(8);
    expect(written.metadata["general.base_model.0.repo_url"]).toBe("https://huggingface.co/Qwen/Qwen3-0.6B");
    expect(written.tensors.map((t) => [t.name, t.dims])).toEqual([
      ["blk.0.attn_q.weight.lora_a", [64, 4]],
      ["blk.0.attn_q.weight.lora_b", [4, 128]],
      ["blk.1.attn_v.weight.lora_a", [64, 4]],
      ["blk.1.attn_v.weight.lora_b", [4, 64]],
      ["blk.1.ffn_down.weight.lora_a", [128, 4]],
      ["blk.1.ffn_down.weight.lora_b", [4, 64]],
    ]);
    const conv = result.spec.tensors;
    expect(conv[0]!.data).toEqual(tensors[0]!.data);
    expect(conv[1]!.data).toEqual(tensors[1]!.data);
  });

  it("rsLoRA scales alpha/sqrt(r): written as alpha·sqrt(r) for llama.cpp's alpha/r", async () => {
    const peft = await folder(peftConfig(4, { use_rslora: true, lora_alpha: 8 }), QWEN3_ATTENTION(4));
    const result = await convertPeft({ peftDir: peft, base: bases.qwen3!.file });
    expect(result.alpha / 4).toBeCloseTo(8 / Math.sqrt(4), 6);
  });

  it("alpha_pattern and per-module ranks fold the difference into lora_B", async () => {
    const tensors = [
      ...pairFor("qwen3", "model.layers.0.self_attn.q_proj", "blk.0.attn_q.weight", 4, 1),
      ...pairFor("qwen3", "model.layers.0.self_attn.v_proj", "blk.0.attn_v.weight", 2, 3),
    ];
    const config = peftConfig(4, {
      lora_alpha: 8,
      alpha_pattern: { v_proj: 2 },
      rank_pattern: { v_proj: 2 },
    });
    const peft = await folder(config, tensors);
    const result = await convertPeft({ peftDir: peft, base: bases.qwen3!.file });
    expect(result.alpha).toBe(8);
    expect(result.ranks).toEqual([2, 4]);
    const { spec: _spec, config: _config, ...summary } = result;
    expect(await check(peft, "qwen3")).toEqual(summary);
    // q: PEFT 8/4 = llama.cpp 8/4, B unchanged. v: PEFT 2/2 = 1, llama.cpp 8/2 = 4, so B × 1/4.
    expect(result.spec.tensors[1]!.data).toEqual(tensors[1]!.data);
    const vB = result.spec.tensors[3]!.data as Float32Array;
    vB.forEach((x, i) => expect(x).toBeCloseTo(tensors[3]!.data[i]! / 4, 7));
  });

  it("llama: q_proj/k_proj lora_B rows are permuted as LlamaModel.permute does, v_proj's are not", async () => {
    // tiny llama: 4 heads (kv 4) of 16; a B whose value is its row index shows the permutation.
    const [nIn, nOut] = dims("llama", "blk.0.attn_q.weight");
    const r = 2;
    const rows = new Float32Array(nOut! * r).map((_, i) => Math.floor(i / r));
    const tensors: TestTensor[] = [];
    for (const p of ["q_proj", "k_proj", "v_proj"])
      tensors.push(
        {
          name: `base_model.model.model.layers.0.self_attn.${p}.lora_A.weight`,
          shape: [r, nIn!],
          data: testValues(r * nIn!, 7),
        },
        {
          name: `base_model.model.model.layers.0.self_attn.${p}.lora_B.weight`,
          shape: [nOut!, r],
          data: rows,
        },
      );
    const result = await convertPeft({
      peftDir: await folder(peftConfig(r), tensors),
      base: bases.llama!.file,
    });
    const headDim = nOut! / 4;
    const expected: number[] = [];
    for (let h = 0; h < 4; h++)
      for (let i = 0; i < headDim / 2; i++)
        for (let j = 0; j < 2; j++) expected.push(h * headDim + j * (headDim / 2) + i);
    const rowsOf = (data: Float32Array) => [...data].filter((_, i) => i % r === 0);
    expect(rowsOf(result.spec.tensors[1]!.data as Float32Array)).toEqual(expected);
    expect(rowsOf(result.spec.tensors[3]!.data as Float32Array)).toEqual(expected);
    expect(rowsOf(result.spec.tensors[5]!.data as Float32Array)).toEqual([...Array(nOut).keys()]);
    expect(rowsOf(permuteRows(rows, nOut!, r, 4))).toEqual(expected);
  });

  it("qwen3moe experts are stacked per projection: lora_a [n_in, r, experts], lora_b [r, n_out, experts]", async () => {
    const tensors: TestTensor[] = [];
    for (let e = 0; e < 4; e++)
      for (const p of ["gate_proj", "up_proj", "down_proj"])
        tensors.push(
          ...pairFor(
            "qwen3moe",
            `model.layers.1.mlp.experts.${e}.${p}`,
            `blk.1.ffn_${p.split("_")[0]}_exps.weight`,
            2,
            10 * e,
          ),
        );
    tensors.push(...pairFor("qwen3moe", "model.layers.0.mlp.gate", "blk.0.ffn_gate_inp.weight", 2, 99));
    const config = peftConfig(2, { target_modules: ["gate_proj", "up_proj", "down_proj", "gate"] });
    const out = join(dir.path, "moe-lora.gguf");
    const peft = await folder(config, tensors);
    const result = await convertPeftToFile({ peftDir: peft, base: bases.qwen3moe!.path, out });
    expect(result.targets).toEqual(["ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]);
    expect(await check(peft, "qwen3moe")).toMatchObject({ targets: result.targets, ranks: [2], pairs: 4 });
    const written = await readGguf(out);
    expect(written.tensors.map((t) => [t.name, t.dims])).toEqual([
      ["blk.0.ffn_gate_inp.weight.lora_a", [64, 2]],
      ["blk.0.ffn_gate_inp.weight.lora_b", [2, 4]],
      ["blk.1.ffn_gate_exps.weight.lora_a", [64, 2, 4]],
      ["blk.1.ffn_gate_exps.weight.lora_b", [2, 48, 4]],
      ["blk.1.ffn_up_exps.weight.lora_a", [64, 2, 4]],
      ["blk.1.ffn_up_exps.weight.lora_b", [2, 48, 4]],
      ["blk.1.ffn_down_exps.weight.lora_a", [48, 2, 4]],
      ["blk.1.ffn_down_exps.weight.lora_b", [2, 64, 4]],
    ]);
    // Expert 2's A is the third block of the stacked A.
    const gateA = result.spec.tensors[2]!.data as Float32Array;
    const expert2 = tensors.find((t) => t.name.includes("experts.2.gate_proj.lora_A"))!;
    expect(gateA.subarray(2 * 2 * 64, 3 * 2 * 64)).toEqual(expert2.data);
  });

  it("reads BF16 weights", async () => {
    const tensors = QWEN3_ATTENTION(2).map((t) => ({ ...t, dtype: "BF16" as const }));
    const result = await convertPeft({
      peftDir: await folder(peftConfig(2), tensors),
      base: bases.qwen3!.file,
    });
    const a = result.spec.tensors[0]!.data as Float32Array;
    a.forEach((x, i) =>
      expect(Math.abs(x - tensors[0]!.data[i]!)).toBeLessThan(Math.abs(tensors[0]!.data[i]!) / 128 + 1e-30),
    );
  });
});

describe("PEFT → GGUF refusals", () => {
  it("DoRA (use_dora, or its magnitude vectors)", async () => {
    const byConfig = await refusal(
      await folder(peftConfig(4, { use_dora: true }), QWEN3_ATTENTION(4)),
      "qwen3",
    );
    expect(byConfig.code).toBe("unsupported");
    expect(byConfig.message).toMatch(/DoRA adapter \(use_dora\)/);
    const magnitude = {
      name: "base_model.model.model.layers.0.self_attn.q_proj.lora_magnitude_vector",
      shape: [128],
      data: new Float32Array(128),
    };
    const byTensor = await refusal(await folder(peftConfig(4), [...QWEN3_ATTENTION(4), magnitude]), "qwen3");
    expect(byTensor.message).toMatch(/DoRA adapter \(.*lora_magnitude_vector\)/);
  });

  it("other PEFT types", async () => {
    const err = await refusal(
      await folder({ ...peftConfig(4), peft_type: "LOHA" }, QWEN3_ATTENTION(4)),
      "qwen3",
    );
    expect(err.message).toMatch(/it is a LOHA adapter; only LoRA adapters convert/);
  });

  it("a peft_type that is not a name, and 'an' before a vowel", async () => {
    const numeric = await refusal(
      await folder({ ...peftConfig(4), peft_type: 7 }, QWEN3_ATTENTION(4)),
      "qwen3",
    );
    expect(numeric.message).toMatch(/its peft_type is 7, not a name such as "LORA"/);
    const ia3 = await refusal(
      await folder({ ...peftConfig(4), peft_type: "IA3" }, QWEN3_ATTENTION(4)),
      "qwen3",
    );
    expect(ia3.message).toMatch(/it is an IA3 adapter/);
  });

  it("weights that are not finite numbers (a damaged file): refused, nothing written", async () => {
    const tensors = QWEN3_ATTENTION(4);
    const poisoned = tensors.map((t, i) => {
      if (i !== 2) return t;
      const data = Float32Array.from(t.data);
      data[5] = Number.NaN;
      return { ...t, data };
    });
    const peft = await folder(peftConfig(4), poisoned);
    const out = join(dir.path, "poisoned.gguf");
    const err = await convertPeftToFile({ peftDir: peft, base: bases.qwen3!.path, out }).then(
      () => null,
      (e: unknown) => e as PeftError,
    );
    expect(err?.code).toBe("not_peft");
    expect(err?.message).toMatch(/is damaged: .*v_proj\.lora_A\.weight holds NaN at element 5/);
    await expect(readGguf(out)).rejects.toThrow();
  });

  it("--out that would replace the base, a file of the folder or another model, or sits in no folder", async () => {
    const peft = await folder(peftConfig(4), QWEN3_ATTENTION(4));
    const copy = join(dir.path, "base-copy.gguf");
    await writeGguf(copy, tinyQwenSpec("qwen3"));
    const before = readFileSync(copy);
    const refused = (out: string, base = copy) =>
      convertPeftToFile({ peftDir: peft, base, out }).then(
        () => null,
        (e: unknown) => e as PeftError,
      );
    expect((await refused(copy))?.message).toMatch(/--out is the base model .*would replace it/);
    expect(readFileSync(copy).equals(before)).toBe(true);
    expect((await refused(join(peft, "adapter_model.safetensors")))?.message).toMatch(
      /a file of the PEFT folder/,
    );
    // Another model (not the base): refused too; an earlier adapter at --out is replaced.
    expect((await refused(bases.llama!.path))?.message).toMatch(/is a model, not an adapter/);
    // Not a regular file (a device such as /dev/null, a socket): renaming over it would replace it.
    const socket = join(dir.path, "out.sock");
    const server = createServer();
    await new Promise<void>((done) => server.listen(socket, done));
    try {
      expect((await refused(socket))?.message).toMatch(/exists and is not a file/);
      expect(statSync(socket).isSocket()).toBe(true);
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
    expect((await refused(join(dir.path, "no-such-folder", "x.gguf")))?.message).toMatch(
      /The output folder .*no-such-folder does not exist/,
    );
    const out = join(dir.path, "again.gguf");
    expect(await refused(out)).toBeNull();
    expect(await refused(out)).toBeNull();
    expect((await readGguf(out)).metadata["general.type"]).toBe("adapter");
  });

  it("weights in a dtype that is not a float (the header says I8): refused before any byte is read", () => {
    const [a, b] = pairFor("qwen3", "model.layers.0.self_attn.q_proj", "blk.0.attn_q.weight", 2, 1);
    const tensors = new Map([
      [a!.name, { dtype: "I8", shape: a!.shape }],
      [b!.name, { dtype: "F32", shape: b!.shape }],
    ]);
    expect(() =>
      checkPeft({ config: parseConfig(peftConfig(2)), tensors, base: bases.qwen3!.file, name: "int8" }),
    ).toThrow(
      /^"int8" cannot be converted: its tensor .*q_proj\.lora_A\.weight is stored as I8; only F32, F16, BF16 and F64/,
    );
  });

  it("adapter_config.json that is not a JSON object, or nested past any real config", () => {
    expect(() => parsePeftConfig("<html>", "hub/repo")).toThrow(
      '"hub/repo"\'s adapter_config.json is not a JSON object.',
    );
    expect(() => parsePeftConfig(`${"[".repeat(10_000)}${"]".repeat(10_000)}`, "hub/repo")).toThrow(
      /is not a JSON object/,
    );
  });

  it("shape mismatch: an adapter for another base", async () => {
    const tensors = loraPair("model.layers.0.self_attn.q_proj", 96, 128, 4, 1);
    const err = await refusal(await folder(peftConfig(4), tensors), "qwen3");
    expect(err.code).toBe("incompatible");
    expect(err.message).toMatch(
      /q_proj is 128×96 in the adapter but blk\.0\.attn_q\.weight is 128×64 in the base/,
    );
  });

  it("wrong architecture: an unsupported base, a MoE adapter on a dense base and back, a qwen3 adapter on llama", async () => {
    expect((await refusal(await folder(peftConfig(4), QWEN3_ATTENTION(4)), "phi3")).message).toMatch(
      /the base is a phi3 model; PEFT adapters convert for llama, qwen2, qwen3, qwen3moe bases/,
    );
    const router = pairFor("qwen3moe", "model.layers.0.mlp.gate", "blk.0.ffn_gate_inp.weight", 2, 1);
    expect(
      (await refusal(await folder(peftConfig(2, { target_modules: ["gate"] }), router), "qwen3")).message,
    ).toMatch(/mixture-of-experts router .* the qwen3 base has none/);
    const dense = pairFor("qwen3", "model.layers.0.mlp.up_proj", "blk.0.ffn_up.weight", 2, 1);
    expect((await refusal(await folder(peftConfig(2), dense), "qwen3moe")).message).toMatch(
      /no blk\.0\.ffn_up\.weight .*made for a dense model/,
    );
    expect((await refusal(await folder(peftConfig(4), QWEN3_ATTENTION(4)), "llama")).code).toBe(
      "incompatible",
    );
  });

  it("a missing expert, or more experts than the base has", async () => {
    const tensors: TestTensor[] = [];
    for (let e = 0; e < 3; e++)
      tensors.push(
        ...pairFor("qwen3moe", `model.layers.0.mlp.experts.${e}.up_proj`, "blk.0.ffn_up_exps.weight", 2, e),
      );
    expect((await refusal(await folder(peftConfig(2), tensors), "qwen3moe")).message).toMatch(
      /4 experts in the base, but the adapter has no LoRA for expert 3/,
    );
    for (const e of [3, 4])
      tensors.push(
        ...pairFor("qwen3moe", `model.layers.0.mlp.experts.${e}.up_proj`, "blk.0.ffn_up_exps.weight", 2, e),
      );
    expect((await refusal(await folder(peftConfig(2), tensors), "qwen3moe")).message).toMatch(
      /expert 4, but the base has 4 experts/,
    );
  });

  it("embedding LoRA and saved embeddings (added tokens)", async () => {
    const emb = [
      {
        name: "base_model.model.model.embed_tokens.lora_embedding_A",
        shape: [2, 265],
        data: new Float32Array(530),
      },
      {
        name: "base_model.model.model.embed_tokens.lora_embedding_B",
        shape: [64, 2],
        data: new Float32Array(128),
      },
    ];
    expect(
      (await refusal(await folder(peftConfig(2), [...QWEN3_ATTENTION(2), ...emb]), "qwen3")).message,
    ).toMatch(/token embeddings \(lora_embedding_A\/B\)/);
    const saved = {
      name: "base_model.model.lm_head.weight",
      shape: [265, 64],
      data: new Float32Array(265 * 64),
    };
    expect(
      (await refusal(await folder(peftConfig(2), [...QWEN3_ATTENTION(2), saved]), "qwen3")).message,
    ).toMatch(/saves whole output layer weights .* cannot change the vocabulary/);
  });

  it("a layer the base lacks, and weights target_modules does not name", async () => {
    const deep = pairFor("qwen3", "model.layers.0.self_attn.q_proj", "blk.0.attn_q.weight", 2, 1).map(
      (t) => ({
        ...t,
        name: t.name.replace("layers.0", "layers.7"),
      }),
    );
    expect((await refusal(await folder(peftConfig(2), deep), "qwen3")).message).toMatch(
      /layer 7, but the base has 2 layers/,
    );
    expect(
      (
        await refusal(
          await folder(peftConfig(2, { target_modules: ["q_proj"] }), QWEN3_ATTENTION(2)),
          "qwen3",
        )
      ).message,
    ).toMatch(
      /LoRA weights for model\.layers\.1\.self_attn\.v_proj, which its target_modules .* does not name/,
    );
  });

  it("not a PEFT folder: no config, a pickle only, a damaged safetensors file", async () => {
    const empty = join(dir.path, "empty");
    await writePeftFolder(empty, peftConfig(2), []);
    await rm(join(empty, "adapter_config.json"));
    expect((await refusal(empty, "qwen3")).message).toMatch(/has no adapter_config\.json/);
    const pickled = await folder(peftConfig(2), []);
    await rm(join(pickled, "adapter_model.safetensors"));
    writeFileSync(join(pickled, "adapter_model.bin"), "x");
    expect((await refusal(pickled, "qwen3")).message).toMatch(/only adapter_model\.bin \(a Python pickle/);
    const damaged = await folder(peftConfig(2), QWEN3_ATTENTION(2));
    writeFileSync(
      join(damaged, "adapter_model.safetensors"),
      Buffer.from([255, 255, 255, 255, 0, 0, 0, 0, 1]),
    );
    expect((await refusal(damaged, "qwen3")).message).toMatch(
      /not a usable safetensors file: its header claims/,
    );
  });
});
