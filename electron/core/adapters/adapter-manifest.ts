import { basename, dirname, extname, join } from "node:path";
import { z } from "zod";
import { ToolCallFormatSchema } from "../../../native/engine/request-schema";
import { ApiError } from "../../api";
import { describeIssues } from "../../../common/zod-issues";
import { isNotRegularFileError, readRegularTextFile } from "../../../common/files/regular-file";

/**
 * The manifest that travels beside an adapter file (`<name>.json`, the format written by
 * native/gguf/fixtures.ts). Everything but id/name/domain/version is optional so that
 * hand-written manifests work; what is missing gets a default.
 */

/** Adapter ids become file names and /v1 model ids: keep them plain. */
export const ADAPTER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Ids that mean something else to /v1 and to AdapterSelection. */
export const RESERVED_ADAPTER_IDS: readonly string[] = ["auto", "base"];

/**
 * An adapter's own tool-call syntax (common/engine-protocol.ts ToolCallFormat): the Agent
 * specialist trained to answer `{"tool":"set_timer","arguments":{…}}` calls tools in that form,
 * grammar-constrained to the tools' schemas, instead of the chat template's.
 */
export const ToolCallFormatManifest = ToolCallFormatSchema;

export const ManifestFile = z.object({
  id: z.string().regex(ADAPTER_ID_PATTERN, "letters, digits, '.', '_' or '-', at most 64"),
  name: z.string().min(1).max(200),
  domain: z.string().min(1).max(64),
  version: z.string().min(1).max(64),
  description: z.string().max(4000).default(""),
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .optional(),
  sizeBytes: z.number().int().nonnegative().optional(),
  base: z
    .object({
      architecture: z.string(),
      embeddingLength: z.number().int().nonnegative(),
      baseName: z.string().nullable().optional(),
      baseSha256: z.string().optional(),
    })
    .optional(),
  defaultScale: z.number().min(0).max(2).default(1),
  routingExamples: z.array(z.string().max(4000)).max(1000).default([]),
  toolCallFormat: ToolCallFormatManifest.optional(),
  /**
   * Where the version came from. The trainer adds how it was made (dataset sha256 and counts,
   * hyperparameters, seed, loss curve, held-out loss, trainer/torch/harness versions): kept as is.
   */
  lineage: z.object({ parent: z.string().nullable(), trainedFrom: z.string() }).loose().optional(),
});
export type ManifestFile = z.output<typeof ManifestFile>;

/** What the database keeps of a manifest (manifest_json): complete, defaults filled in. */
export interface StoredManifest {
  defaultScale: number;
  routingExamples: string[];
  /** The adapter's tool-call syntax, when its manifest gives one. */
  toolCallFormat?: z.output<typeof ToolCallFormatManifest>;
  base: { architecture: string; embeddingLength: number; baseName: string | null; baseSha256: string | null };
  lineage: { parent: string | null; trainedFrom: string; [detail: string]: unknown };
}

/** `/x/coding.gguf` → `/x/coding.json`. */
export function manifestPathFor(adapterPath: string): string {
  return join(dirname(adapterPath), `${basename(adapterPath, extname(adapterPath))}.json`);
}

/**
 * Reads the manifest beside `adapterPath`; null when there is none. A manifest that exists
 * but is not valid JSON or misses required fields is an error: installing the adapter
 * without it would silently drop its routing examples.
 */
export async function readManifestBeside(adapterPath: string): Promise<ManifestFile | null> {
  const path = manifestPathFor(adapterPath);
  let text: string;
  try {
    // A FIFO or device named like a manifest is refused at once (never opened blocking).
    text = await readRegularTextFile(path, basename(path));
  } catch (err) {
    if (isNotRegularFileError(err) && err.reason === "missing") return null;
    // Only the file's name: the message of an fs error would carry the whole resolved path.
    const why = isNotRegularFileError(err)
      ? err.message
      : ((err as NodeJS.ErrnoException).code ?? "I/O error");
    throw new ApiError("invalid_input", `Cannot read the adapter's manifest ${basename(path)}: ${why}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_input", `The adapter's manifest ${basename(path)} is not valid JSON.`);
  }
  const parsed = ManifestFile.safeParse(json);
  if (!parsed.success) {
    throw new ApiError(
      "invalid_input",
      `The adapter's manifest ${basename(path)} is invalid: ${describeIssues(parsed.error)}`,
    );
  }
  return parsed.data;
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
