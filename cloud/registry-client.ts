/**
 * The adapter registry from the publisher's side (the improvement cycle): read the index, pick
 * a domain's live version, download a file with its sha256 checked, publish a new version.
 */
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import {
  INDEX_BASE_PARAM,
  fitsBase,
  MANIFEST_BYTES_HEADER,
  RegistryEntry,
  RegistryIndex,
  type PublishManifest,
} from "../common/registry-protocol";

export interface RegistryAccess {
  /** Base URL of the service, e.g. http://127.0.0.1:8787. */
  url: string;
  adminKey: string;
}

/** GET /v1/registry/index.json, validated; with `baseSha256`, that base's entries only. */
export async function fetchRegistryIndex(
  url: string,
  signal?: AbortSignal,
  baseSha256?: string,
): Promise<RegistryIndex> {
  const where = new URL("/v1/registry/index.json", url);
  if (baseSha256) where.searchParams.set(INDEX_BASE_PARAM, baseSha256);
  const res = await fetch(where, { signal });
  if (!res.ok) throw new Error(`registry index: HTTP ${res.status}`);
  return RegistryIndex.parse(await res.json());
}

/**
 * The version of adapter `id` that is live on the registry side for the base file with
 * `baseSha256`: the one published last for that file (or a quantization named compatible), else
 * the last that names no base file. Another base's version is never the parent: it was trained
 * on other weights. Without `baseSha256`, the last published of any base. Null when none.
 */
export function liveEntry(index: RegistryIndex, id: string, baseSha256?: string): RegistryEntry | null {
  const latest = (keep: (e: RegistryEntry) => boolean): RegistryEntry | null => {
    let live: RegistryEntry | null = null;
    for (const e of index.adapters)
      if (e.id === id && keep(e) && (!live || e.publishedAt >= live.publishedAt)) live = e;
    return live;
  };
  if (baseSha256 === undefined) return latest(() => true);
  return (
    latest((e) => e.base.baseSha256 !== undefined && fitsBase(e, baseSha256)) ??
    latest((e) => e.base.baseSha256 === undefined)
  );
}

/** Downloads `entry`'s file to `dest`; throws when its sha256 is not the indexed one. */
export async function downloadEntry(url: string, entry: RegistryEntry, dest: string): Promise<void> {
  const res = await fetch(new URL(entry.url, url));
  if (!res.ok) throw new Error(`download ${entry.id} ${entry.version}: HTTP ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const sha = createHash("sha256").update(bytes).digest("hex");
  if (sha !== entry.sha256)
    throw new Error(`download ${entry.id} ${entry.version}: sha256 mismatch (${sha} ≠ ${entry.sha256})`);
  await writeFile(dest, bytes);
}

/** POST one version to the registry; returns its index entry. */
export async function publishAdapter(
  access: RegistryAccess,
  manifest: PublishManifest,
  file: Uint8Array,
): Promise<RegistryEntry> {
  const json = Buffer.from(JSON.stringify(manifest), "utf8");
  const res = await fetch(new URL("/v1/registry/publish", access.url), {
    method: "POST",
    headers: {
      authorization: `Bearer ${access.adminKey}`,
      "content-type": "application/octet-stream",
      [MANIFEST_BYTES_HEADER]: String(json.length),
    },
    body: Buffer.concat([json, file]),
  });
  if (!res.ok)
    throw new Error(`publish ${manifest.id} ${manifest.version}: HTTP ${res.status} ${await res.text()}`);
  return RegistryEntry.parse(await res.json());
}

/** An adapter manifest as `npm run train` (or the fixtures) write it beside the GGUF. */
export type ManifestOnDisk<L extends Lineage = Lineage> = Omit<PublishManifest, "lineage"> & {
  sizeBytes?: number;
  lineage: L;
};
type Lineage = { parent: string | null; trainedFrom: string };

/**
 * What the registry is sent for a manifest: its entry fields, with every lineage field beyond
 * parent and trainedFrom (the trainer's record) under lineage.details.
 */
export function publishManifestOf<L extends Lineage>(
  m: ManifestOnDisk<L>,
): PublishManifest & { lineage: { details: Record<string, unknown> } } {
  const { sizeBytes: _size, lineage, ...entry } = m;
  const { parent, trainedFrom, ...details } = lineage;
  return { ...entry, lineage: { parent, trainedFrom, details } };
}
