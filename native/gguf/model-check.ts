import { basename, extname } from "node:path";
import type { ModelInfo } from "../../common/model-info";
import { gpt2ByteToUnicode } from "./byte-vocab";
import { GgufError } from "./gguf-error";
import { readGguf, type GgufFile, type GgufMetadataValue } from "./gguf-parser";
import { GGML_TYPE_F16, GGML_TYPE_F32, ggmlTypeInfo } from "./ggml-types";

/** The vocabulary's arrays, read whole for its checks. */
const VOCAB_TOKENS = "tokenizer.ggml.tokens";
const VOCAB_ARRAYS = [VOCAB_TOKENS, "tokenizer.ggml.token_type", "tokenizer.ggml.scores"] as const;
const SPECIAL_IDS = ["bos", "eos", "unknown", "padding", "seperator", "eot", "eom", "cls", "mask"];

/**
 * Tensor types a LoRA adapter's lora_a/lora_b may have: what llama.cpp's convert_lora_to_gguf
 * writes (f32, f16, bf16, q8_0). Others (integer types, F64, the Q8_1/Q8_K dot-product
 * intermediates) parse as GGUF but llama.cpp cannot use them as adapter weights.
 */
const LORA_TYPES = new Set([GGML_TYPE_F32, GGML_TYPE_F16, 30 /* BF16 */, 8 /* Q8_0 */]);
/** ggml types that only exist as intermediates of dot products, never as stored weights. */
const NEVER_STORED = new Set([9 /* Q8_1 */, 15 /* Q8_K */]);

/**
 * What a GGUF file is for, and whether it fits: base model vs LoRA adapter, the summary the
 * UI shows, and the checks that turn llama.cpp's generic "failed to load" into a reason.
 */

function quoted(path: string): string {
  return `"${basename(path)}"`;
}

