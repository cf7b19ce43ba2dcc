/**
 * The Hugging Face hub client: search, repo files (LFS sha256, split GGUFs grouped, the
 * quantization from the file name), resolve URLs and the access-token header. The endpoint is
 * HF_ENDPOINT when set (the test hub, a mirror), else https://huggingface.co — the same rule
 * node-llama-cpp's `hf:` URIs follow. Every failure is an ApiError with a sentence for the user.
 *
 * A hostile or broken hub must not hurt the app: redirects are followed here (at most
 * MAX_REDIRECTS, http and https only), the access token goes only to the hub's own host and its
 * documented CDN hosts (`mayAuthorize`), never after a redirect elsewhere nor to a tree page on
 * another host; answers are read with a size cap and listings with a count cap; unsafe paths
 * (`../`, absolute) are left out of a listing. Problems of the hub's making are `upstream` errors
 * (HTTP 502), not `internal`.
 */
import { jsonDepth } from "../../../common/json-depth";
import { ggufNames, type GgufNames } from "./gguf-names";
import { ApiError, type HubFile, type HubModel, type HubRepo } from "../../api";

export const DEFAULT_HUB_ENDPOINT = "https://huggingface.co";

/** HF_ENDPOINT (no trailing slash) or the public hub. */
export function hubEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env.HF_ENDPOINT?.trim();
  if (raw && /^https?:\/\//i.test(raw)) return raw.replace(/\/+$/, "");
  return DEFAULT_HUB_ENDPOINT;
}

const QUANT_LIKE = /^(I?Q\d+(?:_[A-Z0-9]+)*|T?Q\d_\d|BF16|F16|F32|F64|FP16|FP32|MXFP4(?:_MOE)?)$/i;
const SPLIT_PART = /-(\d{5})-of-(\d{5})\.gguf$/i;

/**
 * "Q4_K_M", "F16", … from a GGUF file name; null when the name says none. `names`: node-llama-cpp's
 * quantization names (ggufNames()).
 */
export function parseQuant(fileName: string, names: GgufNames): string | null {
  const base = (fileName.split("/").pop() ?? fileName).replace(SPLIT_PART, ".gguf").replace(/\.gguf$/i, "");
  const tokens = base.split(/[-.\s]+/).filter(Boolean);
  for (let i = tokens.length - 1; i >= 0; i--) {
    const t = tokens[i]!.toUpperCase();
    // "UD-Q4_K_XL", "Q4_K_M"; also "model_q4_k_m" (underscore-joined names).
    if (names.quantSet.has(t) || QUANT_LIKE.test(t)) return t;
    const tail = names.quants.filter((q) => t.endsWith(`_${q}`)).sort((a, b) => b.length - a.length)[0];
    if (tail) return tail;
  }
  return null;
}

/** Split part info of `name-00001-of-00003.gguf`, or null. */
export function splitPart(path: string): { part: number; parts: number; prefix: string } | null {
  const m = SPLIT_PART.exec(path);
  if (!m) return null;
  return { part: Number(m[1]), parts: Number(m[2]), prefix: path.slice(0, m.index) };
}

/** The paths of every part of the split GGUF whose first part is `first` (itself if not split). */
export function splitPartPaths(first: string): string[] {
  const s = splitPart(first);
  if (!s) return [first];
  return Array.from(
    { length: s.parts },
    (_, i) => `${s.prefix}-${String(i + 1).padStart(5, "0")}-of-${String(s.parts).padStart(5, "0")}.gguf`,
  );
}

/**
 * A path the app may list and write under models/: relative, no `..` or `.` segment, no empty
 * segment, no backslash or control character. A hub that lists anything else is not followed.
 */
