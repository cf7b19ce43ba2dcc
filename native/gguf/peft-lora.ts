import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { jsonDepth } from "../../common/json-depth";
import { assertAdapterFits } from "./model-check";
import { readGguf, type GgufFile, type GgufMetadataValue } from "./gguf-parser";
import { isFloatDtype, SafetensorsError, SafetensorsReader } from "./safetensors";
import { gv, writeGguf, type GgufWriteSpec, type GgufWriteTensor, type GgufWriteValue } from "./writer";

/**
 * Hugging Face PEFT LoRA folder (`adapter_config.json` + `adapter_model.safetensors`) → llama.cpp
 * LoRA GGUF, checked against the base GGUF it will run on. What llama.cpp's
 * convert_lora_to_gguf.py does (node-llama-cpp's bundled source), for the architectures the app
 * runs (llama, qwen2, qwen3, qwen3moe):
 *
 * - Names: `base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight` →
 *   `blk.N.attn_q.weight.lora_a` (convert_hf_to_gguf's tensor map: q/k/v/o_proj → attn_q/k/v/
 *   attn_output, mlp.gate/up/down_proj → ffn_gate/up/down, mlp.gate → ffn_gate_inp, lm_head →
 *   output; Mixtral's block_sparse_moe.w1/w2/w3 → ffn_gate/down/up_exps, block_sparse_moe.gate →
 *   ffn_gate_inp).
 * - Layout: no data transpose. lora_A (r, n_in) is written as dims [n_in, r], lora_B (n_out, r)
 *   as [r, n_out] (GGUF dims are PyTorch's shape reversed).
 * - llama only: q_proj/k_proj's lora_B rows get LlamaModel.permute (HF's rotate-half layout →
 *   llama.cpp's adjacent pairs), with head_count for q and head_count_kv for k.
 * - Experts (`mlp.experts.E.gate_proj`, qwen3moe; Mixtral's `block_sparse_moe.experts.E.w1`):
 *   every expert's A and B stacked (torch.stack, dim 0) → lora_a [n_in, r, experts], lora_b
 *   [r, n_out, experts]. All experts of a projection must be present.
 * - Scale: `adapter.lora.alpha`; llama.cpp multiplies by alpha / rank with each tensor's own
 *   rank. PEFT's scale is lora_alpha / r, or lora_alpha / sqrt(r) with `use_rslora` (which the
 *   Python script ignores), with `alpha_pattern` per module. When every tensor's PEFT scale × rank
 *   is one number it is written as the alpha; otherwise lora_alpha is written and each lora_B is
 *   multiplied by its module's correction.
 *
 * Refused with a reason (PeftError): not a PEFT LoRA folder (other PEFT types, pickled
 * adapter_model.bin, a damaged safetensors file), DoRA, LoRA biases, fan_in_fan_out, embedding
 * LoRA and full saved modules (`modules_to_save`, e.g. resized embeddings), fused expert
 * parameters (`target_parameters`), weights the config's target_modules does not name, and
 * anything that does not fit the base: another architecture, a layer or projection the base
 * lacks, a shape or expert count that differs. Every one of these checks needs only the config
 * and the safetensors header: `checkPeft` runs them without the weights (the hub's adapter search
 * reads just those two remotely), and `convertPeft` converts by the same plan.
 */

export type PeftErrorCode = "not_peft" | "unsupported" | "incompatible" | "invalid_out";