function str(value: GgufMetadataValue | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function count(value: GgufMetadataValue | undefined): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/** "adapter" when `general.type` says so, otherwise "model". */
export function classifyGguf(file: GgufFile): "model" | "adapter" {
  return file.metadata["general.type"] === "adapter" ? "adapter" : "model";
}

/** The ModelInfo the UI shows for a base model file. */
export function summarizeModel(file: GgufFile, path: string): ModelInfo {
  const m = file.metadata;
  const architecture = str(m["general.architecture"]) ?? "unknown";
  const name = str(m["general.name"])?.trim() || basename(path, extname(path));
  return {
    path,
    name,
    architecture,
    sizeBytes: file.fileSize,
    contextLength: count(m[`${architecture}.context_length`]),
    embeddingLength: count(m[`${architecture}.embedding_length`]),
    blockCount: count(m[`${architecture}.block_count`]),
    isDemo: m["macaron.demo"] === true,
  };
}

/**
 * Reads `path` and checks it is a base model llama.cpp can load: a valid GGUF, not a LoRA
 * adapter, with an architecture and its shape keys. Returns the parsed file; throws a
 * GgufError (code "not_a_model" for valid GGUF files of the wrong kind).
 */
export async function assertLoadableModel(path: string): Promise<GgufFile> {
  const file = await readGguf(path, { fullArrays: VOCAB_ARRAYS });
  if (classifyGguf(file) === "adapter") {
    throw new GgufError(
      "not_a_model",
      `${quoted(path)} is a LoRA adapter, not a base model. Load a base model first, then add the adapter to it.`,
      path,
    );
  }
  const arch = str(file.metadata["general.architecture"]);
  if (!arch) {
    throw new GgufError(
      "not_a_model",
      `${quoted(path)} is not a loadable model: it does not say which model architecture it uses (general.architecture).`,
      path,
    );
  }
  const missing = ["embedding_length", "block_count"].filter(
    (k) => count(file.metadata[`${arch}.${k}`]) === 0,
  );
  if (missing.length > 0 || file.tensors.length === 0) {
    const what = missing.length > 0 ? `its ${arch}.${missing.join(` and ${arch}.`)} settings` : "any weights";
    throw new GgufError("not_a_model", `${quoted(path)} is not a loadable model: it lacks ${what}.`, path);
  }
  for (const t of file.tensors)
    if (NEVER_STORED.has(t.type))
      throw new GgufError(
        "corrupt",
        `${quoted(path)} is a damaged GGUF file: tensor "${t.name}" has type ${t.typeName}, which is never a stored weight.`,
        path,
      );
  checkVocabulary(file, path);
  return file;
}

/**
 * The vocabulary llama.cpp builds at load, checked first: it aborts the whole process (an
 * assertion, not an error) on a repeated token string or a byte-level vocabulary without its
 * newline token, and a count that does not match the embedding rows fails the load. One
 * flipped byte in a token string is enough for the first.
 */
function checkVocabulary(file: GgufFile, path: string): void {
  const m = file.metadata;
  const model = str(m["tokenizer.ggml.model"]);
  if (model === undefined || model === "none") return;
  const damaged = (why: string) =>
    new GgufError("corrupt", `${quoted(path)} is a damaged GGUF file: ${why}.`, path);
  const tokens = m[VOCAB_TOKENS];
  if (!Array.isArray(tokens) || tokens.length === 0 || tokens.some((t) => typeof t !== "string"))
    throw damaged(`its ${model} tokenizer has no list of token strings (${VOCAB_TOKENS})`);
  const n = tokens.length;
  for (const key of VOCAB_ARRAYS.slice(1)) {
    const values = m[key];
    if (values !== undefined && (!Array.isArray(values) || values.length !== n))
      throw damaged(`${key} has ${Array.isArray(values) ? values.length : "no"} entries for ${n} tokens`);
  }
  for (const name of ["token_embd.weight", "output.weight"]) {
    const t = file.tensors.find((x) => x.name === name);
    if (t && t.dims[1] !== n)
      throw damaged(`its vocabulary has ${n} tokens but ${name} has ${t.dims[1]} rows`);
  }
  const seen = new Map<string, number>();
  (tokens as string[]).forEach((token, id) => {
    const first = seen.get(token);
    if (first !== undefined)
      throw damaged(`token ${id} ${JSON.stringify(token.slice(0, 40))} repeats token ${first}`);
    seen.set(token, id);
  });
  for (const special of SPECIAL_IDS) {
    const id = m[`tokenizer.ggml.${special}_token_id`];
    if (typeof id === "number" && (id < 0 || id >= n))
      throw damaged(`its ${special} token id ${id} is outside its ${n} tokens`);
  }
  if (model === "gpt2") {
    // Byte-level BPE spells every text through these 256 tokens; llama.cpp asserts the newline.
    const missing = gpt2ByteToUnicode().findIndex((ch) => !seen.has(ch));
    if (missing >= 0)
      throw damaged(
        `its byte-level vocabulary lacks the token of byte 0x${missing.toString(16).padStart(2, "0")}`,
      );
  }
}

/**
 * Reads the adapter at `adapterPath` and checks it is a LoRA adapter that fits `base`: same
 * architecture, and every lora_a/lora_b pair matches a base tensor's shape. llama.cpp only
 * says "Failed to initialize LoRA adapter" in these cases. Returns the parsed adapter.
 */
export async function assertAdapterFits(adapterPath: string, base: GgufFile): Promise<GgufFile> {
  const adapter = await readGguf(adapterPath);
  const name = quoted(adapterPath);
  const fail = (why: string) => new GgufError("incompatible_adapter", `${name} ${why}`, adapterPath);
  if (classifyGguf(adapter) !== "adapter" || str(adapter.metadata["adapter.type"]) !== "lora") {
    throw fail("is not a LoRA adapter (it is a GGUF file of another kind).");
  }
  const adapterArch = str(adapter.metadata["general.architecture"]);
  const baseArch = str(base.metadata["general.architecture"]);
  if (adapterArch !== baseArch) {
    throw fail(
      `was made for the ${adapterArch ?? "unknown"} architecture, but the loaded model is ${baseArch ?? "unknown"}.`,
    );
  }
  const alpha = adapter.metadata["adapter.lora.alpha"];
  if (alpha !== undefined && (typeof alpha !== "number" || !Number.isFinite(alpha)))
    throw fail("is damaged: its adapter.lora.alpha is not a number.");
  const baseTensors = new Map(base.tensors.map((t) => [t.name, t]));
  const loraTensors = new Map(adapter.tensors.map((t) => [t.name, t]));
  for (const t of adapter.tensors) {
    // llama.cpp refuses any other tensor ("unexpected suffix"); norm vectors it skips.
    if (t.name.endsWith("_norm.weight")) continue;
    const pair = /\.lora_[ab]$/.exec(t.name);
    if (!pair)
      throw fail(
        `is not a LoRA adapter llama.cpp can use: its tensor ${t.name} is not a lora_a/lora_b weight.`,
      );
    if (!LORA_TYPES.has(t.type))
      throw fail(
        `cannot be used: its tensor ${t.name} has type ${ggmlTypeInfo(t.type)?.name ?? t.type}; LoRA weights must be F32, F16, BF16 or Q8_0.`,
      );
    const other = `${t.name.slice(0, -"lora_a".length)}${pair[0] === ".lora_a" ? "lora_b" : "lora_a"}`;
    if (!loraTensors.has(other))
      throw fail(`is damaged: ${t.name} has no matching ${other.slice(-6)} tensor.`);
  }
  let pairs = 0;
  for (const a of adapter.tensors) {
    if (!a.name.endsWith(".lora_a")) continue;
    const target = a.name.slice(0, -".lora_a".length);
    const b = loraTensors.get(`${target}.lora_b`);
    const w = baseTensors.get(target);
    if (!b) throw fail(`is damaged: ${a.name} has no matching lora_b tensor.`);
    if (!w) throw fail(`does not fit the loaded model: it changes ${target}, which the model does not have.`);
    const [nIn, rank] = a.dims;
    const [rankB, nOut] = b.dims;
    // Expert tensors (…_exps, [in, out, experts]) carry one LoRA pair per expert in a third dim.
    const experts = w.dims[2] ?? 1;
    const adapterExperts = [a.dims[2] ?? 1, b.dims[2] ?? 1];
    if (
      nIn !== w.dims[0] ||
      nOut !== w.dims[1] ||
      rank !== rankB ||
      adapterExperts.some((n) => n !== experts)
    ) {
      const adapterShape =
        experts > 1 || adapterExperts[0]! > 1 ? [nIn, nOut, adapterExperts[0]] : [nIn, nOut];
      throw fail(
        `does not fit the loaded model: ${target} is [${w.dims.join(", ")}] in the model but ` +
          `[${adapterShape.join(", ")}] in the adapter (it was made for a different base model).`,
      );
    }
    pairs++;
  }
  if (pairs === 0) throw fail("contains no LoRA weights.");
  return adapter;
}