export function isSafeRepoPath(path: string): boolean {
  if (!path || path.length > 1000 || path.startsWith("/") || path.includes("\\")) return false;
  if ([...path].some((c) => c.charCodeAt(0) < 0x20)) return false;
  return path.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

const ADAPTER_NAME = /(^|[-_./])(lora|adapter|adapters)([-_./]|$)/i;

export interface TreeEntry {
  type: string;
  path: string;
  size?: number;
  oid?: string;
  lfs?: { oid?: string; sha256?: string; size?: number };
}

/** The GGUF models of a repo's file tree: split parts grouped under their first part. */
export function groupGgufFiles(
  entries: readonly TreeEntry[],
  names: GgufNames,
  repoIsAdapter = false,
): HubFile[] {
  const ggufs = entries.filter((e) => e.type === "file" && /\.gguf$/i.test(e.path) && isSafeRepoPath(e.path));
  const byPath = new Map(ggufs.map((e) => [e.path, e]));
  const out: HubFile[] = [];
  for (const e of ggufs) {
    const split = splitPart(e.path);
    if (split && split.part !== 1) continue;
    const partPaths = splitPartPaths(e.path);
    // An incomplete split set cannot be loaded: leave it out.
    if (!partPaths.every((p) => byPath.has(p))) continue;
    const parts = partPaths.map((p) => {
      const entry = byPath.get(p)!;
      const size = entry.lfs?.size ?? entry.size ?? 0;
      return { path: p, sizeBytes: size, sha256: entry.lfs?.oid ?? entry.lfs?.sha256 ?? null };
    });
    out.push({
      path: e.path,
      quant: parseQuant(e.path, names),
      sizeBytes: parts.reduce((s, p) => s + p.sizeBytes, 0),
      parts,
      isAdapter: repoIsAdapter || ADAPTER_NAME.test(e.path.split("/").pop() ?? ""),
    });
  }
  return out.sort((a, b) => a.sizeBytes - b.sizeBytes || a.path.localeCompare(b.path));
}

/** The two files of a PEFT adapter folder (native/gguf/peft-lora.ts reads them). */
export const PEFT_CONFIG_NAME = "adapter_config.json";
export const PEFT_WEIGHTS_NAME = "adapter_model.safetensors";

/** One file of a PEFT folder as the hub lists it. */
export interface PeftListedFile {
  path: string;
  sizeBytes: number;
  /** The LFS sha256 (weights are LFS files), or null. */
  sha256: string | null;
  /** The git blob id (SHA-1 of `blob <size>\0<bytes>`): what checks a small non-LFS file such as the config. */
  gitOid: string | null;
}

/** A PEFT adapter folder of a repo: adapter_config.json beside adapter_model.safetensors. */
export interface PeftRepoFolder {
  /** "" at the repo's root, else the sub-folder. */
  dir: string;
  config: PeftListedFile;
  weights: PeftListedFile;
}

/** Whether `path` is a PEFT folder's file at the root or one folder down (what the tree keeps). */
export function isPeftFilePath(path: string): boolean {
  const parts = path.split("/");
  return parts.length <= 2 && (parts.at(-1) === PEFT_CONFIG_NAME || parts.at(-1) === PEFT_WEIGHTS_NAME);
}

/** The PEFT folders of a repo's file tree (root or one sub-folder), root first, then by name. */
export function groupPeftFolders(entries: readonly TreeEntry[]): PeftRepoFolder[] {
  const byPath = new Map(
    entries
      .filter((e) => e.type === "file" && isSafeRepoPath(e.path) && isPeftFilePath(e.path))
      .map((e) => [e.path, e]),
  );
  const listed = (e: TreeEntry): PeftListedFile => ({
    path: e.path,
    sizeBytes: e.lfs?.size ?? e.size ?? 0,
    sha256: e.lfs?.oid ?? e.lfs?.sha256 ?? null,
    gitOid: e.lfs ? null : (e.oid ?? null),
  });
  const out: PeftRepoFolder[] = [];
  for (const e of byPath.values()) {
    if (!e.path.endsWith(PEFT_CONFIG_NAME)) continue;
    const dir = e.path.slice(0, -PEFT_CONFIG_NAME.length).replace(/\/$/, "");
    const weights = byPath.get(dir ? `${dir}/${PEFT_WEIGHTS_NAME}` : PEFT_WEIGHTS_NAME);
    if (weights) out.push({ dir, config: listed(e), weights: listed(weights) });
  }
  return out.sort((a, b) => (a.dir === "" ? -1 : b.dir === "" ? 1 : a.dir.localeCompare(b.dir)));
}

/** The base model a repo names: `cardData.base_model` (string or first of a list), else a `base_model:` tag. */
export function baseModelOf(info: { cardData?: unknown; tags?: unknown }): string | null {
  const card = (info.cardData ?? {}) as { base_model?: unknown };
  const fromCard: unknown = Array.isArray(card.base_model)
    ? (card.base_model as unknown[])[0]
    : card.base_model;
  if (typeof fromCard === "string" && fromCard.trim()) return fromCard.trim();
  const tags = Array.isArray(info.tags) ? info.tags.filter((t): t is string => typeof t === "string") : [];
  const tag =
    tags.find((t) => /^base_model:(adapter|quantized|finetune|merge):/.test(t)) ??
    tags.find((t) => t.startsWith("base_model:"));
  if (!tag) return null;
  return tag.replace(/^base_model:((adapter|quantized|finetune|merge):)?/, "") || null;
}

function isAdapterRepo(info: { tags?: unknown }): boolean {
  const tags = Array.isArray(info.tags) ? info.tags : [];
  return tags.some(
    (t) => t === "lora" || t === "adapter" || (typeof t === "string" && t.startsWith("base_model:adapter:")),
  );
}

/** What to call a failed hub request: the repo (and file) it was for. */
export interface HubTarget {
  repo?: string;
  file?: string;
  what?: string;
}

function targetName(t: HubTarget): string {
  if (t.file && t.repo) return `${t.file} in ${t.repo}`;
  return t.repo ?? t.what ?? "the model hub";
}

/** The ApiError for a hub HTTP status. */
export function hubStatusError(
  status: number,
  target: HubTarget,
  info: { hasToken: boolean; retryAfter?: string | null; errorCode?: string | null; endpoint: string },
): ApiError {
  const name = targetName(target);
  if (status === 401 || status === 403) {
    // The real hub answers 401 for a repo that does not exist (so as not to reveal private ones).
    if (info.errorCode === "RepoNotFound")
      return new ApiError("not_found", `${name} does not exist on ${info.endpoint} (or it is private).`);
    if (!info.hasToken) {
      return new ApiError(
        "forbidden",
        `${name} is gated: it needs a Hugging Face access token. Accept the model's terms on its page, then add a token in the model hub settings.`,
      );
    }
    return new ApiError(
      "forbidden",
      `Your access token has no access to ${name}. Accept the model's terms on its Hugging Face page (or use a token of an account that has), then try again.`,
    );
  }
  if (status === 404 || info.errorCode === "EntryNotFound" || info.errorCode === "RepoNotFound") {
    return new ApiError("not_found", `${name} was not found on ${info.endpoint}.`);
  }
  if (status === 429) {
    const seconds = retryAfterSeconds(info.retryAfter);
    return new ApiError(
      "busy",
      `The model hub is rate-limiting requests; try again ${seconds !== null ? `in ${formatSeconds(seconds)}` : "in a minute"}.`,
    );
  }
  if (status >= 500) {
    return new ApiError("upstream", `The model hub failed (HTTP ${status}) for ${name}; try again later.`);
  }
  return new ApiError("upstream", `The model hub answered HTTP ${status} for ${name}.`);
}

export function retryAfterSeconds(value: string | null | undefined): number | null {
  if (!value) return null;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0) return n;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, Math.round((at - Date.now()) / 1000)) : null;
}

