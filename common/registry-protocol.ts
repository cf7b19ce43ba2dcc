/**
 * The adapter registry's index format, shared by the cloud service (which serves it) and the
 * app's AdapterUpdates (which polls it). Imports nothing of the project but zod and the domain
 * name rule (domains.ts).
 */
import { z } from "zod";
import { DomainName } from "./domains";

export const REGISTRY_FORMAT = 1;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** One published adapter version. */
export const RegistryEntry = z.object({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/),
  version: z.string().regex(/^[0-9A-Za-z.+-]{1,64}$/),
  name: z.string().min(1).max(200),
  domain: z.string().min(1).max(64),
  description: z.string().max(4000).default(""),
  sha256: Sha256,
  sizeBytes: z.number().int().positive(),
  /** Path on the service (`/v1/registry/files/<file>`) or an absolute URL. Supports HTTP Range. */
  url: z.string().min(1).max(2000),
  /**
   * The base model it was trained on: what it is compatible with. Versions are per base: the
   * same adapter id has its own versions for each base a team trains it for (see baseKey).
   */
  base: z.object({
    architecture: z.string().max(64),
    embeddingLength: z.number().int().nonnegative(),
    baseName: z.string().max(200).nullable().optional(),
    baseSha256: Sha256.optional(),
    /**
     * Other files of the same weights it fits as well (other quantizations of that base,
     * named by their sha256): an app running one of them is offered this version too.
     */
    compatibleSha256: z.array(Sha256).max(64).optional(),
  }),
  defaultScale: z.number().min(0).max(2).default(1),
  routingExamples: z.array(z.string().max(4000)).max(1000).default([]),
  lineage: z.object({
    parent: z.string().max(64).nullable(),
    trainedFrom: z.string().max(500),
    /**
     * How the version was made, for people and audits: the trainer's lineage (dataset sha256 and
     * counts, hyperparameters, seed, loss curve, held-out loss, trainer and torch versions,
     * harness version) and the cloud-side contract verdict. Optional: hand-made versions have none.
     */
    details: z.record(z.string(), z.unknown()).optional(),
  }),
  releaseNotes: z.string().max(10_000).default(""),
  publishedAt: z.number().int(),
  /**
   * The publisher's Ed25519 signature of the entry (common/registry-signature.ts), base64url.
   * The app installs only entries signed by the key it pinned for the registry.
   */
  signature: z.string().max(200).optional(),
});
export type RegistryEntry = z.infer<typeof RegistryEntry>;

/**
 * What an entry's versions are unique under: its base file's sha256, or for an entry that names
 * none (hand-built, older publishers), the architecture and width it fits.
 */
export function baseKey(entry: Pick<RegistryEntry, "base">): string {
  const b = entry.base;
  return b.baseSha256 ?? `${b.architecture}/${b.embeddingLength}`;
}

/**
 * Whether an entry is for the base file with this sha256: made on it or on a quantization named
 * compatible. An entry that names no base file is offered to every base (the app's install
 * checks still refuse one whose architecture or shapes do not fit).
 */
export function fitsBase(entry: Pick<RegistryEntry, "base">, sha256: string): boolean {
  const b = entry.base;
  return b.baseSha256 === undefined || b.baseSha256 === sha256 || (b.compatibleSha256 ?? []).includes(sha256);
}

/** `GET /v1/registry/index.json?base=<sha256>`: only the entries fitsBase says are for that base. */
export const INDEX_BASE_PARAM = "base";
export const BaseSha256 = Sha256;

export const RegistryIndex = z.object({
  format: z.literal(REGISTRY_FORMAT),
  generatedAt: z.number().int(),
  adapters: z.array(RegistryEntry),
});
export type RegistryIndex = z.infer<typeof RegistryIndex>;

/**
 * What a publisher sends before the file (the body's first MANIFEST_BYTES_HEADER bytes, JSON):
 * the entry minus what the service computes (sha256 is optional and, when given, must match the body).
 */
export const PublishManifest = RegistryEntry.omit({
  sizeBytes: true,
  url: true,
  publishedAt: true,
  signature: true,
}).extend({
  sha256: Sha256.optional(),
  /**
   * Checked here, where a domain first enters the service: a name the cloud's feedback check and
   * export paths would refuse is refused at publishing (common/domains.ts). Entries already in
   * an index keep being read as they are (RegistryEntry).
   */
  domain: DomainName,
});
export type PublishManifest = z.input<typeof PublishManifest>;

/**
 * POST /v1/registry/publish: the body is the manifest's UTF-8 JSON followed by the adapter file;
 * this header gives the manifest's length in bytes. (A manifest in a header hit the server's
 * 16 KiB header limit once a cycle's lineage carried a long loss curve.)
 */
export const MANIFEST_BYTES_HEADER = "x-macaron-manifest-bytes";
/** The largest manifest the registry reads (lineage included). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** GET /v1/registry/public-key: the key the service signs entries with. */
export const RegistryPublicKey = z.object({ algorithm: z.literal("ed25519"), key: z.string() });
