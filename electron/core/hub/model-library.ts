/**
 * The models in `<dataDir>/models/` (downloaded in-app or put there): `models.local` lists
 * them (first parts of split GGUFs only; adapters and partial downloads skipped) with what
 * their GGUF headers say, `models.delete` deletes one (every part, its sidecar), never the
 * loaded one and never anything outside models/.
 */
import { readdir, realpath, rm, stat } from "node:fs/promises";
import { basename, extname, join, relative, resolve, sep } from "node:path";
import { ggufNames, type GgufNames } from "./gguf-names";
import { ApiError, type LocalModel } from "../../api";
import { classifyGguf, readGguf, type GgufFile } from "../../../native/gguf/reader";
import { isNotRegularFileError, statRegularFileIfExists } from "../../../common/files/regular-file";
import { LEGACY_PARTIAL_SUFFIX, PARTIAL_SUFFIX, readSidecar, sidecarPath } from "./downloads";
import { parseQuant, splitPart, splitPartPaths } from "./hf-client";

/** The demo model's copy in models/ (ModelService.openDemo). */
const DEMO_COPY = "demo.gguf";

export interface ModelLibraryDeps {
  dataDir: string;
  /** The loaded model's path (null: none): it cannot be deleted. */
  loadedPath: () => string | null;
  /** Called after a delete (the download list forgets the file). */
  onDeleted?: (path: string) => Promise<void> | void;
  log?: (message: string, err: unknown) => void;
}

/** "Q4_K_M", "F16", … for a `general.file_type` value (`names`: ggufNames()). */
export function fileTypeName(value: unknown, names: GgufNames): string | null {
  if (typeof value !== "number") return null;
  const name = names.fileTypes[value];
  return name ? name.replace(/^(MOSTLY|ALL)_/, "") : null;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0;
}

function elements(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

/** The dominant tensor type of the weight matrices (files without general.file_type). */
function dominantType(files: GgufFile[]): string | null {
  const bytes = new Map<string, number>();
  for (const f of files)
    for (const t of f.tensors)
      if (t.dims.length >= 2) bytes.set(t.typeName, (bytes.get(t.typeName) ?? 0) + t.byteSize);
  let best: string | null = null;
  for (const [k, v] of bytes) if (best === null || v > (bytes.get(best) ?? 0)) best = k;
  return best;
}

export class ModelLibrary {
  readonly modelsDir: string;

  constructor(private readonly deps: ModelLibraryDeps) {
    this.modelsDir = resolve(deps.dataDir, "models");
  }

  /** Every model in models/, newest first. Unreadable files are skipped (and logged). */
  async list(): Promise<LocalModel[]> {
    const paths = await this.scan(this.modelsDir, 0);
    const models: LocalModel[] = [];
    for (const path of paths) {
      try {
        const model = await this.describe(path);
        if (model) models.push(model);
      } catch (err) {
        this.deps.log?.(`skipping ${path} in the models folder`, err);
      }
    }
    return models.sort((a, b) => b.modifiedAt - a.modifiedAt || a.path.localeCompare(b.path));
  }

  /** Delete the model at `path` (all parts, sidecar, partial files). */
  async delete(path: string): Promise<{ deleted: boolean }> {
    const target = resolve(path);
    const inside = await this.insideModels(target);
    if (!inside) {
      throw new ApiError(
        "invalid_input",
        `Only models in the models folder (${this.modelsDir}) can be deleted here.`,
      );
    }
    if (extname(target).toLowerCase() !== ".gguf")
      throw new ApiError("invalid_input", `${basename(target)} is not a .gguf model.`);
    // Only files are deleted here: a folder, FIFO or device named *.gguf is refused (stat only).
    await statRegularFileIfExists(target, basename(target)).catch((err: unknown) => {
      throw isNotRegularFileError(err) ? new ApiError("invalid_input", err.message) : err;
    });
    const split = splitPart(target);
    const first = split ? splitPartPaths(target)[0]! : target;
    const parts = splitPartPaths(first);
    const loaded = this.deps.loadedPath();
    if (loaded && parts.some((p) => resolve(p) === resolve(loaded))) {
      throw new ApiError(
        "busy",
        `${basename(first)} is the loaded model: open another model before deleting it.`,
      );
    }
    const exists = (await Promise.all(parts.map((p) => stat(p).catch(() => null)))).some(Boolean);
    for (const p of parts) {
      await rm(p, { force: true });
      await rm(`${p}${PARTIAL_SUFFIX}`, { force: true });
      await rm(`${p}${LEGACY_PARTIAL_SUFFIX}`, { force: true });
    }
    await rm(sidecarPath(first), { force: true });
    await this.deps.onDeleted?.(first);
    return { deleted: exists };
  }

  private async insideModels(target: string): Promise<boolean> {
    const root = await realpath(this.modelsDir).catch(() => this.modelsDir);
    // The file may be a dangling part; check the real folder it is in.
    const dir = await realpath(resolve(target, "..")).catch(() => null);
    if (!dir) return false;
    const rel = relative(root, join(dir, basename(target)));
    return rel !== "" && !rel.startsWith("..") && !rel.split(sep).includes("..") && !rel.startsWith(sep);
  }

  private async scan(dir: string, depth: number): Promise<string[]> {
    if (depth > 6) return [];
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const out: string[] = [];
    for (const e of entries) {
      // Hidden folders (staging) and the app's own copy of the demo ("Try the demo model" opens it).
      if (e.name.startsWith(".") || (depth === 0 && e.name === DEMO_COPY)) continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) out.push(...(await this.scan(path, depth + 1)));
      else if (e.isFile() && e.name.toLowerCase().endsWith(".gguf")) {
        const split = splitPart(e.name);
        if (!split || split.part === 1) out.push(path);
      }
    }
    return out;
  }

  private async describe(path: string): Promise<LocalModel | null> {
    const first = await readGguf(path);
    if (classifyGguf(first) === "adapter") return null;
    const parts = splitPartPaths(path);
    const files: GgufFile[] = [first];
    for (const p of parts.slice(1)) files.push(await readGguf(p));
    const stats = await Promise.all(parts.map((p) => stat(p)));
    const m = first.metadata;
    const architecture = str(m["general.architecture"]) ?? "unknown";
    const sidecar = await readSidecar(path);
    const names = await ggufNames();
    return {
      path,
      fileName: basename(path),
      name: str(m["general.name"])?.trim() || basename(path, extname(path)),
      architecture,
      parameters: files.reduce((s, f) => s + f.tensors.reduce((t, x) => t + elements(x.dims), 0), 0),
      quant:
        fileTypeName(m["general.file_type"], names) ??
        parseQuant(basename(path), names) ??
        dominantType(files),
      sizeBytes: stats.reduce((s, x) => s + x.size, 0),
      contextLength: count(m[`${architecture}.context_length`]),
      repo: sidecar?.repo ?? null,
      modifiedAt: Math.floor(Math.max(...stats.map((s) => s.mtimeMs))),
    };
  }
}