function formatSeconds(s: number): string {
  if (s < 90) return `${Math.max(1, Math.round(s))} s`;
  return `${Math.round(s / 60)} min`;
}

export function networkError(endpoint: string, err: unknown, target: HubTarget = {}): ApiError {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const detail = cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
  return new ApiError(
    "upstream",
    `Cannot reach the model hub at ${endpoint} for ${targetName(target)} (${detail}). Check the network connection${
      endpoint !== DEFAULT_HUB_ENDPOINT ? " and HF_ENDPOINT" : ""
    }.`,
  );
}

/** Redirects followed for one request; more is a loop. */
export const MAX_REDIRECTS = 10;
/** The most bytes read of one JSON answer (a search, a repo's info, one page of its file tree). */
export const MAX_JSON_BYTES = 8 * 1024 * 1024;
/** The most entries read of a repo's file tree (all pages), and GGUF files kept of it. */
export const MAX_TREE_ENTRIES = 100_000;
export const MAX_TREE_GGUFS = 5_000;
/** Pages of a file tree followed (`Link: rel="next"`). */
export const MAX_TREE_PAGES = 200;

/**
 * Hosts besides the endpoint's own that Hugging Face documents for its files (LFS and Xet
 * storage: `cdn-lfs.hf.co`, `cas-bridge.xethub.hf.co`, …): subdomains of huggingface.co and
 * hf.co, over https, and only when the endpoint is the public hub.
 */
