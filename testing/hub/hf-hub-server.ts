/**
 * A Hugging Face–shaped file server on loopback, for the hub tests, the e2e and the download
 * bench. It answers the endpoints the app and node-llama-cpp use, like the real hub:
 *
 * - `GET /api/models?search=&filter=gguf&limit=&sort=` — search (array of repos)
 * - `GET /api/models/OWNER/NAME` — repo info (gated, tags with `base_model:…`, cardData, siblings)
 * - `GET /api/models/OWNER/NAME/tree/main?recursive=true` — files with size and LFS sha256
 * - `GET /v2/OWNER/NAME/manifests/TAG` — node-llama-cpp's `hf:` resolution (`ggufFile.rfilename`)
 * - `GET|HEAD /OWNER/NAME/resolve/main/FILE` — the file, with Range, ETag and Accept-Ranges
 *
 * Gated repos answer 401 without `Authorization: Bearer <token>` and 403 with another token.
 * Faults per file (or per exact request path): a status (404, 429 with Retry-After, 500), a
 * dropped connection after N bytes, a corrupted byte, a throttle, a stall at an offset, a body
 * longer than listed, no sha256 in the tree, a redirect; per request path also an answer of
 * the test's own (not JSON, `../` paths, a `link` to page on) or a giant streamed list. Tests
 * wait on bytes served (`waitForBytes`) instead of sleeping.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { copyFile, mkdir, open, rename, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { wrongBaseAdapterSpec } from "../../native/gguf/adapters";
import { demoAdaptersDir, demoBasePath } from "../../native/gguf/demo-files";
import { readGguf } from "../../native/gguf/reader";
import { loraPair, peftConfig, writePeftFolder, type TestTensor } from "../peft/peft-folder";
import { tinyModelSpec } from "../../native/gguf/tiny-model";
import { encodeGgufChunks, gv, writeGguf, type GgufWriteSpec } from "../../native/gguf/writer";

/** The token gated repos accept. */
export const HUB_TEST_TOKEN = "hf_macaron_test_token";

export interface HubRepoFile {
  /** Path inside the repo. */
  path: string;
  /** The file on disk that is served. */
  source: string;
  /** Listed without an LFS sha256 (as the hub lists small non-LFS files). */
  unhashed?: boolean;
}

export interface HubRepoSpec {
  id: string;
  gated?: boolean;
  /** `cardData.base_model` and the `base_model:…` tag. */
  baseModel?: string;
  /** `base_model:adapter:…` instead of `base_model:quantized:…` (LoRA repos). */
  adapterOf?: string;
  tags?: string[];
  downloads?: number;
  likes?: number;
  lastModified?: string;
  files: HubRepoFile[];
}

export type Fault =
  /** Answer with this status (and Retry-After for 429); `times` then heal (default: always). */
  | { kind: "status"; status: number; retryAfterSeconds?: number; times?: number }
  /** Send N body bytes of each response, then destroy the socket; `times` then heal. */
  | { kind: "drop"; afterBytes: number; times?: number }
  /** Flip the byte at this file offset in every response (sha mismatch). */
  | { kind: "corrupt"; offset: number }
  /** At most this many body bytes per second per response. */
  | { kind: "throttle"; bytesPerSecond: number }
  /** Send nothing at or past this file offset until the fault is cleared (connections stay open). */
  | { kind: "stall"; offset: number }
  /**
   * Send `extraBytes` more than the file after its last byte; Content-Length counts them
   * (`announce`, default) or the body is chunked, with no length.
   */
  | { kind: "oversize"; extraBytes: number; announce?: boolean }
  /**
   * Answer GET and HEAD with a 302 to `location` (another host, `file://…`, the same URL): for a
   * repo file, or for an exact request path (`/api/models`, `/api/models/OWNER/NAME`).
   */
  | { kind: "redirect"; location: string }
  /** For an exact request path: this answer instead of the hub's own (not JSON, the wrong shape, a `link` header). */
  | { kind: "answer"; status?: number; headers?: Record<string, string>; body: string }
  /** For an exact request path: a JSON list about `bytes` long, streamed without a length (a giant answer). */
  | { kind: "huge-json"; bytes: number }
  /** For a repo file: its tree entry has no LFS sha256 (as if it were a small non-LFS file). */
  | { kind: "no-sha256" };

export interface HubRequest {
  method: string;
  /** The request path without the query. */
  path: string;
  range?: string;
  authorization?: string;
  status: number;
  /** Body bytes sent (filled in as they go). */
  bytes: number;
}

