import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * PEFT adapter folders for the converter's tests (native/gguf/peft-lora.ts): a safetensors
 * writer (header length, JSON header, raw little-endian bytes, as the `safetensors` package
 * writes them) and `adapter_config.json` with PEFT's defaults for a LoRA.
 */

export interface TestTensor {
  readonly name: string;
  /** PyTorch order (lora_A is (r, n_in), lora_B (n_out, r)). */
  readonly shape: readonly number[];
  readonly data: Float32Array;
  /** Stored as F32 (default), F16 (rounded by the caller's values) or BF16 (truncated). */
  readonly dtype?: "F32" | "BF16";
}

export function encodeSafetensors(tensors: readonly TestTensor[]): Buffer {
  const header: Record<string, unknown> = {};
  const blobs: Buffer[] = [];
  let offset = 0;
  for (const t of tensors) {
    const dtype = t.dtype ?? "F32";
    const blob = Buffer.alloc(t.data.length * (dtype === "F32" ? 4 : 2));
    t.data.forEach((x, i) => {
      if (dtype === "F32") blob.writeFloatLE(x, i * 4);
      else {
        const f = Buffer.alloc(4);
        f.writeFloatLE(x);
        blob.writeUInt16LE(f.readUInt32LE() >>> 16, i * 2);
      }
    });
    header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + blob.length] };
    blobs.push(blob);
    offset += blob.length;
  }
  header.__metadata__ = { format: "pt" };
  let text = JSON.stringify(header);
  text += " ".repeat((8 - (Buffer.byteLength(text) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  return Buffer.concat([length, Buffer.from(text), ...blobs]);
}

/** PEFT's adapter_config.json for a LoRA of rank `r`, overridable field by field. */
export function peftConfig(r: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: "Qwen/Qwen3-0.6B",
    r,
    lora_alpha: 2 * r,
    lora_dropout: 0,
    use_rslora: false,
    use_dora: false,
    bias: "none",
    fan_in_fan_out: false,
    target_modules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    ...extra,
  };
}

export async function writePeftFolder(
  dir: string,
  config: Record<string, unknown>,
  tensors: readonly TestTensor[],
): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "adapter_config.json"), JSON.stringify(config, null, 2));
  await writeFile(join(dir, "adapter_model.safetensors"), encodeSafetensors(tensors));
  return dir;
}

/** Deterministic values in [-scale, scale) (a small LCG: tests need no quality randomness). */
export function testValues(n: number, seed: number, scale = 0.1): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * 2 * scale;
  }
  return out;
}

/** lora_A and lora_B of one module, PEFT-named. */
export function loraPair(
  module: string,
  nIn: number,
  nOut: number,
  r: number,
  seed: number,
): [TestTensor, TestTensor] {
  return [
    { name: `base_model.model.${module}.lora_A.weight`, shape: [r, nIn], data: testValues(r * nIn, seed) },
    {
      name: `base_model.model.${module}.lora_B.weight`,
      shape: [nOut, r],
      data: testValues(nOut * r, seed + 1),
    },
  ];
}