const HF_HOSTS = ["huggingface.co", "hf.co"];

/** Whether a request to `url` may carry the access token of a client of `endpoint`. */
export function mayAuthorize(endpoint: string, url: string | URL): boolean {
  const e = new URL(endpoint);
  const u = typeof url === "string" ? new URL(url) : url;
  if (u.protocol === e.protocol && u.host === e.host) return true;
  if (u.protocol !== "https:" || !HF_HOSTS.includes(e.hostname)) return false;
  return HF_HOSTS.some((h) => u.hostname === h || u.hostname.endsWith(`.${h}`));
}

export interface HubClientOptions {
  /** Default: hubEndpoint() (HF_ENDPOINT or the public hub). */
  endpoint?: string;
  /** The stored access token, read for every request (null: none). */
  token?: () => Promise<string | null>;
  fetch?: typeof fetch;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

export interface RemoteFileHead {
  size: number;
  etag: string | null;
  acceptRanges: boolean;
}

/** A response and whether the request that got it carried the token. */
export interface HubResponse {
  res: Response;
  authorized: boolean;
}

export class HubClient {
  readonly endpoint: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(private readonly options: HubClientOptions = {}) {
    this.endpoint = (options.endpoint ?? hubEndpoint()).replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** `Authorization: Bearer …` when a token is stored (for requests to the endpoint's own host). */
  async authHeaders(): Promise<Record<string, string>> {
    const token = await this.options.token?.();
    return token ? { Authorization: `Bearer ${token}` } : {};
  }

  /** Whether a token is stored. */
  async hasToken(): Promise<boolean> {
    return Boolean(await this.options.token?.());
  }

  /** The download URL of a repo file (main branch). */
  fileUrl(repo: string, path: string): string {
    return `${this.endpoint}/${repo}/resolve/main/${path
      .split("/")
      .map((s) => encodeURIComponent(s))
      .join("/")}`;
  }

  /** GGUF repos matching `query`, most downloaded first. */
  async search(query: string, options: { limit?: number; filters?: string[] } = {}): Promise<HubModel[]> {
    const params = new URLSearchParams();
    if (query.trim()) params.set("search", query.trim());
    for (const f of options.filters ?? ["gguf"]) params.append("filter", f);
    params.set("limit", String(options.limit ?? 20));
    params.set("sort", "downloads");
    params.set("direction", "-1");
    for (const e of ["downloads", "likes", "lastModified", "gated", "tags", "cardData"])
      params.append("expand[]", e);
    const body = await this.getJson(`/api/models?${params.toString()}`, { what: "the model search" });
    if (!Array.isArray(body)) throw new ApiError("upstream", "The model hub's search answer was not a list.");
    return (body as unknown[])
      .filter(
        (m): m is Record<string, unknown> =>
          typeof m === "object" && m !== null && typeof (m as { id?: unknown }).id === "string",
      )
      .map((m) => ({
        repo: m.id as string,
        downloads: nonNegInt(m.downloads),
        likes: nonNegInt(m.likes),
        updatedAt: typeof m.lastModified === "string" ? m.lastModified : null,
        gated: m.gated !== undefined && m.gated !== false,
        tags: Array.isArray(m.tags) ? m.tags.filter((t): t is string => typeof t === "string") : [],
        baseModel: baseModelOf(m),
      }))
      .filter((m) => /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(m.repo) && m.repo.length <= 200);
  }

  /** A repo's GGUF files (split parts grouped, quantization, sizes, LFS sha256). */
  async repo(repo: string): Promise<HubRepo> {
    return (await this.repoListing(repo)).repo;
  }

  /** A repo's GGUF files and its PEFT adapter folders, from one listing. */
  async repoListing(repo: string): Promise<{ repo: HubRepo; peft: PeftRepoFolder[] }> {
    const info = await this.getJson(`/api/models/${repo}`, { repo });
    if (typeof info !== "object" || info === null || Array.isArray(info))
      throw new ApiError("upstream", `The model hub's answer about ${repo} was not an object.`);
    const tree = await this.tree(repo);
    const record = info as Record<string, unknown>;
    return {
      repo: {
        repo,
        gated: record.gated !== undefined && record.gated !== false,
        baseModel: baseModelOf(record),
        files: groupGgufFiles(tree, await ggufNames(), isAdapterRepo(record)),
      },
      peft: groupPeftFolders(tree),
    };
  }

  /**
   * The GGUF files of a repo's tree and the files of its PEFT folders (isPeftFilePath); follows
   * the hub's `Link: rel="next"` pages. Bounded: each page is read up to MAX_JSON_BYTES, the tree
   * up to MAX_TREE_ENTRIES entries and MAX_TREE_GGUFS GGUF files, else a clear error instead of
   * minutes of parsing.
   */
  async tree(repo: string): Promise<TreeEntry[]> {
    const entries: TreeEntry[] = [];
    let seen = 0;
    let ggufs = 0;
    let next: string | null = `${this.endpoint}/api/models/${repo}/tree/main?recursive=true&expand=false`;
    const target = { repo, what: `the file list of ${repo}` };
    for (let page = 0; next; page++) {
      if (page >= MAX_TREE_PAGES)
        throw new ApiError(
          "upstream",
          `The model hub's file list of ${repo} goes on for more than ${MAX_TREE_PAGES} pages; the app stops reading there.`,
        );
      const { res } = await this.request(next, target);
      const body = await readJson(res, target);
      if (!Array.isArray(body))
        throw new ApiError("upstream", `The model hub's file list of ${repo} was not a list.`);
      seen += body.length;
      if (seen > MAX_TREE_ENTRIES)
        throw new ApiError(
          "upstream",
          `${repo} lists more than ${MAX_TREE_ENTRIES.toLocaleString("en-US")} files; the app does not read a file list that long.`,
        );
      for (const e of body as TreeEntry[]) {
        if (!e || typeof e.path !== "string") continue;
        if (/\.gguf$/i.test(e.path)) {
          entries.push(e);
          ggufs++;
        } else if (isPeftFilePath(e.path)) entries.push(e);
      }
      if (ggufs > MAX_TREE_GGUFS)
        throw new ApiError(
          "upstream",
          `${repo} lists more than ${MAX_TREE_GGUFS.toLocaleString("en-US")} GGUF files; the app does not read a file list that long.`,
        );
      next = nextLink(res.headers.get("link"), next);
    }
    return entries;
  }

  /** HEAD of a repo file: size and ETag, with the hub's errors (401/403 gated, 404, 429, 5xx) as ApiErrors. */
  async head(repo: string, path: string): Promise<RemoteFileHead> {
    const { res } = await this.request(this.fileUrl(repo, path), { repo, file: path }, "HEAD");
    const size = Number(res.headers.get("x-linked-size") ?? res.headers.get("content-length") ?? 0);
    return {
      size: Number.isFinite(size) ? size : 0,
      etag: res.headers.get("x-linked-etag") ?? res.headers.get("etag"),
      acceptRanges: res.headers.get("accept-ranges") === "bytes",
    };
  }

  /** node-llama-cpp's `hf:` resolution: the file the hub's manifest names for `tag` (a quantization or "latest"). */
  async manifestFile(repo: string, tag = "latest"): Promise<string> {
    const target = { repo, what: `quantization ${tag} of ${repo}` };
    const { res } = await this.request(
      `${this.endpoint}/v2/${repo}/manifests/${encodeURIComponent(tag)}`,
      target,
      "GET",
      { "User-Agent": "llama-cpp" },
      (status) => (status === 400 ? new ApiError("not_found", `${repo} has no ${tag} GGUF file.`) : null),
    );
    const body = (await readJson(res, target).catch(() => null)) as {
      ggufFile?: { rfilename?: unknown };
    } | null;
    const name = body?.ggufFile?.rfilename;
    if (typeof name !== "string" || !name || !isSafeRepoPath(name))
      throw new ApiError("not_found", `${repo} has no ${tag} GGUF file.`);
    return name;
  }

  private async getJson(pathAndQuery: string, target: HubTarget): Promise<unknown> {
    const { res } = await this.request(`${this.endpoint}${pathAndQuery}`, target);
    return readJson(res, target);
  }

  /**
   * One request, redirects followed here: at most MAX_REDIRECTS, http(s) only, the token only to
   * hosts `mayAuthorize` allows (so never after a redirect to another host). No timeout of its
   * own: pass `signal`.
   */
  async open(
    url: string,
    target: HubTarget,
    init: { method?: "GET" | "HEAD"; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<HubResponse> {
    const token = await this.options.token?.();
    let current: URL;
    try {
      current = new URL(url);
    } catch {
      throw new ApiError("upstream", `The address of ${targetName(target)} is not a URL.`);
    }
    for (let hop = 0; ; hop++) {
      if (current.protocol !== "http:" && current.protocol !== "https:") {
        throw new ApiError(
          "upstream",
          `The model hub sent the request for ${targetName(target)} to a ${current.protocol} address; only http and https are followed.`,
        );
      }
      const authorized = Boolean(token) && mayAuthorize(this.endpoint, current);
      const headers: Record<string, string> = { ...init.headers };
      if (authorized) headers.Authorization = `Bearer ${token}`;
      let res: Response;
      try {
        res = await this.fetchImpl(current.href, {
          method: init.method ?? "GET",
          headers,
          redirect: "manual",
          signal: init.signal,
        });
      } catch (err) {
        if (init.signal?.aborted) throw err;
        throw networkError(this.endpoint, err, target);
      }
      const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : null;
      if (!location) return { res, authorized };
      await res.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS) {
        throw new ApiError(
          "upstream",
          `The model hub redirected the request for ${targetName(target)} more than ${MAX_REDIRECTS} times (a redirect loop).`,
        );
      }
      try {
        current = new URL(location, current);
      } catch {
        throw new ApiError(
          "upstream",
          `The model hub redirected the request for ${targetName(target)} to an address that is not a URL.`,
        );
      }
    }
  }

  /** fetch with the token, a timeout and the hub's errors mapped. */
  async request(
    url: string,
    target: HubTarget,
    method: "GET" | "HEAD" = "GET",
    extraHeaders: Record<string, string> = {},
    special?: (status: number) => ApiError | null,
  ): Promise<HubResponse> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    const opened = await this.open(url, target, {
      method,
      headers: { Accept: "application/json", ...extraHeaders },
      signal,
    }).catch((err: unknown) => {
      if (signal.aborted) throw networkError(this.endpoint, err, target);
      throw err;
    });
    const { res, authorized } = opened;
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw (
        special?.(res.status) ??
        hubStatusError(res.status, target, {
          hasToken: authorized || (await this.hasToken()),
          retryAfter: res.headers.get("retry-after"),
          errorCode: res.headers.get("x-error-code"),
          endpoint: this.endpoint,
        })
      );
    }
    return opened;
  }
}

/**
 * Reads an answer of at most `maxBytes` (an announced or actual longer body is refused without
 * reading the rest).
 */
export async function readCapped(
  res: Response,
  target: HubTarget,
  maxBytes = MAX_JSON_BYTES,
): Promise<Buffer> {
  const tooLong = () =>
    new ApiError(
      "upstream",
      `The model hub's answer for ${targetName(target)} is larger than ${Math.round(maxBytes / 1024 / 1024)} MB; the app does not read answers that large.`,
    );
  const announced = Number(res.headers.get("content-length") ?? NaN);
  if (announced > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLong();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  if (res.body) {
    const reader = res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.byteLength;
        if (total > maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw tooLong();
        }
        chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      }
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(
        "upstream",
        `The model hub's answer for ${targetName(target)} broke off (${(err as Error)?.message ?? String(err)}).`,
      );
    }
  }
  return Buffer.concat(chunks, total);
}

/**
 * Bytes [start, start + length) of a repo file, asked for with HTTP Range. A 206 must start at
 * `start`; a hub that ignores the range answers 200 with the file from its first byte, of which
 * only what is needed is read before the answer is dropped. Never more than `length` bytes are
 * kept, whatever the hub sends or announces.
 */
export async function readRange(
  client: HubClient,
  repo: string,
  path: string,
  start: number,
  length: number,
): Promise<Buffer> {
  const target = { repo, file: path };
  const { res } = await client.request(client.fileUrl(repo, path), target, "GET", {
    Range: `bytes=${start}-${start + length - 1}`,
    "Accept-Encoding": "identity",
  });
  let skip = 0;
  if (res.status === 206) {
    const from = /^bytes (\d+)-/.exec(res.headers.get("content-range") ?? "")?.[1];
    if (from === undefined || Number(from) !== start) {
      await res.body?.cancel().catch(() => undefined);
      throw new ApiError(
        "upstream",
        `The model hub answered a request for ${targetName(target)} from byte ${start} with other bytes (${res.headers.get("content-range") ?? "no Content-Range"}).`,
      );
    }
  } else skip = start;
  const out = Buffer.alloc(length);
  let at = 0;
  if (res.body) {
    const reader = res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    try {
      while (at < length) {
        const { done, value } = await reader.read();
        if (done) break;
        const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        const from = Math.min(skip, chunk.length);
        skip -= from;
        at += chunk.copy(out, at, from, Math.min(chunk.length, from + length - at));
      }
    } catch (err) {
      throw new ApiError(
        "upstream",
        `The model hub's answer for ${targetName(target)} broke off (${(err as Error)?.message ?? String(err)}).`,
      );
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }
  if (at < length)
    throw new ApiError(
      "upstream",
      `The model hub sent ${at} of the ${length} bytes asked for of ${targetName(target)} (from byte ${start}).`,
    );
  return out;
}

/**
 * The deepest nesting a hub answer may have. The hub's own answers are a few levels deep (model
 * cards with YAML metadata reach ~10); a 6 MB `[[[[…` under the size cap held the thread in
 * JSON.parse for ~3 s and took +300 MB. jsonDepth is one linear scan, a few ms for 8 MB.
 */
export const MAX_JSON_DEPTH = 64;

/** A JSON answer of at most `maxBytes` (readCapped) and MAX_JSON_DEPTH levels, parsed. */
export async function readJson(
  res: Response,
  target: HubTarget,
  maxBytes = MAX_JSON_BYTES,
): Promise<unknown> {
  const bytes = await readCapped(res, target, maxBytes);
  const text = bytes.toString("utf8");
  if (jsonDepth(text) > MAX_JSON_DEPTH)
    throw new ApiError(
      "upstream",
      `The model hub answered ${targetName(target)} with JSON nested more than ${MAX_JSON_DEPTH} levels deep; it was not read.`,
    );
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(
      "upstream",
      `The model hub answered ${targetName(target)} with something that is not JSON.`,
    );
  }
}

function nonNegInt(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0;
}

/** The `rel="next"` page of a Link header, resolved against the page it came with. */
function nextLink(link: string | null, base: string): string | null {
  if (!link) return null;
  const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  if (!m?.[1]) return null;
  try {
    return new URL(m[1], base).href;
  } catch {
    return null;
  }
}
