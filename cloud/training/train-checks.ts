/** The checks a training run makes before it tokenizes anything: options, base, parent. */
import { ADAPTER_ID_PATTERN, readManifestFile, RESERVED_ADAPTER_IDS } from "../../common/adapter-manifest";
import { sha256File } from "../../common/hashing";
import {
  assertAdapterFits,
  assertLoadableModel,
  isGgufError,
  summarizeModel,
  type GgufFile,
} from "../../native/gguf/reader";
import type { TrainOptions } from "./train-options";
import { TrainError } from "./train-error";

function fail(code: "bad_args", message: string): never {
  throw new TrainError(code, message);
}

/** Throws TrainError "bad_args" for an option the trainer would refuse or misread. */
export function checkOptions(o: TrainOptions): void {
  if (!ADAPTER_ID_PATTERN.test(o.id) || RESERVED_ADAPTER_IDS.includes(o.id))
    fail(
      "bad_args",
      `--id "${o.id}" must be a plain name (letters, digits, '.', '_' or '-') and not auto/base.`,
    );
  if (o.epochs !== undefined && o.steps !== undefined)
    fail("bad_args", "Give --epochs or --steps, not both.");
  const positive = { rank: o.rank, epochs: o.epochs, steps: o.steps, batchSize: o.batchSize, nproc: o.nproc };
  for (const [name, v] of Object.entries({ ...positive, threads: o.threads, maxLength: o.maxLength })) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1))
      fail("bad_args", `${name} must be a positive integer, not ${v}.`);
  }
  for (const [name, v] of Object.entries({ lr: o.lr, alpha: o.alpha, maxSeconds: o.maxSeconds })) {
    if (v !== undefined && !(Number.isFinite(v) && v > 0))
      fail("bad_args", `${name} must be a positive number.`);
  }
}

/** `1.2.3` → `1.3.0`: a retrained adapter is a new minor version of its parent. */
export function nextVersion(parent: string): string {
  const m = /^(\d+)\.(\d+)\.\d+/.exec(parent);
  if (!m) fail("bad_args", `Cannot derive a version from the parent's "${parent}": give --version.`);
  return `${m[1]}.${Number(m[2]) + 1}.0`;
}

/** The base's parsed GGUF and summary; TrainError "bad_base" when it is missing or not a model. */
export async function checkBase(path: string) {
  try {
    const file = await assertLoadableModel(path);
    return { file, summary: summarizeModel(file, path) };
  } catch (err) {
    if (isGgufError(err)) throw new TrainError("bad_base", `Base model: ${err.message}`);
    throw err;
  }
}

/**
 * The parent adapter's sha256 and manifest (null when it has none or it is unreadable);
 * TrainError "bad_parent" when it is not a LoRA adapter that fits `base`.
 */
export async function checkParent(path: string, base: GgufFile) {
  try {
    await assertAdapterFits(path, base);
    return { sha256: await sha256File(path), manifest: await readManifestFile(path).catch(() => null) };
  } catch (err) {
    if (isGgufError(err)) throw new TrainError("bad_parent", `Parent adapter: ${err.message}`);
    throw err;
  }
}