/** A PEFT folder that cannot be converted; `message` is a complete sentence for the user. */
export class PeftError extends Error {
  override readonly name = "PeftError";
  constructor(
    readonly code: PeftErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isPeftError(err: unknown): err is PeftError {
  return err instanceof PeftError;
}

/** Base architectures whose Hugging Face names this converter maps. */
export const PEFT_ARCHITECTURES = ["llama", "qwen2", "qwen3", "qwen3moe"] as const;

export const PEFT_CONFIG_FILE = "adapter_config.json";
export const PEFT_WEIGHTS_FILE = "adapter_model.safetensors";

/** The parts of adapter_config.json the conversion reads. */
export interface PeftConfig {
  readonly peftType: string;
  readonly r: number;
  readonly loraAlpha: number;
  readonly useRslora: boolean;
  readonly targetModules: readonly string[] | string | null;
  readonly baseModel: string | null;
  readonly alphaPattern: Readonly<Record<string, number>>;
  /** An activated LoRA's invocation tokens (adapter.alora.invocation_tokens), or null. */
  readonly aloraInvocationTokens: readonly number[] | null;
}

/** What checking a PEFT adapter against a base finds (checkPeft), before converting it. */
export interface PeftCheck {
  readonly architecture: string;
  /** The alpha written to adapter.lora.alpha. */
  readonly alpha: number;
  /** Distinct ranks of the converted tensors. */
  readonly ranks: readonly number[];
  /** LoRA pairs written (an expert stack counts once). */
  readonly pairs: number;
  /** GGUF short names changed (attn_q, ffn_down_exps, …). */
  readonly targets: readonly string[];
  /** Things worth saying that do not stop the conversion (e.g. another base named). */
  readonly warnings: readonly string[];
}

export interface PeftConversion extends PeftCheck {
  readonly spec: GgufWriteSpec;
  readonly config: PeftConfig;
}

function str(value: GgufMetadataValue | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function count(value: GgufMetadataValue | undefined): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Whether `dir` looks like a PEFT adapter folder (has adapter_config.json). */
export async function isPeftFolder(dir: string): Promise<boolean> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) return false;
  return (await stat(join(dir, PEFT_CONFIG_FILE)).catch(() => null))?.isFile() ?? false;
}

/** Reads and checks adapter_config.json. */
export async function readPeftConfig(dir: string): Promise<PeftConfig> {
  let text: string;
  try {
    text = await readFile(join(dir, PEFT_CONFIG_FILE), "utf8");
  } catch {
    throw new PeftError(
      "not_peft",
      `"${basename(dir)}" is not a PEFT adapter folder: it has no ${PEFT_CONFIG_FILE}.`,
    );
  }
  return parsePeftConfig(text, basename(dir));
}

/**
 * The deepest nesting adapter_config.json may have: PEFT writes a few levels (alpha_pattern,
 * loftq_config); a hub's `[[[[…` is refused before JSON.parse builds it.
 */
const MAX_CONFIG_DEPTH = 32;

/** Checks the text of adapter_config.json; `name` is what messages call the adapter. */
export function parsePeftConfig(text: string, name: string): PeftConfig {
  const where = `"${name}"`;
  let raw: Record<string, unknown>;
  try {
    if (jsonDepth(text) > MAX_CONFIG_DEPTH) throw new Error();
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error();
    raw = parsed as Record<string, unknown>;
  } catch {
    throw new PeftError("not_peft", `${where}'s ${PEFT_CONFIG_FILE} is not a JSON object.`);
  }
  const unsupported = (why: string) => new PeftError("unsupported", `${where} cannot be converted: ${why}.`);
  if (raw.peft_type !== undefined && typeof raw.peft_type !== "string")
    throw unsupported(`its peft_type is ${JSON.stringify(raw.peft_type)}, not a name such as "LORA"`);
  const peftType = typeof raw.peft_type === "string" ? raw.peft_type.toUpperCase() : "LORA";
  if (peftType !== "LORA")
    throw unsupported(
      `it is ${/^[AEIOU]/.test(peftType) ? "an" : "a"} ${peftType} adapter; only LoRA adapters convert to llama.cpp's format`,
    );
  if (raw.use_dora === true)
    throw unsupported(
      "it is a DoRA adapter (use_dora), whose magnitude vectors llama.cpp cannot apply; merge it into the model instead",
    );
  if (raw.fan_in_fan_out === true)
    throw unsupported(
      "its weights are stored fan_in_fan_out (GPT-2-style Conv1D layers), which these models do not have",
    );
  if (typeof raw.bias === "string" && raw.bias !== "none")
    throw unsupported(`it trains biases (bias: "${raw.bias}"), which llama.cpp's LoRA format cannot hold`);
  if (raw.lora_bias === true)
    throw unsupported("it has LoRA biases (lora_bias), which llama.cpp cannot apply");
  if (Array.isArray(raw.target_parameters) && raw.target_parameters.length > 0)
    throw unsupported(
      "it targets fused parameters (target_parameters, e.g. stacked expert weights) rather than layers",
    );
  if (raw.layer_replication !== undefined && raw.layer_replication !== null)
    throw unsupported("it replicates layers (layer_replication)");
  if (typeof raw.invocation_string === "string" && raw.alora_invocation_tokens === undefined)
    throw unsupported("it is an activated LoRA given by invocation_string without alora_invocation_tokens");
  const r = raw.r;
  if (typeof r !== "number" || !Number.isSafeInteger(r) || r < 1)
    throw new PeftError("not_peft", `${where}'s ${PEFT_CONFIG_FILE} has no valid rank r.`);
  const alpha = raw.lora_alpha ?? r;
  if (typeof alpha !== "number" || !(alpha > 0) || !Number.isFinite(alpha))
    throw new PeftError("not_peft", `${where}'s lora_alpha must be a positive number.`);
  const targets = raw.target_modules;
  const targetModules =
    typeof targets === "string"
      ? targets
      : Array.isArray(targets) && targets.every((t) => typeof t === "string")
        ? targets
        : null;
  const alphaPattern: Record<string, number> = {};
  if (typeof raw.alpha_pattern === "object" && raw.alpha_pattern !== null)
    for (const [k, v] of Object.entries(raw.alpha_pattern as Record<string, unknown>))
      if (typeof v === "number" && v > 0) alphaPattern[k] = v;
  return {
    peftType,
    r,
    loraAlpha: alpha,
    useRslora: raw.use_rslora === true,
    targetModules,
    baseModel: typeof raw.base_model_name_or_path === "string" ? raw.base_model_name_or_path : null,
    alphaPattern,
    aloraInvocationTokens:
      Array.isArray(raw.alora_invocation_tokens) &&
      raw.alora_invocation_tokens.every((t) => Number.isSafeInteger(t) && (t as number) >= 0)
        ? (raw.alora_invocation_tokens as number[])
        : null,
  };
}

/** PEFT's own matching of a module name against a list entry or regex (tuners_utils). */
function targetMatches(targets: readonly string[] | string | null, module: string): boolean {
  if (targets === null) return true;
  if (typeof targets === "string") {
    if (targets === "all-linear") return !module.endsWith("lm_head");
    try {
      return new RegExp(`^(?:${targets})$`).test(module);
    } catch {
      return true;
    }
  }
  return targets.some((t) => module === t || module.endsWith(`.${t}`));
}

/** alpha_pattern's entry for `module` (PEFT: `(.*\.)?key$`), else lora_alpha. */
function alphaFor(config: PeftConfig, module: string): number {
  for (const [key, value] of Object.entries(config.alphaPattern)) {
    try {
      if (new RegExp(`^(?:.*\\.)?(?:${key})$`).test(module)) return value;
    } catch {
      if (module === key || module.endsWith(`.${key}`)) return value;
    }
  }
  return config.loraAlpha;
}

/** Where a Hugging Face module goes in the GGUF, or why nowhere. */
type Mapped =
  | { kind: "tensor"; gguf: string; layer: number | null; expert: null; proj: string }
  | { kind: "expert"; gguf: string; layer: number; expert: number; proj: string }
  | { kind: "refuse"; why: string };

const ATTN: Readonly<Record<string, string>> = {
  q_proj: "attn_q",
  k_proj: "attn_k",
  v_proj: "attn_v",
  o_proj: "attn_output",
};
const MLP: Readonly<Record<string, string>> = {
  gate_proj: "ffn_gate",
  up_proj: "ffn_up",
  down_proj: "ffn_down",
};
const EXPERT: Readonly<Record<string, string>> = {
  gate_proj: "ffn_gate_exps",
  up_proj: "ffn_up_exps",
  down_proj: "ffn_down_exps",
  w1: "ffn_gate_exps",
  w2: "ffn_down_exps",
  w3: "ffn_up_exps",
};

function mapModule(module: string): Mapped {
  const path = module.replace(/^model\./, "");
  if (path === "lm_head")
    return { kind: "tensor", gguf: "output.weight", layer: null, expert: null, proj: "lm_head" };
  if (path === "embed_tokens" || path.endsWith(".embed_tokens"))
    return {
      kind: "refuse",
      why: "it has LoRA weights on the token embeddings (embed_tokens), which this converter does not map",
    };
  const layer = /^layers\.(\d+)\.(.+)$/.exec(path);
  if (!layer) return { kind: "refuse", why: `it changes ${module}, which is not a layer of these models` };
  const n = Number(layer[1]);
  const rest = layer[2]!;
  let m = /^self_attn\.([a-z_]+)$/.exec(rest);
  if (m && ATTN[m[1]!])
    return { kind: "tensor", gguf: `blk.${n}.${ATTN[m[1]!]}.weight`, layer: n, expert: null, proj: m[1]! };
  m = /^mlp\.([a-z_]+)$/.exec(rest);
  if (m && MLP[m[1]!])
    return { kind: "tensor", gguf: `blk.${n}.${MLP[m[1]!]}.weight`, layer: n, expert: null, proj: m[1]! };
  if (rest === "mlp.gate" || rest === "block_sparse_moe.gate")
    return { kind: "tensor", gguf: `blk.${n}.ffn_gate_inp.weight`, layer: n, expert: null, proj: "gate" };
  m = /^(?:mlp|block_sparse_moe)\.experts\.(\d+)\.([a-z0-9_]+)$/.exec(rest);
  if (m && EXPERT[m[2]!])
    return {
      kind: "expert",
      gguf: `blk.${n}.${EXPERT[m[2]!]}.weight`,
      layer: n,
      expert: Number(m[1]),
      proj: m[2]!,
    };
  if (/shared_expert/.test(rest))
    return {
      kind: "refuse",
      why: `it changes ${module}: shared experts are not part of llama, qwen2, qwen3 or qwen3moe`,
    };
  return {
    kind: "refuse",
    why: `it changes ${module}, which has no llama.cpp tensor in these architectures`,
  };
}

/** LlamaModel.permute on the rows of `b` ((n_out, r) row-major): HF q/k layout → llama.cpp's. */
export function permuteRows(b: Float32Array, nOut: number, rank: number, heads: number): Float32Array {
  const headDim = nOut / heads;
  const half = headDim / 2;
  const out = new Float32Array(b.length);
  // reshape(heads, 2, half, r).swapaxes(1, 2): new row h·hd + i·2 + j ← old row h·hd + j·half + i.
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < half; i++)
      for (let j = 0; j < 2; j++) {
        const from = (h * headDim + j * half + i) * rank;
        const to = (h * headDim + i * 2 + j) * rank;
        out.set(b.subarray(from, from + rank), to);
      }
  return out;
}

