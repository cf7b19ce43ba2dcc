/**
 * The Hugging Face hub client: search, repo files (LFS sha256, split GGUFs grouped, the
 * quantization from the file name), resolve URLs and the access-token header. The endpoint is
 * HF_ENDPOINT when set (the test hub, a mirror), else https://huggingface.co — the same rule
 * node-llama-cpp's `hf:` URIs follow. Every failure is an ApiError with a sentence for the user.
 */
import { ggufFileQuantNames } from "node-llama-cpp";
import { ApiError, type HubFile, type HubModel, type HubRepo } from "../../api";

export const DEFAULT_HUB_ENDPOINT = "https://huggingface.co";

/** HF_ENDPOINT (no trailing slash) or the public hub. */
export function hubEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env.HF_ENDPOINT?.trim();
  if (raw && /^https?:\/\//i.test(raw)) return raw.replace(/\/+$/, "");
  return DEFAULT_HUB_ENDPOINT;
}

const QUANTS = [...ggufFileQuantNames].map((q) => q.toUpperCase());
const QUANT_SET = new Set(QUANTS);
const QUANT_LIKE = /^(I?Q\d+(?:_[A-Z0-9]+)*|T?Q\d_\d|BF16|F16|F32|F64|FP16|FP32|MXFP4(?:_MOE)?)$/i;
const SPLIT_PART = /-(\d{5})-of-(\d{5})\.gguf$/i;

/** "Q4_K_M", "F16", … from a GGUF file name; null when the name says none. */
export function parseQuant(fileName: string): string | null {
  const base = (fileName.split("/").pop() ?? fileName).replace(SPLIT_PART, ".gguf").replace(/\.gguf$/i, "");
  const tokens = base.split(/[-.\s]+/).filter(Boolean);
  for (let i = tokens.length - 1; i >= 0; i--) {
    const t = tokens[i]!.toUpperCase();
    // "UD-Q4_K_XL", "Q4_K_M"; also "model_q4_k_m" (underscore-joined names).
    if (QUANT_SET.has(t) || QUANT_LIKE.test(t)) return t;
    const tail = QUANTS.filter((q) => t.endsWith(`_${q}`)).sort((a, b) => b.length - a.length)[0];
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

const ADAPTER_NAME = /(^|[-_./])(lora|adapter|adapters)([-_./]|$)/i;

export interface TreeEntry {
  type: string;
  path: string;
  size?: number;
  oid?: string;
  lfs?: { oid?: string; sha256?: string; size?: number };
}

/** The GGUF models of a repo's file tree: split parts grouped under their first part. */
export function groupGgufFiles(entries: readonly TreeEntry[], repoIsAdapter = false): HubFile[] {
  const ggufs = entries.filter((e) => e.type === "file" && /\.gguf$/i.test(e.path));
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
      quant: parseQuant(e.path),
      sizeBytes: parts.reduce((s, p) => s + p.sizeBytes, 0),
      parts,
      isAdapter: repoIsAdapter || ADAPTER_NAME.test(e.path.split("/").pop() ?? ""),
    });
  }
  return out.sort((a, b) => a.sizeBytes - b.sizeBytes || a.path.localeCompare(b.path));
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
    return new ApiError("internal", `The model hub failed (HTTP ${status}) for ${name}; try again later.`);
  }
  return new ApiError("internal", `The model hub answered HTTP ${status} for ${name}.`);
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
    "internal",
    `Cannot reach the model hub at ${endpoint} for ${targetName(target)} (${detail}). Check the network connection${
      endpoint !== DEFAULT_HUB_ENDPOINT ? " and HF_ENDPOINT" : ""
    }.`,
  );
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