export interface HubServer {
  /** http://127.0.0.1:PORT (no trailing slash): HF_ENDPOINT for the app and node-llama-cpp. */
  url: string;
  token: string;
  repos: HubRepoSpec[];
  requests: HubRequest[];
  /** Faults for `owner/name/file` (a repo file) or an exact request path (`/api/models`). */
  setFault(path: string, fault: Fault | Fault[] | null): void;
  /** Body bytes of `owner/name/file` served so far (all responses). */
  bytesServed(path: string): number;
  /**
   * Resolves once `bytes` body bytes of `owner/name/file` were served in all responses. Served is
   * not saved (bytes in flight, a refused answer count too); to wait for resumable bytes, stall
   * the file at an offset and watch `resumableBytes()` (core/hub/downloads.ts) of the partial file.
   */
  waitForBytes(path: string, bytes: number): Promise<void>;
  /**
   * Resolves once no client connection is open. After a client is killed, the hub may not yet
   * have read every request it sent: once its connections are closed, each one is in `requests`.
   * A stalled response holds its connection until its fault is cleared.
   */
  connectionsClosed(): Promise<void>;
  /** The resolve URL of a repo file. */
  fileUrl(repo: string, file: string): string;
  close(): Promise<void>;
}

interface FileEntry {
  repo: HubRepoSpec;
  path: string;
  source: string;
  size: number;
  sha256: string;
  gitOid: string;
}

/** sha256 and the git blob id (SHA-1 of `blob <size>\0<bytes>`, the tree's `oid`) of a file. */
async function hashFile(path: string): Promise<{ sha256: string; sha1: string; size: number }> {
  const sha256 = createHash("sha256");
  const sha1 = createHash("sha1").update(`blob ${(await stat(path)).size}\0`);
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    const b = chunk as Buffer;
    sha256.update(b);
    sha1.update(b);
    size += b.length;
  }
  return { sha256: sha256.digest("hex"), sha1: sha1.digest("hex"), size };
}

function isLfs(path: string): boolean {
  return /\.(gguf|safetensors|bin)$/i.test(path);
}

function repoTags(repo: HubRepoSpec): string[] {
  const tags = new Set(repo.tags ?? []);
  if (repo.files.some((f) => f.path.endsWith(".gguf"))) tags.add("gguf");
  if (repo.adapterOf) tags.add(`base_model:adapter:${repo.adapterOf}`);
  if (repo.baseModel) {
    tags.add(`base_model:${repo.baseModel}`);
    if (!repo.adapterOf) tags.add(`base_model:quantized:${repo.baseModel}`);
  }
  return [...tags];
}

function parseRange(header: string | undefined, size: number): { start: number; end: number } | "bad" | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return "bad";
  let start: number;
  let end: number;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || end < start) return "bad";
  return { start, end };
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/**
 * The key of a fault: `owner/name/file` for a repo file (a leading slash dropped), else the
 * request path as it is (`/api/models`). A request's path is looked up the same way.
 */
function faultKey(path: string): string {
  return path.replace(/^\/+(?=[^/]+\/[^/]+\/)/, "");
}