interface Pair {
  module: string;
  a?: string;
  b?: string;
}

export interface ConvertPeftOptions {
  /** The PEFT folder. */
  readonly peftDir: string;
  /** The base model GGUF (path, or its parsed header) the adapter must fit. */
  readonly base: string | GgufFile;
  /** general.name of the result; default: the folder's name. */
  readonly name?: string;
}

/** What the check reads of adapter_model.safetensors: each tensor's dtype and shape (its header). */
export type PeftTensorShapes = ReadonlyMap<
  string,
  { readonly dtype: string; readonly shape: readonly number[] }
>;

export interface CheckPeftOptions {
  /** adapter_config.json, checked (readPeftConfig / parsePeftConfig). */
  readonly config: PeftConfig;
  /** The tensors the safetensors header lists. */
  readonly tensors: PeftTensorShapes;
  /** The base model's GGUF header. */
  readonly base: GgufFile;
  /** What messages call the adapter (a folder's name, a hub repo). */
  readonly name: string;
}

/** One GGUF LoRA pair to write: a module, or a projection's experts stacked. */
interface PlannedTensor {
  gguf: string;
  module: string;
  /** The PEFT pair, or one per expert in expert order. */
  pairs: Pair[];
  nIn: number;
  nOut: number;
  rank: number;
  experts: number;
  /** llama's q/k: lora_B rows are permuted for this many heads; else null. */
  permuteHeads: number | null;
  /** lora_B is multiplied by this (1 when one alpha serves every tensor). */
  bFactor: number;
}

