import { basename, extname } from "node:path";
import type { z } from "zod";
import { ApiError } from "../../api";
import {
  ManifestReadError,
  readManifestFile,
  type ManifestFile,
  type ToolCallFormatSchema,
} from "../../../common/adapter-manifest";

/**
 * The app's side of the adapter manifest (common/adapter-manifest.ts, the one schema): reading
 * it beside an adapter as the API's errors, and what the database keeps of it.
 */

/** What the database keeps of a manifest (manifest_json): complete, defaults filled in. */
export interface StoredManifest {
  defaultScale: number;
  routingExamples: string[];
  /** The adapter's tool-call syntax, when its manifest gives one. */
  toolCallFormat?: z.output<typeof ToolCallFormatSchema>;
  base: { architecture: string; embeddingLength: number; baseName: string | null; baseSha256: string | null };
  lineage: { parent: string | null; trainedFrom: string; [detail: string]: unknown };
}

/**
 * Reads the manifest beside `adapterPath`; null when there is none. A manifest that exists
 * but is not valid JSON or misses required fields is ApiError("invalid_input"): installing the
 * adapter without it would silently drop its routing examples.
 */
export async function readManifestBeside(adapterPath: string): Promise<ManifestFile | null> {
  try {
    return await readManifestFile(adapterPath);
  } catch (err) {
    if (err instanceof ManifestReadError) throw new ApiError("invalid_input", err.message);
    throw err;
  }
}

/** An id from a file name: `Coding Helper v2.gguf` → `Coding-Helper-v2`. */
export function idFromFileName(path: string): string {
  const stem = basename(path, extname(path))
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 64)
    .replace(/[-.]+$/, "");
  return stem || "adapter";
}
