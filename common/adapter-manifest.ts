/**
 * The adapter manifest, the one schema of it: the file that travels beside an adapter
 * (`<name>.json`). The app reads it when it installs an adapter (electron/core/adapters), the
 * fixture writer (native/gguf/fixtures.ts) and the trainer (cloud/training/trained-manifest.ts)
 * write it. Everything but id/name/domain/version is optional so that hand-written manifests
 * work; what is missing gets a default. The writers write every field (AdapterManifest).
 */
import { basename, dirname, extname, join } from "node:path";
import { z } from "zod";
import { DomainName } from "./domains";
import { isNotRegularFileError, readRegularTextFile } from "./files/regular-file";
import { describeIssues } from "./zod-issues";

/** Adapter ids become file names and /v1 model ids: keep them plain. */
export const ADAPTER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Ids that mean something else to /v1 and to AdapterSelection. */
export const RESERVED_ADAPTER_IDS: readonly string[] = ["auto", "base"];

/**
 * A ToolCallFormat (common/engine-protocol.ts), as engine requests and adapter manifests carry
 * it: the Agent specialist trained to answer `{"tool":"set_timer","arguments":{…}}` calls tools
 * in that form, grammar-constrained to the tools' schemas, instead of the chat template's.
 */
export const ToolCallFormatSchema = z
  .object({
    callPrefix: z.string().min(1).max(256),
    paramsPrefix: z.string().max(256),
    callSuffix: z.string().max(256),
    resultPrefix: z.string().max(256),
    resultSuffix: z.string().max(256),
    /** false: the adapter learned its tools; "compact": one short line per tool (tool-docs.ts). */
    documented: z.union([z.boolean(), z.literal("compact")]),
  })
  .strict();

/** The base model an adapter was trained on. */
const ManifestBase = z.object({
  architecture: z.string(),
  embeddingLength: z.number().int().nonnegative(),
  baseName: z.string().nullable(),
  baseSha256: z.string(),
});

const Sha256 = z.string().regex(/^[0-9a-fA-F]{64}$/);
const SizeBytes = z.number().int().nonnegative();

export const ManifestFile = z.object({
  id: z.string().regex(ADAPTER_ID_PATTERN, "letters, digits, '.', '_' or '-', at most 64"),
  name: z.string().min(1).max(200),
  /** The domain it specialises in: common/domains.ts is the rule for its name. */
  domain: DomainName,
  version: z.string().min(1).max(64),
  description: z.string().max(4000).default(""),
  sha256: Sha256.optional(),
  sizeBytes: SizeBytes.optional(),
  base: ManifestBase.extend({
    baseName: ManifestBase.shape.baseName.optional(),
    baseSha256: ManifestBase.shape.baseSha256.optional(),
  }).optional(),
  defaultScale: z.number().min(0).max(2).default(1),
  routingExamples: z.array(z.string().max(4000)).max(1000).default([]),
  toolCallFormat: ToolCallFormatSchema.optional(),
  /**
   * Where the version came from. The trainer adds how it was made (dataset sha256 and counts,
   * hyperparameters, seed, loss curve, held-out loss, trainer/torch/harness versions): kept as is.
   */
  lineage: z.object({ parent: z.string().nullable(), trainedFrom: z.string() }).loose().optional(),
});
export type ManifestFile = z.output<typeof ManifestFile>;

/** A manifest as the fixture writer and the trainer write it: every field present. */
export const CompleteManifest = ManifestFile.extend({
  sha256: Sha256,
  sizeBytes: SizeBytes,
  base: ManifestBase,
  lineage: ManifestFile.shape.lineage.unwrap(),
});
export type AdapterManifest = z.output<typeof CompleteManifest>;

/** `/x/coding.gguf` → `/x/coding.json`. */
export function manifestPathFor(adapterPath: string): string {
  return join(dirname(adapterPath), `${basename(adapterPath, extname(adapterPath))}.json`);
}

/** A manifest that exists but cannot be read or is not valid; the message names only the file. */
export class ManifestReadError extends Error {
  override readonly name = "ManifestReadError";
}

/**
 * Reads the manifest beside `adapterPath`; null when there is none. A manifest that exists
 * but is not valid JSON or misses required fields is an error (ManifestReadError): installing
 * the adapter without it would silently drop its routing examples.
 */
export async function readManifestFile(adapterPath: string): Promise<ManifestFile | null> {
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
    throw new ManifestReadError(`Cannot read the adapter's manifest ${basename(path)}: ${why}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ManifestReadError(`The adapter's manifest ${basename(path)} is not valid JSON.`);
  }
  const parsed = ManifestFile.safeParse(json);
  if (!parsed.success) {
    throw new ManifestReadError(
      `The adapter's manifest ${basename(path)} is invalid: ${describeIssues(parsed.error)}`,
    );
  }
  return parsed.data;
}