interface PeftPlan extends PeftCheck {
  /** In the base's tensor order. */
  readonly tensors: readonly PlannedTensor[];
}

/** Refuses a base the converter cannot convert for (an adapter, another architecture). */
function checkBase(base: GgufFile, where: string): string {
  const arch = str(base.metadata["general.architecture"]) ?? "unknown";
  if (base.metadata["general.type"] === "adapter")
    throw new PeftError(
      "incompatible",
      `The base given for ${where} is itself an adapter, not a base model.`,
    );
  if (!(PEFT_ARCHITECTURES as readonly string[]).includes(arch))
    throw new PeftError(
      "incompatible",
      `${where} does not fit the base model: the base is a ${arch} model; PEFT adapters convert for ${PEFT_ARCHITECTURES.join(", ")} bases.`,
    );
  return arch;
}

/**
 * Everything the conversion checks, from the config and the safetensors header alone (no tensor
 * data): the tensor names and kinds, the mapping onto the base's tensors, every shape, the
 * experts, the ranks and the alpha. convertPeft converts by this plan, so a folder that passes
 * here converts unless its bytes differ from its header.
 */
function planPeft({ config, tensors: weights, base, name }: CheckPeftOptions): PeftPlan {
  const where = `"${name}"`;
  const arch = checkBase(base, where);
  const incompatible = (why: string) =>
    new PeftError("incompatible", `${where} does not fit the base model: ${why}.`);
  const unsupported = (why: string) => new PeftError("unsupported", `${where} cannot be converted: ${why}.`);

  const pairs = new Map<string, Pair>();
  for (const [name, tensor] of weights) {
    if (/lora_magnitude_vector/.test(name))
      throw unsupported(`it is a DoRA adapter (${name}), whose magnitude vectors llama.cpp cannot apply`);
    if (/lora_embedding_[AB]/.test(name))
      throw unsupported(
        "it has LoRA weights on the token embeddings (lora_embedding_A/B), which this converter does not map",
      );
    const m = /^base_model\.model\.(.+)\.lora_([AB])(?:\.default)?\.weight$/.exec(name);
    if (!m) {
      if (/(embed_tokens|lm_head)(\.modules_to_save\.[^.]+)?\.weight$/.test(name))
        throw unsupported(
          `it saves whole ${/embed_tokens/.test(name) ? "token embeddings" : "output layer"} weights (${name}), usually after adding tokens; llama.cpp adapters cannot change the vocabulary`,
        );
      if (/\.lora_B\.bias$/.test(name))
        throw unsupported(`it has LoRA biases (${name}), which llama.cpp cannot apply`);
      throw unsupported(`its tensor ${name} is not a lora_A/lora_B weight`);
    }
    if (!isFloatDtype(tensor.dtype))
      throw unsupported(
        `its tensor ${name} is stored as ${tensor.dtype}; only F32, F16, BF16 and F64 weights can be converted`,
      );
    const module = m[1]!;
    const pair = pairs.get(module) ?? { module };
    if (m[2] === "A") pair.a = name;
    else pair.b = name;
    pairs.set(module, pair);
  }
  if (pairs.size === 0)
    throw new PeftError("not_peft", `${where}'s ${PEFT_WEIGHTS_FILE} has no LoRA weights.`);

  const baseTensors = new Map(base.tensors.map((t) => [t.name, t]));
  const blocks = count(base.metadata[`${arch}.block_count`]) ?? 0;
  const heads = count(base.metadata[`${arch}.attention.head_count`]);
  const kvHeads = count(base.metadata[`${arch}.attention.head_count_kv`]) ?? heads;

  interface Entry {
    gguf: string;
    module: string;
    proj: string;
    /** null: a plain tensor; else by expert index. */
    experts: Map<number, Pair> | null;
    pair: Pair | null;
  }
  const entries = new Map<string, Entry>();
  for (const pair of pairs.values()) {
    if (!pair.a || !pair.b)
      throw new PeftError(
        "not_peft",
        `${where} is damaged: ${pair.module} has lora_${pair.a ? "A" : "B"} but no lora_${pair.a ? "B" : "A"}.`,
      );
    if (!targetMatches(config.targetModules, pair.module))
      throw new PeftError(
        "not_peft",
        `${where} is inconsistent: it has LoRA weights for ${pair.module}, which its target_modules (${JSON.stringify(config.targetModules)}) does not name.`,
      );
    const mapped = mapModule(pair.module);
    if (mapped.kind === "refuse") throw unsupported(mapped.why);
    if (mapped.layer !== null && mapped.layer >= blocks)
      throw incompatible(`it changes layer ${mapped.layer}, but the base has ${blocks} layers`);
    if (!baseTensors.has(mapped.gguf)) {
      const why =
        mapped.gguf === "output.weight"
          ? "it changes lm_head, but the base ties its output layer to the token embeddings (it has no output.weight)"
          : mapped.kind === "expert"
            ? `it changes experts (${pair.module}), but the base has no ${mapped.gguf.split(".")[2]} (it is not a mixture of experts; the adapter was made for another architecture)`
            : mapped.proj === "gate"
              ? `it changes a mixture-of-experts router (${pair.module}), but the ${arch} base has none (the adapter was made for another architecture)`
              : `it changes ${pair.module}, but the ${arch} base has no ${mapped.gguf}` +
                (/ffn_(gate|up|down)\./.test(mapped.gguf)
                  ? " (its feed-forward layers are experts: the adapter was made for a dense model)"
                  : "");
      throw incompatible(why);
    }
    let entry = entries.get(mapped.gguf);
    if (!entry) {
      entry = {
        gguf: mapped.gguf,
        module: pair.module,
        proj: mapped.proj,
        experts: mapped.kind === "expert" ? new Map() : null,
        pair: null,
      };
      entries.set(mapped.gguf, entry);
    }
    if (mapped.kind === "expert") entry.experts!.set(mapped.expert, pair);
    else entry.pair = pair;
  }

  const shapeOf = (name: string) => weights.get(name)!.shape;
  const planned: (PlannedTensor & { peftScale: number })[] = [];
  for (const entry of entries.values()) {
    const w = baseTensors.get(entry.gguf)!;
    const [wIn, wOut, wExperts] = [w.dims[0]!, w.dims[1]!, w.dims[2] ?? 1];
    const list: Pair[] = [];
    if (entry.experts) {
      for (let e = 0; e < wExperts; e++) {
        const p = entry.experts.get(e);
        if (!p)
          throw incompatible(
            `${entry.gguf} has ${wExperts} experts in the base, but the adapter has no LoRA for expert ${e} of ${entry.module.replace(/experts\.\d+/, "experts.*")}`,
          );
        list.push(p);
      }
      const extra = [...entry.experts.keys()].find((e) => e >= wExperts);
      if (extra !== undefined)
        throw incompatible(
          `the adapter changes expert ${extra}, but the base has ${wExperts} experts (${entry.gguf})`,
        );
    } else {
      if (w.dims.length > 2)
        throw incompatible(
          `${entry.gguf} is an expert tensor in the base, but the adapter changes it as one layer`,
        );
      list.push(entry.pair!);
    }
    let rank = 0;
    let permuteHeads: number | null = null;
    for (const p of list) {
      const sa = shapeOf(p.a!);
      const sb = shapeOf(p.b!);
      if (sa.length !== 2 || sb.length !== 2 || sa[0] !== sb[1])
        throw new PeftError(
          "not_peft",
          `${where} is damaged: ${p.module}'s lora_A [${sa.join(", ")}] and lora_B [${sb.join(", ")}] do not make a LoRA pair.`,
        );
      const [r, nIn] = sa as [number, number];
      const nOut = sb[0]!;
      if (nIn !== wIn || nOut !== wOut)
        throw incompatible(
          `${p.module} is ${nOut}×${nIn} in the adapter but ${entry.gguf} is ${wOut}×${wIn} in the base (it was made for a different base model)`,
        );
      if (rank && r !== rank)
        throw unsupported(
          `the experts of ${entry.module.replace(/experts\.\d+/, "experts.*")} have different ranks`,
        );
      rank = r;
      if (arch === "llama" && (entry.proj === "q_proj" || entry.proj === "k_proj")) {
        // The rope permutation needs the head count: without it the adapter would load and be wrong.
        if (!heads)
          throw incompatible("the llama base does not say its head count (llama.attention.head_count)");
        const n = entry.proj === "q_proj" ? heads : kvHeads!;
        if (nOut % (2 * n) !== 0)
          throw incompatible(`${p.module} has ${nOut} outputs, which do not split into ${n} heads`);
        permuteHeads = n;
      }
    }
    const alpha = alphaFor(config, entry.module);
    planned.push({
      gguf: entry.gguf,
      module: entry.module,
      pairs: list,
      nIn: wIn,
      nOut: wOut,
      rank,
      experts: entry.experts ? wExperts : 1,
      permuteHeads,
      bFactor: 1,
      peftScale: config.useRslora ? alpha / Math.sqrt(rank) : alpha / rank,
    });
  }

  // llama.cpp: scale · alpha / rank. One alpha when every tensor's PEFT scale · rank agrees.
  const wanted = planned.map((c) => c.peftScale * c.rank);
  const same = wanted.every((x) => Math.abs(x - wanted[0]!) <= 1e-6 * Math.abs(wanted[0]!));
  const alpha = same ? Math.fround(wanted[0]!) : config.loraAlpha;
  if (!same) for (const c of planned) c.bFactor = (c.peftScale * c.rank) / alpha;

  const order = new Map(base.tensors.map((t, i) => [t.name, i]));
  planned.sort((x, y) => order.get(x.gguf)! - order.get(y.gguf)!);

  const warnings: string[] = [];
  if (config.baseModel) {
    const named = baseNames(base);
    const id = config.baseModel.toLowerCase();
    if (named.length > 0 && !named.some((n) => id.includes(n) || n.includes(id.split("/").pop()!)))
      warnings.push(
        `The adapter names ${config.baseModel} as its base; the GGUF says ${named.join(" / ")}. Its shapes fit, but it may have been trained on other weights.`,
      );
  }
  return {
    architecture: arch,
    alpha,
    ranks: [...new Set(planned.map((c) => c.rank))].sort((x, y) => x - y),
    pairs: planned.length,
    targets: [...new Set(planned.map((c) => c.gguf.split(".").at(-2)!))],
    warnings,
    tensors: planned,
  };
}

