/**
 * The model hub behind `hub.*`: search and repo files (HubClient), the curated list, the fit
 * estimate of a hub file before downloading it, downloads (DownloadManager), the access token
 * (TokenStore) and LoRA adapters for the loaded base (hub metadata first, then each candidate's
 * own header read remotely: a GGUF's `general.type`, architecture and tensor shapes; a PEFT
 * folder's adapter_config.json and safetensors header, checked by the converter's own rules).
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { GgufFileInfo } from "node-llama-cpp";
import {
  ApiError,
  type AdapterInfo,
  type Download,
  type FitEstimate,
  type HubAdapterFile,
  type HubAdapterMatch,
  type LoadSettings,
} from "../../api";
import { sha256File } from "../../../common/hashing";
import { readGguf, type GgufFile } from "../../../native/gguf/reader";
import { checkPeft, isPeftError, parsePeftConfig, type PeftCheck } from "../../../native/gguf/peft-lora";
import {
  parseSafetensorsHeader,
  SafetensorsError,
  safetensorsHeaderLength,
} from "../../../native/gguf/safetensors";
import { isDiskFull } from "../db/disk-full";
import {
  checkFreeSpace,
  DownloadManager,
  httpDownloader,
  PARTIAL_SUFFIX,
  readSidecar,
  type CreateDownloader,
  type FreeSpace,
} from "./downloads";
import { TransferStatusError } from "./file-transfer";
import {
  HubClient,
  hubEndpoint,
  hubStatusError,
  isPeftFilePath,
  networkError,
  PEFT_CONFIG_NAME,
  PEFT_WEIGHTS_NAME,
  readCapped,
  readRange,
  splitPartPaths,
  type PeftListedFile,
  type PeftRepoFolder,
} from "./hf-client";
import { RECOMMENDED_MODELS } from "./recommended";
import type { TokenStore } from "./token-store";

/** Where a fit estimate reads the GGUF header from. */
export type FitSource = { path: string } | { url: string; headers?: Record<string, string> };

/** The engine-side estimator (node-llama-cpp's GgufInsights), provided by the model service. */
export type FitFunction = (
  source: FitSource,
  options: { contextSize?: number; gpuLayers?: LoadSettings["gpuLayers"] },
) => Promise<FitEstimate>;

export interface HubServiceDeps {
  dataDir: string;
  tokenStore: TokenStore;
  emit: (download: Download) => void;
  /** The loaded model's file (adapters are searched for it). */
  loadedModelPath: () => string | null;
  /** Install a downloaded adapter with the registry's validation (adapters.install). */
  installAdapter: (path: string) => Promise<AdapterInfo>;
  fit?: FitFunction;
  /** Default: HF_ENDPOINT or the public hub. */
  endpoint?: string;
  statfs?: (path: string) => Promise<FreeSpace>;
  createDownloader?: CreateDownloader;
  progressIntervalMs?: number;
  /** See DownloadManagerDeps.stallTimeoutMs; a PEFT adapter's download stops after it too. */
  stallTimeoutMs?: number;
  /** See DownloadManagerDeps.onVerified. */
  onVerified?: (path: string, sha256: string) => void;
  log?: (message: string, err: unknown) => void;
}

const MAX_ADAPTER_REPOS = 12;
const MAX_ADAPTER_FILES = 8;
/** adapter_config.json is a few KB (a long target_modules or alpha_pattern included). */
const MAX_PEFT_CONFIG_BYTES = 256 * 1024;
/**
 * The most of a PEFT safetensors header read remotely. It lists every tensor in ~150 bytes: ~200 KB
 * for every projection of a 70B dense model, ~6 MB for every expert of a 128-expert MoE.
 */
export const MAX_PEFT_HEADER_BYTES = 8 * 1024 * 1024;

export type AdapterMatch = HubAdapterMatch;

/** The loaded model's header (all parts of a split model) and its architecture. */
interface LoadedBase {
  path: string;
  file: GgufFile;
  arch: string;
}

/** Why a hub adapter does not fit or cannot be read, as a sentence; other errors are bugs. */
function refusalOf(err: unknown): string | null {
  if (isPeftError(err) || err instanceof SafetensorsError || err instanceof ApiError) return err.message;
  return null;
}

