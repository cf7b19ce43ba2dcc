import { basename, extname } from "node:path";
import type { ModelInfo } from "../../common/model-info";
import { GgufError } from "./gguf-error";
import { readGguf, type GgufFile, type GgufMetadataValue } from "./gguf-parser";

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
  const file = await readGguf(path);
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
  return file;
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
  const baseTensors = new Map(base.tensors.map((t) => [t.name, t]));
  const loraTensors = new Map(adapter.tensors.map((t) => [t.name, t]));
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