/**
 * Whether a PEFT adapter converts for `base`, from its config and safetensors header alone (what
 * the hub's adapter search reads remotely): the conversion's own rules, no tensor data read.
 * Throws the PeftError the conversion would throw.
 */
export function checkPeft(options: CheckPeftOptions): PeftCheck {
  const { tensors: _tensors, ...check } = planPeft(options);
  return check;
}

/** Converts the PEFT folder in memory (tensors as float32), checking it against the base. */
export async function convertPeft(options: ConvertPeftOptions): Promise<PeftConversion> {
  const { peftDir } = options;
  const name = basename(peftDir);
  const where = `"${name}"`;
  const config = await readPeftConfig(peftDir);
  const base = typeof options.base === "string" ? await readGguf(options.base) : options.base;
  checkBase(base, where);

  const weightsPath = join(peftDir, PEFT_WEIGHTS_FILE);
  if (!(await stat(weightsPath).catch(() => null))?.isFile()) {
    const pickled = await stat(join(peftDir, "adapter_model.bin")).catch(() => null);
    throw new PeftError(
      "not_peft",
      pickled
        ? `${where} has only adapter_model.bin (a Python pickle, which is never read: it can run code); save the adapter as ${PEFT_WEIGHTS_FILE}.`
        : `${where} has no ${PEFT_WEIGHTS_FILE}.`,
    );
  }
  let reader: SafetensorsReader;
  try {
    reader = await SafetensorsReader.open(weightsPath);
  } catch (err) {
    if (err instanceof SafetensorsError) throw new PeftError("not_peft", err.message);
    throw err;
  }
  try {
    const plan = planPeft({ config, tensors: reader.file.tensors, base, name });
    const read = async (tensor: string) => {
      let values: Float32Array;
      try {
        values = await reader.read(tensor);
      } catch (err) {
        if (err instanceof SafetensorsError) throw new PeftError("not_peft", err.message);
        throw err;
      }
      // A NaN or infinity spreads through every answer the adapter touches (it answered
      // "\u0000…" once installed): a damaged file, refused like any other.
      const bad = values.findIndex((v) => !Number.isFinite(v));
      if (bad >= 0)
        throw new PeftError(
          "not_peft",
          `${where} is damaged: ${tensor} holds ${values[bad]} at element ${bad}; a LoRA's weights are finite numbers.`,
        );
      return values;
    };
    const stack = (parts: Float32Array[]) => {
      if (parts.length === 1) return parts[0]!;
      const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        out.set(p, at);
        at += p.length;
      }
      return out;
    };
    const tensors: GgufWriteTensor[] = [];
    for (const c of plan.tensors) {
      const as: Float32Array[] = [];
      const bs: Float32Array[] = [];
      for (const p of c.pairs) {
        as.push(await read(p.a!));
        let b = await read(p.b!);
        if (c.permuteHeads !== null) b = permuteRows(b, c.nOut, c.rank, c.permuteHeads);
        bs.push(b);
      }
      const b = stack(bs);
      if (c.bFactor !== 1) for (let i = 0; i < b.length; i++) b[i]! *= c.bFactor;
      const e = c.experts > 1 ? [c.experts] : [];
      tensors.push(
        { name: `${c.gguf}.lora_a`, dims: [c.nIn, c.rank, ...e], type: "F32", data: stack(as) },
        { name: `${c.gguf}.lora_b`, dims: [c.rank, c.nOut, ...e], type: "F32", data: b },
      );
    }

    const metadata: Record<string, GgufWriteValue> = {
      "general.architecture": gv.str(plan.architecture),
      "general.type": gv.str("adapter"),
      "general.name": gv.str(options.name ?? name),
      "adapter.type": gv.str("lora"),
      "adapter.lora.alpha": gv.f32(plan.alpha),
    };
    if (config.baseModel) {
      metadata["general.base_model.count"] = gv.u32(1);
      metadata["general.base_model.0.name"] = gv.str(config.baseModel);
      if (/^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(config.baseModel))
        metadata["general.base_model.0.repo_url"] = gv.str(`https://huggingface.co/${config.baseModel}`);
    }
    if (config.aloraInvocationTokens)
      metadata["adapter.alora.invocation_tokens"] = {
        type: "array",
        itemType: "uint32",
        value: config.aloraInvocationTokens,
      };

    const { tensors: _planned, ...check } = plan;
    return { ...check, spec: { metadata, tensors }, config };
  } finally {
    await reader.close();
  }
}

