import { basename } from "node:path";
import { ApiError } from "../../api";
import { sha256File } from "../../../common/hashing";
import {
  assertAdapterFits,
  classifyGguf,
  isGgufError,
  readGguf,
  type GgufFile,
} from "../../../native/gguf/reader";
import { checkAdapterFile } from "../adapters/adapter-files";
import type { ManifestFile } from "../../../common/adapter-manifest";
import type { VersionManifest } from "./release-store";

const invalid = (message: string): ApiError => new ApiError("invalid_input", message);

/** A version file that passed validation against the base, not yet copied. */
export interface CheckedVersionFile {
  sha256: string;
  sizeBytes: number;
}

/**
 * Validate a LoRA file as a new version: a GGUF LoRA adapter whose every tensor fits `base`,
 * with the sha256 its manifest (or the registry index) promises. Throws
 * ApiError("invalid_input") with the reason; nothing is written.
 */
export async function checkVersionFile(
  path: string,
  manifest: ManifestFile,
  base: GgufFile,
  /** The path as the caller gave it: what messages name (never the server's working directory). */
  shown: string = basename(path),
): Promise<CheckedVersionFile> {
  const info = await checkAdapterFile(path, shown);
  let file: GgufFile;
  try {
    file = await readGguf(path);
  } catch (err) {
    if (isGgufError(err)) throw invalid(err.message);
    throw err;
  }
  if (classifyGguf(file) !== "adapter")
    throw invalid(`"${basename(path)}" is a base model, not a LoRA adapter.`);
  if (file.metadata["adapter.type"] !== "lora") throw invalid(`"${basename(path)}" is not a LoRA adapter.`);
  try {
    await assertAdapterFits(path, base);
  } catch (err) {
    if (isGgufError(err))
      throw invalid(
        `Version ${manifest.version} of "${manifest.id}" does not fit the loaded model: ${err.message}`,
      );
    throw err;
  }
  const sha256 = await sha256File(path);
  if (manifest.sha256 && manifest.sha256.toLowerCase() !== sha256) {
    throw invalid(
      `Version ${manifest.version} of "${manifest.id}" does not match its manifest: sha256 ${sha256.slice(0, 12)}…, ` +
        `expected ${manifest.sha256.slice(0, 12).toLowerCase()}…. The file may be damaged or replaced.`,
    );
  }
  return { sha256, sizeBytes: info.size };
}

/** The manifest a version row keeps, with defaults filled in. */
export function versionManifest(m: ManifestFile, releaseNotes: string, arch: string): VersionManifest {
  return {
    name: m.name,
    domain: m.domain,
    description: m.description,
    releaseNotes,
    defaultScale: m.defaultScale,
    routingExamples: m.routingExamples,
    base: m.base
      ? {
          architecture: m.base.architecture,
          embeddingLength: m.base.embeddingLength,
          baseName: m.base.baseName ?? null,
          baseSha256: m.base.baseSha256 ?? null,
        }
      : { architecture: arch, embeddingLength: 0, baseName: null, baseSha256: null },
    lineage: m.lineage ?? { parent: null, trainedFrom: "unknown" },
  };
}