/** The git blob id of `bytes` (what the hub's tree lists as `oid` for a file not in LFS). */
function gitBlobId(bytes: Buffer): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/** A PEFT folder as one entry of a match: its weights' path, both files as its parts. */
function peftHubFile(folder: PeftRepoFolder): HubAdapterFile {
  const parts = [folder.config, folder.weights].map((f) => ({
    path: f.path,
    sizeBytes: f.sizeBytes,
    sha256: f.sha256,
  }));
  return {
    path: folder.weights.path,
    quant: null,
    sizeBytes: folder.config.sizeBytes + folder.weights.sizeBytes,
    parts,
    isAdapter: true,
    kind: "peft",
  };
}

/** What messages call a PEFT folder of `repo`: the repo, or the repo and its sub-folder. */
function peftName(repo: string, folder: PeftRepoFolder): string {
  return folder.dir ? `${repo}/${folder.dir}` : repo;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** "owner/name" from a hub URL (general.base_model.N.repo_url), or null. */
function repoFromUrl(url: string | undefined): string | null {
  if (!url) return null;
  const m = /^https?:\/\/[^/]+\/([A-Za-z0-9][\w.-]*\/[\w.-]+)\/?$/.exec(url.trim());
  return m?.[1] ?? null;
}

export class HubService {
  readonly client: HubClient;
  readonly downloads: DownloadManager;

  constructor(private readonly deps: HubServiceDeps) {
    this.client = new HubClient({
      endpoint: deps.endpoint ?? hubEndpoint(),
      token: () => deps.tokenStore.get(),
    });
    this.downloads = new DownloadManager({
      dataDir: deps.dataDir,
      client: this.client,
      emit: deps.emit,
      statfs: deps.statfs,
      createDownloader: deps.createDownloader,
      progressIntervalMs: deps.progressIntervalMs,
      stallTimeoutMs: deps.stallTimeoutMs,
      onVerified: deps.onVerified,
      log: deps.log,
    });
  }

  search(query: string, limit?: number) {
    return this.client.search(query, { limit });
  }

  recommended() {
    return [...RECOMMENDED_MODELS];
  }

  repo(repo: string) {
    return this.client.repo(repo);
  }

  async fit(input: {
    repo: string;
    file: string;
    contextSize?: number;
    gpuLayers?: LoadSettings["gpuLayers"];
  }) {
    if (!this.deps.fit)
      throw new ApiError("internal", "The fit estimate is not available in this build yet.");
    // The hub's answer for the file first (gated, missing): a clear error instead of a parse failure.
    await this.client.head(input.repo, input.file);
    return this.deps.fit(
      { url: this.client.fileUrl(input.repo, input.file), headers: await this.client.authHeaders() },
      { contextSize: input.contextSize, gpuLayers: input.gpuLayers },
    );
  }

  download(repo: string, file: string) {
    return this.downloads.start(repo, file, "model");
  }

  async tokenStatus() {
    return { set: (await this.deps.tokenStore.get()) !== null, storage: this.deps.tokenStore.storage };
  }

  async setToken(token: string | null) {
    if (token !== null && !/^\S+$/.test(token.trim())) {
      throw new ApiError("invalid_input", "An access token is one word without spaces (hf_…).");
    }
    try {
      await this.deps.tokenStore.set(token);
    } catch (err) {
      throw new ApiError("invalid_input", (err as Error).message);
    }
    return this.tokenStatus();
  }

  /**
   * Adapter repos for the loaded base: the hub's `base_model:adapter:<base>` metadata for the
   * base the loaded model came from (its download sidecar, then its repo's base_model, then the
   * GGUF's own general.base_model), plus a text search; every candidate GGUF file is then checked
   * by its own remote GGUF header (adapter type, architecture, tensor shapes), and every PEFT
   * folder (adapter_config.json beside adapter_model.safetensors, at the root or one folder
   * down) by its config and safetensors header with the converter's rules (checkPeft): no
   * weights are downloaded to decide.
   */
  async adaptersForBase(query?: string): Promise<AdapterMatch[]> {
    const loaded = await this.loadedBase();
    const { file: base, arch } = loaded;
    const m = base.metadata;
    const bases = new Set<string>();
    const sidecar = await readSidecar(loaded.path);
    if (sidecar?.repo) {
      bases.add(sidecar.repo);
      const parent = await this.client.repo(sidecar.repo).then(
        (r) => r.baseModel,
        () => null,
      );
      if (parent) bases.add(parent);
    }
    for (let i = 0; i < 4; i++) {
      const fromGguf = repoFromUrl(str(m[`general.base_model.${i}.repo_url`]));
      if (fromGguf) bases.add(fromGguf);
    }
    const candidates = new Map<string, string>();
    for (const b of bases) {
      const found = await this.client.search("", { filters: [`base_model:adapter:${b}`], limit: 50 });
      for (const r of found)
        if (!candidates.has(r.repo)) candidates.set(r.repo, `the hub lists it as an adapter of ${b}`);
    }
    const text = query?.trim() || (bases.size === 0 ? `${str(m["general.basename"]) ?? arch} lora` : "");
    if (text) {
      // GGUF repos, then PEFT ones (the hub tags those with their library, `peft`).
      for (const filter of ["gguf", "peft"])
        for (const r of await this.client.search(text, { filters: [filter], limit: 30 }))
          if (!candidates.has(r.repo)) candidates.set(r.repo, `found by searching "${text}"`);
    }
    const auth = await this.client.authHeaders();
    const out: AdapterMatch[] = [];
    // Each candidate costs a repo listing and a header read per file: the first few only.
    for (const [repo, why] of [...candidates].slice(0, MAX_ADAPTER_REPOS)) {
      let listing: Awaited<ReturnType<HubClient["repoListing"]>>;
      try {
        listing = await this.client.repoListing(repo);
      } catch (err) {
        this.deps.log?.(`skipping adapter repo ${repo}`, err);
        continue;
      }
      // A text search also finds model repos: there, only files named as adapters are read.
      const fromMetadata = !why.startsWith("found by searching");
      const fitting: HubAdapterFile[] = [];
      for (const f of listing.repo.files
        .filter((x) => fromMetadata || x.isAdapter)
        .slice(0, MAX_ADAPTER_FILES)) {
        const verdict = await this.checkRemoteAdapter(this.client.fileUrl(repo, f.path), auth, base, arch);
        if (verdict === null) fitting.push({ ...f, isAdapter: true, kind: "gguf" });
        else this.deps.log?.(`${repo}/${f.path} does not fit the loaded model: ${verdict}`, null);
      }
      const ggufs = fitting.length;
      // A PEFT folder is an adapter by its layout, wherever the repo was found.
      for (const folder of listing.peft.slice(0, MAX_ADAPTER_FILES)) {
        try {
          const check = await this.checkRemotePeft(repo, folder, base);
          for (const warning of check.warnings)
            this.deps.log?.(`${peftName(repo, folder)}: ${warning}`, null);
          fitting.push(peftHubFile(folder));
        } catch (err) {
          const why = refusalOf(err);
          if (why === null) throw err;
          this.deps.log?.(`${repo}/${folder.weights.path} does not fit the loaded model: ${why}`, null);
        }
      }
      if (fitting.length === 0) continue;
      const found = [
        ggufs > 0
          ? `its GGUF header says LoRA adapter for ${arch} with tensor shapes that match the loaded model`
          : null,
        fitting.length > ggufs
          ? `it holds a PEFT LoRA adapter (adapter_config.json and adapter_model.safetensors) whose tensor shapes match the loaded ${arch} model; it is converted to llama.cpp's GGUF format for this model on install`
          : null,
      ].filter((x) => x !== null);
      out.push({
        repo,
        files: fitting,
        reason: `${why[0]!.toUpperCase()}${why.slice(1)}; ${found.join("; ")}.`,
      });
    }
    return out;
  }

  /** The loaded model's GGUF header; a split model's tensors from all its parts (the shape checks need them all). */
  private async loadedBase(): Promise<LoadedBase> {
    const path = this.deps.loadedModelPath();
    if (!path)
      throw new ApiError("no_model", "Load a model first: adapters are looked up for the loaded base.");
    const first = await readGguf(path);
    const rest = await Promise.all(
      splitPartPaths(path)
        .slice(1)
        .map((p) => readGguf(p)),
    );
    const file = { ...first, tensors: [first, ...rest].flatMap((f) => f.tensors) };
    return { path, file, arch: str(file.metadata["general.architecture"]) ?? "unknown" };
  }

  /**
   * Checks a PEFT folder on the hub against `base` without its weights: adapter_config.json
   * (at most MAX_PEFT_CONFIG_BYTES) and the safetensors header by HTTP Range (its 8-byte length,
   * then at most MAX_PEFT_HEADER_BYTES of JSON), with the converter's own rules. Throws the
   * refusal: a PeftError, a SafetensorsError or an ApiError (the hub's).
   */
  private async checkRemotePeft(repo: string, folder: PeftRepoFolder, base: GgufFile): Promise<PeftCheck> {
    const name = peftName(repo, folder);
    const target = { repo, file: folder.config.path };
    if (folder.config.sizeBytes > MAX_PEFT_CONFIG_BYTES)
      throw new ApiError(
        "upstream",
        `${folder.config.path} in ${repo} is listed at ${folder.config.sizeBytes} bytes; a PEFT config is a few KB, and the app reads at most ${MAX_PEFT_CONFIG_BYTES / 1024} KB of it.`,
      );
    const { res } = await this.client.request(this.client.fileUrl(repo, folder.config.path), target);
    const config = parsePeftConfig(
      (await readCapped(res, target, MAX_PEFT_CONFIG_BYTES)).toString("utf8"),
      name,
    );

    const weights = folder.weights;
    const size = weights.sizeBytes;
    // A listing too short for the length is refused by safetensorsHeaderLength, unread.
    const first8 = size >= 8 ? await readRange(this.client, repo, weights.path, 0, 8) : Buffer.alloc(0);
    const length = safetensorsHeaderLength(first8, size, weights.path);
    if (length > MAX_PEFT_HEADER_BYTES)
      throw new ApiError(
        "upstream",
        `The safetensors header of ${weights.path} in ${repo} is ${length} bytes; the app reads at most ${MAX_PEFT_HEADER_BYTES / 1024 / 1024} MB of it from the hub.`,
      );
    const header = parseSafetensorsHeader(
      await readRange(this.client, repo, weights.path, 8, length),
      size,
      weights.path,
    );
    return checkPeft({ config, tensors: header.tensors, base, name });
  }

  /** null when the remote file is a LoRA adapter that fits `base`, else why not. */
  private async checkRemoteAdapter(
    url: string,
    headers: Record<string, string>,
    base: GgufFile,
    arch: string,
  ): Promise<string | null> {
    let info: GgufFileInfo;
    try {
      // Imported here, not at core's start (see gguf-names.ts).
      const { readGgufFileInfo } = await import("node-llama-cpp");
      info = await readGgufFileInfo(url, {
        fetchHeaders: headers,
        logWarnings: false,
        ignoreKeys: ["tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type"],
        fetchRetryOptions: { retries: 1, minTimeout: 100, maxTimeout: 500 },
      });
    } catch (err) {
      return `its header cannot be read (${(err as Error).message})`;
    }
    const meta = info.metadata as unknown as {
      general?: { type?: string; architecture?: string };
      adapter?: { type?: string };
    };
    if (meta.general?.type !== "adapter" || meta.adapter?.type !== "lora") return "it is not a LoRA adapter";
    if (meta.general.architecture !== arch)
      return `it was made for ${meta.general.architecture ?? "an unknown architecture"}, the loaded model is ${arch}`;
    const baseTensors = new Map(base.tensors.map((t) => [t.name, t.dims]));
    const tensors = new Map((info.fullTensorInfo ?? []).map((t) => [t.name, t.dimensions.map(Number)]));
    let pairs = 0;
    for (const [name, a] of tensors) {
      if (!name.endsWith(".lora_a")) continue;
      const target = name.slice(0, -".lora_a".length);
      const b = tensors.get(`${target}.lora_b`);
      const w = baseTensors.get(target);
      if (!b || !w) return `it changes ${target}, which the loaded model does not have`;
      if (a[0] !== w[0] || b[1] !== w[1] || a[1] !== b[0])
        return `${target} is [${w.join(", ")}] in the model but [${a[0]}, ${b[1]}] in the adapter`;
      pairs++;
    }
    return pairs > 0 ? null : "it contains no LoRA weights";
  }

  /**
   * Download an adapter GGUF (and its manifest `<name>.json` when the repo has one) and install
   * it through the adapter registry: the same validation as adapters.install. The downloaded
   * copy is removed once installed (the registry keeps its own).
   */
  async installAdapter(repo: string, file: string): Promise<AdapterInfo> {
    if (isPeftFilePath(file)) return this.installPeftAdapter(repo, file);
    const started = await this.downloads.start(repo, file, "adapter");
    const done = await this.downloads.wait(started.id);
    if (done.state === "unverified") {
      throw new ApiError(
        "invalid_input",
        `The hub lists no sha256 for ${file}, so it cannot be checked: accept it in the downloads list first if you trust it.`,
      );
    }
    if (done.state !== "done") {
      throw new ApiError("invalid_input", done.error ?? `The adapter download stopped (${done.state}).`);
    }
    const manifestName = `${file.replace(/\.gguf$/i, "")}.json`;
    const manifestPath = join(dirname(done.path), basename(manifestName));
    let wroteManifest = false;
    try {
      const { res } = await this.client.request(this.client.fileUrl(repo, manifestName), {
        repo,
        file: manifestName,
      });
      await writeFile(manifestPath, await readCapped(res, { repo, file: manifestName }, 1024 * 1024));
      wroteManifest = true;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "not_found")) throw err;
    }
    try {
      return await this.deps.installAdapter(done.path);
    } finally {
      await rm(done.path, { force: true });
      await rm(`${done.path}.hub.json`, { force: true });
      if (wroteManifest) await rm(manifestPath, { force: true });
      await this.downloads.forgetPath(done.path);
    }
  }

  /**
   * A PEFT folder from the hub (`file`: its adapter_config.json or adapter_model.safetensors):
   * checked by its config and header first (nothing downloaded when it does not fit), then both
   * files downloaded with the app's downloader into a temporary folder in the data folder and
   * checked against the hub's hashes (the weights' LFS sha256, the config's sha256 or git blob
   * id: a file the hub gives no hash for is refused), installed through the adapter registry
   * (which converts it for the loaded base), and the downloaded copies removed. Any refusal
   * leaves nothing behind.
   */
  private async installPeftAdapter(repo: string, file: string): Promise<AdapterInfo> {
    const loaded = await this.loadedBase();
    const { peft } = await this.client.repoListing(repo);
    const folder = peft.find((f) => f.weights.path === file || f.config.path === file);
    if (!folder)
      throw new ApiError(
        "not_found",
        `${repo} has no PEFT adapter at ${file} (an ${PEFT_CONFIG_NAME} beside an ${PEFT_WEIGHTS_NAME}).`,
      );
    for (const f of [folder.weights, folder.config])
      if (!f.sha256 && !(f === folder.config && f.gitOid))
        throw new ApiError(
          "invalid_input",
          `The hub lists no ${f === folder.weights ? "sha256" : "hash"} for ${f.path} in ${repo}, so its download cannot be checked; the adapter was not downloaded.`,
        );
    try {
      await this.checkRemotePeft(repo, folder, loaded.file);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const why = refusalOf(err);
      if (why === null) throw err;
      const model = str(loaded.file.metadata["general.name"]) ?? basename(loaded.path);
      throw new ApiError(
        "invalid_input",
        isPeftError(err) && err.code === "incompatible"
          ? `${why} The loaded model is "${model}" (${basename(loaded.path)}).`
          : why,
      );
    }

    await mkdir(this.deps.dataDir, { recursive: true });
    const temp = await mkdtemp(join(this.deps.dataDir, ".hub-peft-"));
    try {
      // The registry names the adapter after its folder: the sub-folder, else the repo's name.
      const dir = join(temp, folderName(folder.dir ? basename(folder.dir) : repo.split("/")[1]!));
      await mkdir(dir);
      const files = [folder.config, folder.weights];
      const paths = files.map((f) => join(dir, basename(f.path)));
      await checkFreeSpace(temp, folder.config.sizeBytes + folder.weights.sizeBytes, this.deps.statfs);
      await this.transfer(repo, file, files, paths);
      for (let i = 0; i < files.length; i++)
        await verifyListed(repo, files[i]!, `${paths[i]!}${PARTIAL_SUFFIX}`);
      for (const p of paths) await rename(`${p}${PARTIAL_SUFFIX}`, p);
      return await this.deps.installAdapter(dir);
    } catch (err) {
      if (isDiskFull(err) && !(err instanceof ApiError))
        throw new ApiError(
          "disk_full",
          `The disk is full: the adapter from ${repo} could not be downloaded into ${this.deps.dataDir}. Free some disk space, then try again.`,
        );
      throw err;
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  /**
   * Downloads `files` of `repo` to `paths` (as their partial files) with the app's downloader:
   * ranged, never past the listed size, retried like a model download, and stopped when the hub
   * sends nothing for stallTimeoutMs. Every failure is an ApiError.
   */
  private async transfer(
    repo: string,
    file: string,
    files: readonly PeftListedFile[],
    paths: readonly string[],
  ): Promise<void> {
    const stallMs = this.deps.stallTimeoutMs ?? 60_000;
    let progressAt = Date.now();
    let onStall: () => void = () => undefined;
    const stalled = new Promise<"stalled">((r) => (onStall = () => r("stalled")));
    const downloader = await (this.deps.createDownloader ?? httpDownloader)({
      parts: files.map((f, i) => ({
        url: this.client.fileUrl(repo, f.path),
        path: paths[i]!,
        sizeBytes: f.sizeBytes,
      })),
      open: (url, target, init) => this.client.open(url, target, init),
      target: { repo, file },
      onProgress: () => (progressAt = Date.now()),
    });
    const watchdog = setInterval(
      () => {
        if (Date.now() - progressAt >= stallMs) onStall();
      },
      Math.max(20, Math.min(1000, stallMs / 4)),
    );
    try {
      const done = await Promise.race([downloader.download().then(() => "done" as const), stalled]);
      if (done === "stalled") {
        await downloader.cancel({ deleteTempFile: true }).catch(() => undefined);
        throw new ApiError(
          "upstream",
          `The hub sent no data for ${Math.max(1, Math.round(stallMs / 1000))} s while downloading ${file} from ${repo}; the adapter was not installed. Try again later.`,
        );
      }
    } catch (err) {
      if (err instanceof ApiError || isDiskFull(err)) throw err;
      if (err instanceof TransferStatusError)
        throw hubStatusError(
          err.statusCode,
          { repo, file },
          {
            hasToken: await this.client.hasToken().catch(() => false),
            retryAfter: err.responseHeaders["retry-after"],
            errorCode: err.responseHeaders["x-error-code"],
            endpoint: this.client.endpoint,
          },
        );
      throw networkError(this.client.endpoint, err, { repo, file });
    } finally {
      clearInterval(watchdog);
    }
  }

  close(): Promise<void> {
    return this.downloads.close();
  }
}

/** A folder name the registry can take as an adapter id (`idFromFileName` keeps it as it is). */
function folderName(name: string): string {
  const clean = name
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 64)
    .replace(/[-.]+$/, "");
  return clean || "adapter";
}

/** Checks a downloaded file against the hash the hub lists for it (LFS sha256, else git blob id). */
async function verifyListed(repo: string, file: PeftListedFile, path: string): Promise<void> {
  const damaged = (actual: string, listed: string) =>
    new ApiError(
      "upstream",
      `${file.path} from ${repo} is damaged or was replaced: its hash is ${actual.slice(0, 12)}…, the hub lists ${listed.slice(0, 12)}…. The adapter was not installed.`,
    );
  if (file.sha256) {
    const actual = await sha256File(path);
    if (actual !== file.sha256.toLowerCase()) throw damaged(actual, file.sha256);
    return;
  }
  // Only the config gets here (weights without a sha256 are refused): at most its listed size.
  const actual = gitBlobId(await readFile(path));
  if (actual !== file.gitOid?.toLowerCase()) throw damaged(actual, file.gitOid ?? "");
}