/** Lower-case names the base GGUF gives its source (repo ids, basename), for a soft check. */
function baseNames(base: GgufFile): string[] {
  const m = base.metadata;
  const out: string[] = [];
  for (const key of ["general.source.repo_url", "general.base_model.0.repo_url"]) {
    const url = str(m[key]);
    const id = url && /huggingface\.co\/([^/]+\/[^/?#]+)/.exec(url)?.[1];
    if (id) out.push(id.toLowerCase());
  }
  const family = str(m["general.basename"]);
  if (family) out.push(family.toLowerCase());
  return out;
}

/**
 * `out` must not replace what the conversion reads or another model: writing over the base
 * (an easy slip on the command line) lost a user's model file. An earlier adapter at `out` is
 * replaced, as re-converting expects; a folder that does not exist is said plainly.
 */
async function assertSafeOut(out: string, peftDir: string, basePath: string | null): Promise<void> {
  const target = await stat(out).catch(() => null);
  const folder = await stat(dirname(out)).catch(() => null);
  if (!folder?.isDirectory())
    throw new PeftError("invalid_out", `The output folder ${dirname(out)} does not exist: create it first.`);
  if (!target) return;
  const same = async (other: string) => {
    const o = await stat(other).catch(() => null);
    return o !== null && o.dev === target.dev && o.ino === target.ino;
  };
  if (basePath !== null && (await same(basePath)))
    throw new PeftError(
      "invalid_out",
      `--out is the base model ${out}: writing the adapter there would replace it.`,
    );
  if ((await same(join(peftDir, PEFT_WEIGHTS_FILE))) || (await same(join(peftDir, PEFT_CONFIG_FILE))))
    throw new PeftError("invalid_out", `--out is a file of the PEFT folder itself: ${out}.`);
  if (!target.isFile()) throw new PeftError("invalid_out", `${out} exists and is not a file.`);
  const existing = await readGguf(out).catch(() => null);
  if (existing && existing.metadata["general.type"] !== "adapter")
    throw new PeftError(
      "invalid_out",
      `${out} is a model, not an adapter: writing the adapter there would replace it. Choose another --out.`,
    );
}

/**
 * Converts the PEFT folder and writes the adapter GGUF to `out` (temp file + rename), then
 * checks the written file the way the app checks any adapter against its base.
 */
export async function convertPeftToFile(
  options: ConvertPeftOptions & { out: string },
): Promise<PeftConversion> {
  await assertSafeOut(options.out, options.peftDir, typeof options.base === "string" ? options.base : null);
  const base = typeof options.base === "string" ? await readGguf(options.base) : options.base;
  const result = await convertPeft({ ...options, base });
  await writeGguf(options.out, result.spec);
  await assertAdapterFits(options.out, base);
  return result;
}
