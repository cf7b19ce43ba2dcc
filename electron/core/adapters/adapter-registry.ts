import { existsSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { ApiError, type AdapterInfo } from "../../api";
import { sha256File } from "../../../common/hashing";
import {
  assertAdapterFits,
  classifyGguf,
  isGgufError,
  readGguf,
  type GgufFile,
  type GgufMetadataValue,
} from "../../../native/gguf/reader";
import { convertPeftToFile, isPeftError, isPeftFolder } from "../../../native/gguf/peft-lora";
import type { EventBus } from "../events/event-bus";
import { idFromFileName, readManifestBeside, type StoredManifest } from "./manifest-reader";
import { ADAPTER_ID_PATTERN, RESERVED_ADAPTER_IDS } from "../../../common/adapter-manifest";
import { checkAdapterFile, copyIntoFolder } from "./adapter-files";
import type { AdapterStore, InstalledAdapter } from "./adapter-store";

/** Whether an adapter fits the loaded base model; null fits = no model loaded. */
export interface AdapterFit {
  fits: boolean | null;
  reason: string | null;
}

export interface AdapterRegistryDeps {
  store: AdapterStore;
  /** Installed copies live in `<dataDir>/adapters`. */
  dataDir: string;
  events: EventBus;
  /** Path of the loaded base model, or null. */
  basePath: () => string | null;
  log?: (message: string, err: unknown) => void;
}

interface BaseModel {
  path: string;
  name: string;
  file: GgufFile;
}

const invalid = (message: string): ApiError => new ApiError("invalid_input", message);
const quoted = (path: string): string => `"${basename(path)}"`;

function str(value: GgufMetadataValue | undefined): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function num(value: GgufMetadataValue | undefined): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/**
 * The installed LoRA adapters: validated before anything is written, copied into the data
 * folder (temp file + rename), listed with whether they fit the loaded base, switched on and
 * off, rescaled, removed. Emits `adapters.changed` after every change.
 */
export class AdapterRegistry {
  readonly dir: string;
  private readonly log: (message: string, err: unknown) => void;
  /** Installs run one at a time: the duplicate checks must see the previous install's row. */
  private installs: Promise<unknown> = Promise.resolve();
  private base: { key: string; model: Promise<BaseModel | null> } | null = null;
  /** Fit results against the current base, by adapter id + sha256. */
  private fits = new Map<string, Promise<AdapterFit>>();

  private readonly changeObservers: (() => void)[] = [];

  constructor(private readonly deps: AdapterRegistryDeps) {
    this.dir = join(deps.dataDir, "adapters");
    this.log = deps.log ?? console.error;
  }

  /**
   * Validate the adapter at `path` and install a copy. Throws ApiError("invalid_input") with
   * the reason when the file is missing, not a GGUF, a base model, made for another base,
   * does not match its manifest, or duplicates an installed adapter; nothing is written then.
   */
  install(path: string): Promise<AdapterInfo> {
    const run = this.installs.then(() => this.installNow(resolve(path), path));
    this.installs = run.catch(() => undefined);
    return run;
  }

  /** Every installed adapter, with its fit against the loaded base. */
  async list(): Promise<AdapterInfo[]> {
    const adapters = this.deps.store.list();
    const fits = await Promise.all(adapters.map((a) => this.fitOf(a)));
    return adapters.map((a, i) => toInfo(a, fits[i] ?? { fits: null, reason: null }));
  }

  /** The installed adapter `id`, or null. */
  get(id: string): InstalledAdapter | null {
    return this.deps.store.get(id);
  }

  /** Installed adapters with their fit, for routing. */
  async withFits(): Promise<{ adapter: InstalledAdapter; fit: AdapterFit }[]> {
    const adapters = this.deps.store.list();
    return Promise.all(adapters.map(async (adapter) => ({ adapter, fit: await this.fitOf(adapter) })));
  }

  /** Switch an adapter on/off or change its scale. Throws not_found for an unknown id. */
  async update(id: string, change: { enabled?: boolean; scale?: number }): Promise<AdapterInfo> {
    const current = this.deps.store.get(id);
    if (!current) throw notInstalled(id);
    const scale = change.scale ?? current.scale;
    if (!(scale >= 0 && scale <= 2)) throw invalid(`The scale must be from 0 to 2, got ${scale}.`);
    this.deps.store.setSwitches(id, change.enabled ?? current.enabled, scale);
    this.changed();
    const updated = this.deps.store.get(id) ?? current;
    return toInfo(updated, await this.fitOf(updated));
  }

  /**
   * Remove an adapter (row and file). Conversations pinned to it keep their pin; their next
   * turn reports it as not installed. False when it was not installed.
   */
  async remove(id: string): Promise<boolean> {
    const adapter = this.deps.store.get(id);
    if (!adapter || !this.deps.store.delete(id)) return false;
    await rm(adapter.filePath, { force: true }).catch((err: unknown) =>
      // The row is gone, so the file is unused; a locked file (Windows) is only wasted space.
      this.log(`could not delete ${adapter.filePath}`, err),
    );
    this.changed();
    return true;
  }

  /** One more turn answered with each of `ids`. Synchronous: call it in the turn's transaction. */
  countUsage(ids: readonly string[]): void {
    this.deps.store.countUsage(ids);
  }

  /** Number of installed adapters. */
  get count(): number {
    return this.deps.store.count;
  }

  /** The installed adapters' rows (bundled-adapters.ts refreshes the demo's manifests there). */
  get store(): AdapterStore {
    return this.deps.store;
  }

  /** Whether `adapter` fits the loaded base (cached per base file and adapter). */
  async fitOf(adapter: InstalledAdapter): Promise<AdapterFit> {
    if (!existsSync(adapter.filePath)) {
      return { fits: false, reason: `The adapter file is missing: ${adapter.filePath}` };
    }
    const base = await this.loadedBase();
    if (!base) return { fits: null, reason: null };
    const key = `${adapter.id}\u0000${adapter.sha256}`;
    let fit = this.fits.get(key);
    if (!fit) {
      fit = assertAdapterFits(adapter.filePath, base.file).then(
        (): AdapterFit => ({ fits: true, reason: null }),
        (err: unknown): AdapterFit => ({
          fits: false,
          reason: isGgufError(err) ? err.message : `Cannot check the adapter: ${String(err)}`,
        }),
      );
      this.fits.set(key, fit);
    }
    return fit;
  }

  /** `src` is the resolved path, `given` the path as the caller wrote it (what messages name). */
  private async installNow(src: string, given: string): Promise<AdapterInfo> {
    if (await isPeftFolder(src)) return this.installPeft(src);
    return this.installFile(src, given, null);
  }

  /**
   * A Hugging Face PEFT LoRA folder: converted for the loaded base (native/gguf/peft-lora.ts,
   * which refuses what does not fit it, with the reason) into a temp GGUF, then installed as
   * that file with every check of a GGUF install. Its id is the folder's name.
   */
  private async installPeft(folder: string): Promise<AdapterInfo> {
    const base = await this.loadedBase();
    if (!base)
      throw invalid(
        `${quoted(folder)} is a PEFT adapter folder: load the base model it was made for first, then install it (it is converted for the loaded model).`,
      );
    const temp = await mkdtemp(join(tmpdir(), "macaron-peft-"));
    try {
      const out = join(temp, "adapter.gguf");
      let converted: Awaited<ReturnType<typeof convertPeftToFile>>;
      try {
        converted = await convertPeftToFile({
          peftDir: folder,
          base: base.file,
          out,
          name: basename(folder),
        });
      } catch (err) {
        if (!isPeftError(err) && !isGgufError(err)) throw err;
        throw invalid(`${err.message} The loaded model is "${base.name}" (${basename(base.path)}).`);
      }
      for (const warning of converted.warnings) this.log(`PEFT adapter ${folder}: ${warning}`, null);
      const from = converted.config.baseModel ? ` (made for ${converted.config.baseModel})` : "";
      return await this.installFile(out, out, {
        id: idFromFileName(`${basename(folder)}.gguf`),
        description: `Converted from the PEFT LoRA folder "${basename(folder)}"${from}.`,
      });
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  private async installFile(
    src: string,
    given: string,
    converted: { id: string; description: string } | null,
  ): Promise<AdapterInfo> {
    const info = await checkAdapterFile(src, given);

    let file: GgufFile;
    try {
      file = await readGguf(src);
    } catch (err) {
      if (isGgufError(err)) throw invalid(err.message);
      throw err;
    }
    if (classifyGguf(file) !== "adapter") {
      throw invalid(
        `${quoted(src)} is a base model, not a LoRA adapter. Open it as a model instead, or pick an adapter file.`,
      );
    }
    const kind = str(file.metadata["adapter.type"]);
    if (kind !== "lora")
      throw invalid(`${quoted(src)} is a ${kind ?? "unknown"} adapter; only LoRA adapters are supported.`);

    const manifest = await readManifestBeside(src);
    const fileArch = str(file.metadata["general.architecture"]);
    if (manifest?.base && fileArch && manifest.base.architecture !== fileArch) {
      // The manifest's base is what the Adapters panel shows: it must not say another family.
      throw invalid(
        `${quoted(src)} does not match its manifest: the file is a ${fileArch} adapter, the manifest says ` +
          `it is for a ${manifest.base.architecture} base. The manifest may belong to another adapter.`,
      );
    }
    const base = await this.loadedBase();
    if (base) {
      try {
        await assertAdapterFits(src, base.file);
      } catch (err) {
        if (!isGgufError(err)) throw err;
        throw invalid(`${err.message} The loaded model is "${base.name}" (${basename(base.path)}).`);
      }
    }

    const sha256 = await sha256File(src);
    if (manifest?.sha256 && manifest.sha256.toLowerCase() !== sha256) {
      throw invalid(
        `${quoted(src)} does not match its manifest: its sha256 is ${sha256.slice(0, 12)}…, the manifest says ` +
          `${manifest.sha256.slice(0, 12).toLowerCase()}…. The file may be damaged or replaced.`,
      );
    }

    const id = manifest?.id ?? converted?.id ?? idFromFileName(src);
    if (!ADAPTER_ID_PATTERN.test(id) || RESERVED_ADAPTER_IDS.includes(id)) {
      throw invalid(
        `"${id}" cannot be an adapter id (reserved or not a plain name). Rename the file or set "id" in its manifest.`,
      );
    }
    const existing = this.deps.store.get(id);
    if (existing) {
      throw invalid(
        `An adapter "${id}" is already installed (version ${existing.version}). Remove it first to install this one.`,
      );
    }
    const twin = this.deps.store.findBySha256(sha256);
    if (twin) throw invalid(`This file is already installed as "${twin.id}" (version ${twin.version}).`);

    const arch = str(file.metadata["general.architecture"]) ?? "unknown";
    const stored: StoredManifest = {
      defaultScale: manifest?.defaultScale ?? 1,
      routingExamples: manifest?.routingExamples ?? [],
      ...(manifest?.toolCallFormat ? { toolCallFormat: manifest.toolCallFormat } : {}),
      base: manifest?.base
        ? {
            architecture: manifest.base.architecture,
            embeddingLength: manifest.base.embeddingLength,
            baseName: manifest.base.baseName ?? null,
            baseSha256: manifest.base.baseSha256 ?? null,
          }
        : {
            architecture: arch,
            embeddingLength: base ? num(base.file.metadata[`${arch}.embedding_length`]) : 0,
            baseName: base?.name ?? null,
            baseSha256: null,
          },
      lineage: manifest?.lineage ?? { parent: null, trainedFrom: "unknown" },
    };

    const dest = await copyIntoFolder(
      src,
      this.dir,
      `${id}-${sha256.slice(0, 12)}.gguf`,
      info.size,
      "adapter",
    );
    const adapter: InstalledAdapter = {
      id,
      name: manifest?.name ?? str(file.metadata["general.name"]) ?? id,
      domain: manifest?.domain ?? str(file.metadata["macaron.domain"]) ?? "general",
      version: manifest?.version ?? "1.0.0",
      description: manifest?.description ?? converted?.description ?? "",
      sha256,
      sizeBytes: info.size,
      filePath: dest,
      manifest: stored,
      enabled: true,
      scale: stored.defaultScale,
      installedAt: Date.now(),
      usageCount: 0,
    };
    try {
      this.deps.store.insert(adapter);
    } catch (err) {
      await rm(dest, { force: true });
      throw err;
    }
    this.changed();
    return toInfo(adapter, await this.fitOf(adapter));
  }

  /** The loaded base model's GGUF header, read once per file (path, size, mtime). */
  private async loadedBase(): Promise<BaseModel | null> {
    const path = this.deps.basePath();
    if (!path) return null;
    const info = await stat(path).catch(() => null);
    if (!info) return null;
    const key = `${path}\u0000${info.size}\u0000${info.mtimeMs}`;
    if (this.base?.key !== key) {
      this.fits = new Map();
      const model = readGguf(path).then(
        (file): BaseModel => ({ path, file, name: str(file.metadata["general.name"]) ?? basename(path) }),
        (err: unknown) => {
          this.log(`cannot read the loaded model ${path}`, err);
          return null;
        },
      );
      this.base = { key, model };
    }
    return this.base.model;
  }

  private changed(): void {
    this.deps.events.emit("adapters.changed", {});
    for (const observer of this.changeObservers) observer();
  }

  /**
   * Run `observer` after every change to the installed adapters or their settings (core
   * records versions and the release): an explicit call, not a listener on the UI's event bus.
   */
  onChanged(observer: () => void): void {
    this.changeObservers.push(observer);
  }
}

export function notInstalled(id: string): ApiError {
  return new ApiError("not_found", `No adapter "${id}" is installed.`);
}

function toInfo(a: InstalledAdapter, fit: AdapterFit): AdapterInfo {
  return {
    id: a.id,
    name: a.name,
    domain: a.domain,
    version: a.version,
    description: a.description,
    sha256: a.sha256,
    sizeBytes: a.sizeBytes,
    enabled: a.enabled,
    scale: a.scale,
    defaultScale: a.manifest.defaultScale,
    base: {
      architecture: a.manifest.base.architecture,
      embeddingLength: a.manifest.base.embeddingLength,
      baseName: a.manifest.base.baseName,
    },
    fitsLoadedModel: fit.fits,
    incompatibleReason: fit.reason,
    usageCount: a.usageCount,
    installedAt: a.installedAt,
    lineage: a.manifest.lineage,
  };
}