/** Start the server; without `repos`, `defaultHubRepos(dir)` (dir: a fresh temp folder). */
export async function startHubServer(
  options: { repos?: HubRepoSpec[]; dir?: string; token?: string; port?: number } = {},
): Promise<HubServer> {
  let repos = options.repos;
  if (!repos) {
    const dir =
      options.dir ?? join((await import("node:os")).tmpdir(), `macaron-hub-${process.pid}-${Date.now()}`);
    repos = await defaultHubRepos(dir);
  }
  const token = options.token ?? HUB_TEST_TOKEN;
  const files = new Map<string, FileEntry>();
  for (const repo of repos) {
    for (const f of repo.files) {
      const h = await hashFile(f.source);
      files.set(`${repo.id}/${f.path}`, {
        repo,
        path: f.path,
        source: f.source,
        size: h.size,
        sha256: h.sha256,
        gitOid: h.sha1,
      });
    }
  }
  const byId = new Map(repos.map((r) => [r.id, r]));
  const faults = new Map<string, Fault[]>();
  const faultChanged = new Set<() => void>();
  const served = new Map<string, number>();
  const byteWaiters: { path: string; bytes: number; resolve: () => void }[] = [];
  const requests: HubRequest[] = [];
  const sockets = new Set<Socket>();
  const closedWaiters: (() => void)[] = [];

  const addServed = (key: string, n: number) => {
    const total = (served.get(key) ?? 0) + n;
    served.set(key, total);
    for (let i = byteWaiters.length - 1; i >= 0; i--) {
      const w = byteWaiters[i]!;
      if (w.path === key && total >= w.bytes) {
        byteWaiters.splice(i, 1);
        w.resolve();
      }
    }
  };

  /** The status fault for `key`, consuming one of its `times`. */
  const takeStatusFault = (key: string): Extract<Fault, { kind: "status" }> | null => {
    const list = faults.get(key);
    const f = list?.find((x): x is Extract<Fault, { kind: "status" }> => x.kind === "status");
    if (!f) return null;
    if (f.times !== undefined) {
      f.times -= 1;
      if (f.times <= 0)
        faults.set(
          key,
          list!.filter((x) => x !== f),
        );
    }
    return f;
  };

  const sendStatusFault = (res: ServerResponse, f: Extract<Fault, { kind: "status" }>) => {
    const headers: Record<string, string> = {};
    if (f.retryAfterSeconds !== undefined) headers["retry-after"] = String(f.retryAfterSeconds);
    const message =
      f.status === 429 ? "You have been rate-limited; retry later." : `Injected fault (${f.status}).`;
    json(res, f.status, { error: message }, headers);
  };

  const authorized = (req: IncomingMessage): "ok" | "none" | "wrong" => {
    const auth = req.headers.authorization;
    if (!auth) return "none";
    return auth === `Bearer ${token}` ? "ok" : "wrong";
  };

  const repoNotFound = (res: ServerResponse) =>
    json(res, 404, { error: "Repository not found" }, { "x-error-code": "RepoNotFound" });

  const handleList = (url: URL, res: ServerResponse) => {
    const search = (url.searchParams.get("search") ?? "").toLowerCase();
    const filters = url.searchParams
      .getAll("filter")
      .flatMap((f) => f.split(","))
      .filter(Boolean);
    const limit = Math.max(1, Math.min(1000, Number(url.searchParams.get("limit") ?? 50) || 50));
    const sort = url.searchParams.get("sort") ?? "downloads";
    const list = repos
      .filter((r) => r.id.toLowerCase().includes(search))
      .filter((r) => filters.every((f) => repoTags(r).includes(f)))
      .sort((a, b) => {
        if (sort === "likes") return (b.likes ?? 0) - (a.likes ?? 0);
        if (sort === "lastModified") return (b.lastModified ?? "").localeCompare(a.lastModified ?? "");
        return (b.downloads ?? 0) - (a.downloads ?? 0);
      })
      .slice(0, limit)
      .map((r) => ({
        _id: createHash("sha1").update(r.id).digest("hex").slice(0, 24),
        id: r.id,
        modelId: r.id,
        likes: r.likes ?? 0,
        downloads: r.downloads ?? 0,
        lastModified: r.lastModified ?? "2026-01-01T00:00:00.000Z",
        gated: r.gated ? "manual" : false,
        private: false,
        tags: repoTags(r),
      }));
    json(res, 200, list);
  };

  const repoFiles = (repo: HubRepoSpec): FileEntry[] =>
    repo.files.map((f) => files.get(`${repo.id}/${f.path}`)!).filter(Boolean);

  const handleInfo = (repo: HubRepoSpec, res: ServerResponse) => {
    json(res, 200, {
      _id: createHash("sha1").update(repo.id).digest("hex").slice(0, 24),
      id: repo.id,
      modelId: repo.id,
      author: repo.id.split("/")[0],
      sha: createHash("sha1").update(`${repo.id}@main`).digest("hex"),
      lastModified: repo.lastModified ?? "2026-01-01T00:00:00.000Z",
      private: false,
      disabled: false,
      gated: repo.gated ? "manual" : false,
      downloads: repo.downloads ?? 0,
      likes: repo.likes ?? 0,
      tags: repoTags(repo),
      cardData: repo.baseModel ? { base_model: repo.baseModel } : {},
      siblings: repoFiles(repo).map((f) => ({ rfilename: f.path })),
    });
  };

  const handleTree = (repo: HubRepoSpec, res: ServerResponse) => {
    const unhashed = new Set(
      repo.files
        .filter((f) => f.unhashed || faults.get(`${repo.id}/${f.path}`)?.some((x) => x.kind === "no-sha256"))
        .map((f) => f.path),
    );
    json(
      res,
      200,
      repoFiles(repo).map((f) => ({
        type: "file",
        oid: f.gitOid,
        size: f.size,
        path: f.path,
        ...(isLfs(f.path) && !unhashed.has(f.path)
          ? { lfs: { oid: f.sha256, size: f.size, pointerSize: 134 } }
          : {}),
      })),
    );
  };

  const handleManifest = (repo: HubRepoSpec, tag: string, req: IncomingMessage, res: ServerResponse) => {
    if (repo.gated && authorized(req) !== "ok") return gatedRefusal(repo, req, res);
    const ggufs = repoFiles(repo).filter((f) => f.path.endsWith(".gguf"));
    const firstParts = ggufs.filter(
      (f) => !/-(\d{5})-of-\d{5}\.gguf$/.test(f.path) || /-00001-of-/.test(f.path),
    );
    const want = tag.toLowerCase() === "latest" ? "q4_k_m" : tag.toLowerCase();
    const file =
      firstParts.find((f) => f.path.toLowerCase().includes(want)) ??
      (tag.toLowerCase() === "latest" ? firstParts[0] : undefined);
    if (!file) {
      return json(res, 400, { error: `The specified tag is not a valid quantization scheme: ${tag}` });
    }
    json(res, 200, {
      ggufFile: {
        rfilename: file.path,
        blobId: file.gitOid,
        size: file.size,
        lfs: { sha256: file.sha256, size: file.size, pointerSize: 134 },
      },
    });
  };

  const gatedRefusal = (repo: HubRepoSpec, req: IncomingMessage, res: ServerResponse) => {
    if (authorized(req) === "none") {
      return json(
        res,
        401,
        {
          error: `Access to model ${repo.id} is restricted. You must have access to it and be authenticated to access it. Please log in.`,
        },
        { "x-error-code": "GatedRepo" },
      );
    }
    return json(
      res,
      403,
      { error: `Access to model ${repo.id} is restricted and you are not in the authorized list.` },
      { "x-error-code": "GatedRepo" },
    );
  };

  const waitForFaultChange = (res: ServerResponse): Promise<void> =>
    new Promise((resolve) => {
      const done = () => {
        faultChanged.delete(done);
        res.off("close", done);
        resolve();
      };
      faultChanged.add(done);
      res.on("close", done);
    });

  const handleResolve = async (
    entry: FileEntry,
    key: string,
    req: IncomingMessage,
    res: ServerResponse,
    log: HubRequest,
  ) => {
    if (entry.repo.gated && authorized(req) !== "ok") return gatedRefusal(entry.repo, req, res);
    const statusFault = takeStatusFault(key);
    if (statusFault) return sendStatusFault(res, statusFault);
    const redirect = faults.get(key)?.find((f) => f.kind === "redirect");
    if (redirect) {
      res.writeHead(302, { location: redirect.location, "content-length": "0" });
      return res.end();
    }
    const oversize = faults.get(key)?.find((f) => f.kind === "oversize");
    const range = parseRange(req.headers.range, entry.size);
    if (range === "bad") {
      res.writeHead(416, { "content-range": `bytes */${entry.size}` });
      return res.end();
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? entry.size - 1;
    const length = end - start + 1 + (oversize?.extraBytes ?? 0);
    const headers: Record<string, string> = {
      "content-length": String(length),
      "accept-ranges": "bytes",
      etag: `"${entry.sha256}"`,
      "x-linked-etag": `"${entry.sha256}"`,
      "x-linked-size": String(entry.size),
      "x-repo-commit": createHash("sha1").update(`${entry.repo.id}@main`).digest("hex"),
      "content-type": "application/octet-stream",
      "content-disposition": `inline; filename*=UTF-8''${encodeURIComponent(entry.path.split("/").pop()!)}; filename="${entry.path.split("/").pop()!}"`,
    };
    if (range) headers["content-range"] = `bytes ${start}-${end}/${entry.size}`;
    if (oversize?.announce === false) delete headers["content-length"];
    res.writeHead(range ? 206 : 200, headers);
    // Headers go out at once, as from a real server (a stalled body must not hold them back).
    res.flushHeaders();
    log.status = range ? 206 : 200;
    if (req.method === "HEAD") return res.end();

    const handle = await open(entry.source, "r");
    let closed = false;
    res.on("close", () => {
      closed = true;
    });
    try {
      let pos = start;
      let sentHere = 0;
      const began = Date.now();
      while (pos <= end && !closed) {
        const list = faults.get(key) ?? [];
        const throttle = list.find((f) => f.kind === "throttle");
        const stall = list.find((f) => f.kind === "stall");
        const drop = list.find((f) => f.kind === "drop");
        const corrupt = list.filter((f) => f.kind === "corrupt");
        if (stall && pos >= stall.offset) {
          await waitForFaultChange(res);
          continue;
        }
        let n = Math.min(64 * 1024, end - pos + 1);
        if (throttle) n = Math.min(n, Math.max(1024, Math.floor(throttle.bytesPerSecond / 20)));
        if (stall && pos < stall.offset) n = Math.min(n, stall.offset - pos);
        if (drop) n = Math.min(n, Math.max(0, drop.afterBytes - sentHere));
        if (drop && n === 0) {
          if (drop.times !== undefined) {
            drop.times -= 1;
            if (drop.times <= 0)
              faults.set(
                key,
                (faults.get(key) ?? []).filter((x) => x !== drop),
              );
          }
          res.socket?.destroy();
          return;
        }
        const buf = Buffer.alloc(n);
        const { bytesRead } = await handle.read(buf, 0, n, pos);
        if (bytesRead <= 0) break;
        const chunk = buf.subarray(0, bytesRead);
        for (const c of corrupt) {
          if (c.offset >= pos && c.offset < pos + bytesRead)
            chunk[c.offset - pos] = chunk[c.offset - pos]! ^ 0xff;
        }
        if (throttle) {
          const due = began + ((sentHere + bytesRead) / throttle.bytesPerSecond) * 1000;
          const wait = due - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (closed) break;
        }
        const ok = res.write(chunk);
        pos += bytesRead;
        sentHere += bytesRead;
        log.bytes += bytesRead;
        addServed(key, bytesRead);
        if (!ok && !closed) await drained(res);
      }
      // The oversize fault's extra bytes, past the end of the file.
      for (let extra = oversize?.extraBytes ?? 0; extra > 0 && !closed;) {
        const n = Math.min(64 * 1024, extra);
        const ok = res.write(Buffer.alloc(n, 0x41));
        extra -= n;
        log.bytes += n;
        if (!ok && !closed) await drained(res);
      }
      if (!closed) res.end();
    } finally {
      await handle.close();
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = url.pathname;
    const log: HubRequest = {
      method: req.method ?? "GET",
      path,
      range: req.headers.range,
      authorization: req.headers.authorization,
      status: 0,
      bytes: 0,
    };
    requests.push(log);
    res.on("finish", () => {
      if (log.status === 0) log.status = res.statusCode;
    });
    res.on("close", () => {
      if (log.status === 0) log.status = res.statusCode;
    });
    const pathKey = faultKey(path);
    const pathFault = takeStatusFault(pathKey);
    if (pathFault) return sendStatusFault(res, pathFault);
    const own = faults.get(pathKey)?.find((f) => f.kind !== "status");
    if (own && (req.method === "GET" || req.method === "HEAD")) {
      if (own.kind === "redirect") {
        res.writeHead(302, { location: own.location, "content-length": "0" });
        return res.end();
      }
      if (own.kind === "answer") {
        res.writeHead(own.status ?? 200, { "content-type": "application/json", ...own.headers });
        return res.end(own.body);
      }
      if (own.kind === "huge-json") return streamHugeJson(res, own.bytes);
    }
    const seg = path
      .split("/")
      .slice(1)
      .map((s) => decodeURIComponent(s));

    if (req.method === "GET" && path === "/api/models") return handleList(url, res);
    if (req.method === "GET" && seg[0] === "api" && seg[1] === "models" && seg.length >= 4) {
      const repo = byId.get(`${seg[2]}/${seg[3]}`);
      if (!repo) return repoNotFound(res);
      if (seg.length === 4) return handleInfo(repo, res);
      if (seg[4] === "tree") return handleTree(repo, res);
    }
    if (req.method === "GET" && seg[0] === "v2" && seg[3] === "manifests" && seg.length === 5) {
      const repo = byId.get(`${seg[1]}/${seg[2]}`);
      if (!repo) return repoNotFound(res);
      return handleManifest(repo, seg[4]!, req, res);
    }
    if ((req.method === "GET" || req.method === "HEAD") && seg[2] === "resolve" && seg.length >= 5) {
      const repoId = `${seg[0]}/${seg[1]}`;
      const repo = byId.get(repoId);
      if (!repo) return repoNotFound(res);
      const file = seg.slice(4).join("/");
      const key = `${repoId}/${file}`;
      const entry = files.get(key);
      if (!entry) {
        if (repo.gated && authorized(req) !== "ok") return gatedRefusal(repo, req, res);
        return json(res, 404, { error: "Entry not found" }, { "x-error-code": "EntryNotFound" });
      }
      return handleResolve(entry, key, req, res, log);
    }
    json(res, 404, { error: "Not found" });
  };

  /** A JSON list of padded repos, about `bytes` long, chunked (no length), until the client goes. */
  const streamHugeJson = async (res: ServerResponse, bytes: number) => {
    const item = JSON.stringify({ id: "evil/m", tags: ["gguf"], cardData: { pad: "x".repeat(4000) } });
    let closed = false;
    res.on("close", () => (closed = true));
    res.writeHead(200, { "content-type": "application/json" });
    res.write("[");
    for (let sent = 1; sent < bytes && !closed; sent += item.length + 1) {
      if (!res.write(`${item},`) && !closed) await drained(res);
    }
    if (!closed) res.end(`${item}]`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(err) });
      else res.destroy();
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => {
      sockets.delete(s);
      if (sockets.size === 0) for (const resolve of closedWaiters.splice(0)) resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    token,
    repos,
    requests,
    setFault(path, fault) {
      const key = faultKey(path);
      if (fault === null) faults.delete(key);
      else
        faults.set(
          key,
          (Array.isArray(fault) ? fault : [fault]).map((f) => ({ ...f })),
        );
      for (const notify of [...faultChanged]) notify();
    },
    bytesServed: (path) => served.get(path) ?? 0,
    waitForBytes(path, bytes) {
      if ((served.get(path) ?? 0) >= bytes) return Promise.resolve();
      return new Promise((resolve) => byteWaiters.push({ path, bytes, resolve }));
    },
    connectionsClosed: () =>
      sockets.size === 0 ? Promise.resolve() : new Promise((resolve) => closedWaiters.push(resolve)),
    fileUrl: (repo, file) =>
      `${url}/${repo}/resolve/main/${file
        .split("/")
        .map((s) => encodeURIComponent(s))
        .join("/")}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const notify of [...faultChanged]) notify();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// The generated repos.

/** Rewrites a u32 metadata value of `key` as u16 in an encoded GGUF header (llama.cpp's split keys are u16). */
function u32ToU16(header: Buffer, key: string): Buffer {
  const keyBytes = Buffer.from(key, "utf8");
  const needle = Buffer.alloc(8 + keyBytes.length + 4);
  needle.writeBigUInt64LE(BigInt(keyBytes.length), 0);
  keyBytes.copy(needle, 8);
  needle.writeUInt32LE(4, 8 + keyBytes.length); // GGUF_TYPE_UINT32
  const at = header.indexOf(needle);
  if (at < 0) throw new Error(`split header: ${key} not found`);
  const valueAt = at + needle.length;
  const value = header.readUInt32LE(valueAt);
  const replacement = Buffer.alloc(needle.length + 2);
  needle.copy(replacement);
  replacement.writeUInt32LE(2, 8 + keyBytes.length); // GGUF_TYPE_UINT16
  replacement.writeUInt16LE(value, needle.length);
  return Buffer.concat([header.subarray(0, at), replacement, header.subarray(valueAt + 4)]);
}

/** Lengthens the (empty) string value of `key` by `n` spaces: keeps the header's length after u32ToU16. */
function growString(header: Buffer, key: string, n: number): Buffer {
  const keyBytes = Buffer.from(key, "utf8");
  const needle = Buffer.alloc(8 + keyBytes.length + 4 + 8);
  needle.writeBigUInt64LE(BigInt(keyBytes.length), 0);
  keyBytes.copy(needle, 8);
  needle.writeUInt32LE(8, 8 + keyBytes.length); // GGUF_TYPE_STRING
  needle.writeBigUInt64LE(0n, 12 + keyBytes.length);
  const at = header.indexOf(needle);
  if (at < 0) throw new Error(`split header: ${key} not found`);
  const replacement = Buffer.from(needle);
  replacement.writeBigUInt64LE(BigInt(n), 12 + keyBytes.length);
  return Buffer.concat([
    header.subarray(0, at),
    replacement,
    Buffer.alloc(n, 0x20),
    header.subarray(at + needle.length),
  ]);
}

/**
 * Writes `spec` as a llama.cpp split GGUF (gguf-split's layout): part 1 holds the metadata and
 * the first tensors, later parts only `split.*` and their tensors; every part carries
 * `split.no` (u16), `split.count` (u16) and `split.tensors.count` (i32). Returns the part paths.
 */
export async function writeSplitGguf(prefix: string, spec: GgufWriteSpec, parts: number): Promise<string[]> {
  const per = Math.ceil(spec.tensors.length / parts);
  const paths: string[] = [];
  for (let i = 0; i < parts; i++) {
    const split = {
      "split.no": gv.u32(i),
      "split.count": gv.u32(parts),
      "split.tensors.count": gv.i32(spec.tensors.length),
      "macaron.split_pad": gv.str(""),
    };
    const partSpec: GgufWriteSpec = {
      metadata:
        i === 0
          ? { "general.alignment": gv.u32(32), ...spec.metadata, ...split }
          : { "general.alignment": gv.u32(32), ...split },
      tensors: spec.tensors.slice(i * per, (i + 1) * per),
    };
    const path = `${prefix}-${String(i + 1).padStart(5, "0")}-of-${String(parts).padStart(5, "0")}.gguf`;
    const tmp = `${path}.tmp`;
    const handle = await open(tmp, "w");
    try {
      let first = true;
      for (const chunk of encodeGgufChunks(partSpec)) {
        if (first) {
          let header = u32ToU16(chunk, "split.no");
          header = u32ToU16(header, "split.count");
          header = growString(header, "macaron.split_pad", chunk.length - header.length);
          if (header.length !== chunk.length) throw new Error("split header: length changed");
          await handle.write(header);
          first = false;
        } else await handle.write(chunk);
      }
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
    paths.push(path);
  }
  return paths;
}

/** Writes deterministic filler bytes (non-GGUF files, the bench file). */
export async function writeBlob(path: string, size: number, seed = 1): Promise<void> {
  if (existsSync(path) && (await stat(path)).size === size) return;
  const handle = await open(`${path}.tmp`, "w");
  try {
    const block = Buffer.alloc(1 << 20);
    let x = seed >>> 0 || 1;
    for (let i = 0; i < block.length; i += 4) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      block.writeUInt32LE(x >>> 0, i);
    }
    for (let written = 0; written < size; written += block.length) {
      await handle.write(block, 0, Math.min(block.length, size - written));
    }
  } finally {
    await handle.close();
  }
  await rename(`${path}.tmp`, path);
}

async function once(path: string, make: () => Promise<unknown>): Promise<string> {
  if (!existsSync(path)) await make();
  return path;
}

/** The demo base's repo: what the e2e downloads and chats with. */
export const DEMO_REPO = "macaron-test/demo-chat-GGUF";
export const DEMO_BASE_MODEL = "macaron-test/demo-chat";
export const SMALL_REPO = "macaron-test/small-chat-GGUF";
export const SPLIT_REPO = "macaron-test/split-tiny-GGUF";
export const GATED_REPO = "macaron-test/gated-demo-GGUF";
export const NO_GGUF_REPO = "macaron-test/no-gguf";
export const ADAPTER_REPO = "macaron-test/demo-chat-lora-GGUF";
export const WRONG_ADAPTER_REPO = "macaron-test/other-base-lora-GGUF";
export const PEFT_REPO = "macaron-test/demo-chat-peft-lora";
export const WRONG_PEFT_REPO = "macaron-test/wide-peft-lora";

/**
 * PEFT LoRA folders for the demo base (testing/peft/peft-folder.ts): `fit` on layers 0 and 1's
 * q_proj and v_proj, `vOnly` on v_proj alone, `wide` shaped for a base twice as wide.
 */
async function writeDemoPeftFolders(dir: string, demo: string) {
  const base = await readGguf(demo);
  const dims = (name: string) => {
    const t = base.tensors.find((x) => x.name === name);
    if (!t) throw new Error(`the demo base has no ${name}`);
    return t.dims as [number, number];
  };
  const pair = (layer: number, proj: "q_proj" | "v_proj", seed: number, widen = 1) => {
    const [nIn, nOut] = dims(`blk.${layer}.attn_${proj[0]}.weight`);
    return loraPair(`model.layers.${layer}.self_attn.${proj}`, nIn * widen, nOut * widen, 4, seed);
  };
  const config = peftConfig(4, {
    base_model_name_or_path: DEMO_BASE_MODEL,
    target_modules: ["q_proj", "v_proj"],
  });
  const folder = async (name: string, tensors: readonly TestTensor[]) =>
    existsSync(join(dir, name, "adapter_model.safetensors"))
      ? join(dir, name)
      : writePeftFolder(join(dir, name), config, tensors);
  return {
    fit: await folder("peft-fit", [
      ...pair(0, "q_proj", 1),
      ...pair(0, "v_proj", 3),
      ...pair(1, "q_proj", 5),
    ]),
    vOnly: await folder("peft-v-only", [...pair(1, "v_proj", 7)]),
    wide: await folder("peft-wide", [...pair(0, "q_proj", 9, 2)]),
  };
}

/**
 * The standard test repos, their files generated (or copied) into `dir` once:
 * - DEMO_REPO: the trained demo base as `demo-chat-Q8_0.gguf` and `demo-chat-F32.gguf` (same bytes)
 * - SMALL_REPO: the "small" generated model (~10.5 MiB, more than two 5 MiB steps)
 * - SPLIT_REPO: the tiny generated model as a two-part split GGUF
 * - GATED_REPO: the demo base behind a token
 * - NO_GGUF_REPO: safetensors and a README, no GGUF
 * - ADAPTER_REPO: the demo's four trained LoRA adapters and manifests, `base_model` = the demo base
 * - WRONG_ADAPTER_REPO: a LoRA whose hub metadata claims the demo base but whose shapes do not fit
 * - PEFT_REPO: PEFT LoRA folders for the demo base (no GGUF): one at the root, one in `v-only/`
 * - WRONG_PEFT_REPO: a PEFT LoRA folder whose hub metadata claims the demo base, shaped for another
 */
export async function defaultHubRepos(dir: string): Promise<HubRepoSpec[]> {
  await mkdir(dir, { recursive: true });
  const demo = await once(join(dir, "demo-base.gguf"), () =>
    copyFile(demoBasePath(), join(dir, "demo-base.gguf")),
  );
  const small = await once(join(dir, "small.gguf"), () =>
    writeGguf(join(dir, "small.gguf"), tinyModelSpec("small")),
  );
  const splitPrefix = join(dir, "split-tiny-Q8_0");
  if (!existsSync(`${splitPrefix}-00002-of-00002.gguf`))
    await writeSplitGguf(splitPrefix, tinyModelSpec("tiny"), 2);
  const safetensors = join(dir, "model.safetensors");
  await writeBlob(safetensors, 4096, 7);
  const readme = join(dir, "README.md");
  await writeFile(readme, "# Test repo\n\nServed by the Macaron test hub.\n");
  const config = join(dir, "config.json");
  await writeFile(config, `${JSON.stringify({ architectures: ["LlamaForCausalLM"] })}\n`);
  const wrong = await once(join(dir, "wrong-base-lora.gguf"), () =>
    writeGguf(join(dir, "wrong-base-lora.gguf"), wrongBaseAdapterSpec()),
  );
  const peft = await writeDemoPeftFolders(dir, demo);
  const peftFiles = (folder: string, under = "") =>
    ["adapter_config.json", "adapter_model.safetensors"].map((name) => ({
      path: `${under}${name}`,
      source: join(folder, name),
    }));
  const adapters = demoAdaptersDir();
  const adapterFiles = ["chat", "coding", "agent", "ui"].flatMap((id) => [
    { path: `${id}-lora.gguf`, source: join(adapters, `${id}.gguf`) },
    { path: `${id}-lora.json`, source: join(adapters, `${id}.json`) },
  ]);
  return [
    {
      id: DEMO_REPO,
      baseModel: DEMO_BASE_MODEL,
      tags: ["llama", "text-generation", "conversational"],
      downloads: 5000,
      likes: 50,
      lastModified: "2026-11-20T10:00:00.000Z",
      files: [
        { path: "README.md", source: readme },
        { path: "demo-chat-Q8_0.gguf", source: demo },
        { path: "demo-chat-F32.gguf", source: demo },
      ],
    },
    {
      id: SMALL_REPO,
      baseModel: "macaron-test/small-chat",
      tags: ["llama", "text-generation"],
      downloads: 1200,
      likes: 3,
      files: [{ path: "small-chat-F32.gguf", source: small }],
    },
    {
      id: SPLIT_REPO,
      baseModel: "macaron-test/split-tiny",
      tags: ["llama"],
      downloads: 800,
      likes: 2,
      files: [
        { path: "split-tiny-Q8_0-00001-of-00002.gguf", source: `${splitPrefix}-00001-of-00002.gguf` },
        { path: "split-tiny-Q8_0-00002-of-00002.gguf", source: `${splitPrefix}-00002-of-00002.gguf` },
      ],
    },
    {
      id: GATED_REPO,
      gated: true,
      baseModel: DEMO_BASE_MODEL,
      tags: ["llama"],
      downloads: 300,
      likes: 1,
      files: [{ path: "gated-demo-Q8_0.gguf", source: demo }],
    },
    {
      id: NO_GGUF_REPO,
      tags: ["safetensors", "llama"],
      downloads: 100,
      files: [
        { path: "README.md", source: readme },
        { path: "config.json", source: config },
        { path: "model.safetensors", source: safetensors },
      ],
    },
    {
      id: ADAPTER_REPO,
      baseModel: DEMO_BASE_MODEL,
      adapterOf: DEMO_BASE_MODEL,
      tags: ["lora", "llama"],
      downloads: 90,
      files: adapterFiles,
    },
    {
      id: WRONG_ADAPTER_REPO,
      baseModel: DEMO_BASE_MODEL,
      adapterOf: DEMO_BASE_MODEL,
      tags: ["lora", "llama"],
      downloads: 10,
      files: [{ path: "other-base-lora.gguf", source: wrong }],
    },
    {
      id: PEFT_REPO,
      baseModel: DEMO_BASE_MODEL,
      adapterOf: DEMO_BASE_MODEL,
      tags: ["lora", "peft", "llama"],
      downloads: 40,
      files: [
        { path: "README.md", source: readme },
        ...peftFiles(peft.fit),
        ...peftFiles(peft.vOnly, "v-only/"),
      ],
    },
    {
      id: WRONG_PEFT_REPO,
      baseModel: DEMO_BASE_MODEL,
      adapterOf: DEMO_BASE_MODEL,
      tags: ["lora", "peft", "llama"],
      downloads: 5,
      files: peftFiles(peft.wide),
    },
  ];
}

/** Until `res` can take more (drain) or is gone (close). */
function drained(res: {
  on(e: string, f: () => void): unknown;
  off(e: string, f: () => void): unknown;
}): Promise<void> {
  return new Promise<void>((r) => {
    const go = () => {
      res.off("drain", go);
      res.off("close", go);
      r();
    };
    res.on("drain", go);
    res.on("close", go);
  });
}