export class HubClient {
  readonly endpoint: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(private readonly options: HubClientOptions = {}) {
    this.endpoint = (options.endpoint ?? hubEndpoint()).replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** `Authorization: Bearer …` when a token is stored. */
  async authHeaders(): Promise<Record<string, string>> {
    const token = await this.options.token?.();
    return token ? { Authorization: `Bearer ${token}` } : {};
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
    if (!Array.isArray(body)) throw new ApiError("internal", "The model hub's search answer was not a list.");
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
      .filter((m) => /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(m.repo));
  }

  /** A repo's GGUF files (split parts grouped, quantization, sizes, LFS sha256). */
  async repo(repo: string): Promise<HubRepo> {
    const info = (await this.getJson(`/api/models/${repo}`, { repo })) as Record<string, unknown>;
    const tree = await this.tree(repo);
    return {
      repo,
      gated: info.gated !== undefined && info.gated !== false,
      baseModel: baseModelOf(info),
      files: groupGgufFiles(tree, isAdapterRepo(info)),
    };
  }

  /** Every file of a repo (follows the hub's `Link: rel="next"` pages). */
  async tree(repo: string): Promise<TreeEntry[]> {
    const entries: TreeEntry[] = [];
    let next: string | null = `${this.endpoint}/api/models/${repo}/tree/main?recursive=true&expand=false`;
    for (let page = 0; next && page < 100; page++) {
      const res = await this.request(next, { repo });
      const body: unknown = await res.json().catch(() => null);
      if (!Array.isArray(body))
        throw new ApiError("internal", `The model hub's file list of ${repo} was not a list.`);
      for (const e of body as TreeEntry[]) if (e && typeof e.path === "string") entries.push(e);
      next = nextLink(res.headers.get("link"));
    }
    return entries;
  }

  /** HEAD of a repo file: size and ETag, with the hub's errors (401/403 gated, 404, 429, 5xx) as ApiErrors. */
  async head(repo: string, path: string): Promise<RemoteFileHead> {
    const res = await this.request(this.fileUrl(repo, path), { repo, file: path }, "HEAD");
    const size = Number(res.headers.get("x-linked-size") ?? res.headers.get("content-length") ?? 0);
    return {
      size: Number.isFinite(size) ? size : 0,
      etag: res.headers.get("x-linked-etag") ?? res.headers.get("etag"),
      acceptRanges: res.headers.get("accept-ranges") === "bytes",
    };
  }

  /** node-llama-cpp's `hf:` resolution: the file the hub's manifest names for `tag` (a quantization or "latest"). */
  async manifestFile(repo: string, tag = "latest"): Promise<string> {
    const res = await this.request(
      `${this.endpoint}/v2/${repo}/manifests/${encodeURIComponent(tag)}`,
      { repo, what: `quantization ${tag} of ${repo}` },
      "GET",
      { "User-Agent": "llama-cpp" },
      (status) => (status === 400 ? new ApiError("not_found", `${repo} has no ${tag} GGUF file.`) : null),
    );
    const body = (await res.json().catch(() => null)) as { ggufFile?: { rfilename?: unknown } } | null;
    const name = body?.ggufFile?.rfilename;
    if (typeof name !== "string" || !name)
      throw new ApiError("not_found", `${repo} has no ${tag} GGUF file.`);
    return name;
  }

  private async getJson(pathAndQuery: string, target: HubTarget): Promise<unknown> {
    const res = await this.request(`${this.endpoint}${pathAndQuery}`, target);
    try {
      return await res.json();
    } catch {
      throw new ApiError(
        "internal",
        `The model hub answered ${targetName(target)} with something that is not JSON.`,
      );
    }
  }

  /** fetch with the token, a timeout and the hub's errors mapped. */
  async request(
    url: string,
    target: HubTarget,
    method: "GET" | "HEAD" = "GET",
    extraHeaders: Record<string, string> = {},
    special?: (status: number) => ApiError | null,
  ): Promise<Response> {
    const auth = await this.authHeaders();
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers: { Accept: "application/json", ...auth, ...extraHeaders },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw networkError(this.endpoint, err, target);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw (
        special?.(res.status) ??
        hubStatusError(res.status, target, {
          hasToken: "Authorization" in auth,
          retryAfter: res.headers.get("retry-after"),
          errorCode: res.headers.get("x-error-code"),
          endpoint: this.endpoint,
        })
      );
    }
    return res;
  }
}

function nonNegInt(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0;
}

function nextLink(link: string | null): string | null {
  if (!link) return null;
  const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  return m?.[1] ?? null;
}
