/**
 * The model hub behind `hub.*`: search and repo files (HubClient), the curated list, the fit
 * estimate of a hub file before downloading it, downloads (DownloadManager), the access token
 * (TokenStore) and LoRA adapters for the loaded base (hub metadata first, then each file's own
 * GGUF header read remotely: `general.type`, architecture and tensor shapes).
 */
import { rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { readGgufFileInfo } from "node-llama-cpp";
import {
  ApiError,
  type AdapterInfo,
  type Download,
  type FitEstimate,
  type HubFile,
  type LoadSettings,
} from "../../api";
import { readGguf, type GgufFile } from "../../../native/gguf/reader";
import { DownloadManager, readSidecar, type CreateDownloader, type FreeSpace } from "./downloads";
import { HubClient, hubEndpoint, readCapped, splitPartPaths } from "./hf-client";
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
  /** See DownloadManagerDeps.onVerified. */
  onVerified?: (path: string, sha256: string) => void;
  log?: (message: string, err: unknown) => void;
}

const MAX_ADAPTER_REPOS = 12;
const MAX_ADAPTER_FILES = 8;

export interface AdapterMatch {
  repo: string;
  files: HubFile[];
  reason: string;
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
   * GGUF's own general.base_model), plus a text search; every candidate file is then checked
   * by its own remote GGUF header (adapter type, architecture, tensor shapes).
   */
  async adaptersForBase(query?: string): Promise<AdapterMatch[]> {
    const loaded = this.deps.loadedModelPath();
    if (!loaded)
      throw new ApiError("no_model", "Load a model first: adapters are looked up for the loaded base.");
    const first = await readGguf(loaded);
    // A split model's tensors are spread over its parts: the shape checks need them all.
    const rest = await Promise.all(
      splitPartPaths(loaded)
        .slice(1)
        .map((p) => readGguf(p)),
    );
    const base = { ...first, tensors: [first, ...rest].flatMap((f) => f.tensors) };
    const m = base.metadata;
    const arch = str(m["general.architecture"]) ?? "unknown";
    const bases = new Set<string>();
    const sidecar = await readSidecar(loaded);
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
      for (const r of await this.client.search(text, { filters: ["gguf"], limit: 30 }))
        if (!candidates.has(r.repo)) candidates.set(r.repo, `found by searching "${text}"`);
    }
    const auth = await this.client.authHeaders();
    const out: AdapterMatch[] = [];
    // Each candidate costs a repo listing and a header read per file: the first few only.
    for (const [repo, why] of [...candidates].slice(0, MAX_ADAPTER_REPOS)) {
      let files: HubFile[];
      try {
        files = (await this.client.repo(repo)).files;
      } catch (err) {
        this.deps.log?.(`skipping adapter repo ${repo}`, err);
        continue;
      }
      // A text search also finds model repos: there, only files named as adapters are read.
      const fromMetadata = !why.startsWith("found by searching");
      const fitting: HubFile[] = [];
      for (const f of files.filter((x) => fromMetadata || x.isAdapter).slice(0, MAX_ADAPTER_FILES)) {
        const verdict = await this.checkRemoteAdapter(this.client.fileUrl(repo, f.path), auth, base, arch);
        if (verdict === null) fitting.push({ ...f, isAdapter: true });
        else this.deps.log?.(`${repo}/${f.path} does not fit the loaded model: ${verdict}`, null);
      }
      if (fitting.length > 0) {
        out.push({
          repo,
          files: fitting,
          reason: `${why[0]!.toUpperCase()}${why.slice(1)}; its GGUF header says LoRA adapter for ${arch} with tensor shapes that match the loaded model.`,
        });
      }
    }
    return out;
  }

  /** null when the remote file is a LoRA adapter that fits `base`, else why not. */
  private async checkRemoteAdapter(
    url: string,
    headers: Record<string, string>,
    base: GgufFile,
    arch: string,
  ): Promise<string | null> {
    let info: Awaited<ReturnType<typeof readGgufFileInfo>>;
    try {
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

  close(): Promise<void> {
    return this.downloads.close();
  }
}
