/**
 * Headless `--model`: a path, or one of node-llama-cpp's URI forms, downloaded into
 * `<dataDir>/models` first (resuming an interrupted download, sha256 checked):
 *
 * - `hf:OWNER/REPO[:QUANT]` — the file the hub's manifest names for QUANT (default "latest",
 *   i.e. Q4_K_M when there is one), as node-llama-cpp resolves it
 * - `hf:OWNER/REPO/PATH/FILE.gguf` — that file (also `huggingface:`, `hf.co/…`)
 * - `https://HUB/OWNER/REPO/resolve/main/FILE.gguf` (or `/blob/main/`) — that file
 * - any other `https://…/FILE.gguf` — downloaded as is (no hub hash to check)
 *
 * The hub is HF_ENDPOINT when set. The access token is HF_TOKEN, else the stored one.
 */
import { mkdir, rename, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { DownloadManager } from "./downloads";
import { httpDownloader, PARTIAL_SUFFIX } from "./file-transfer";
import { HubClient, hubEndpoint } from "./hf-client";
import type { TokenStore } from "./token-store";

export interface ModelSource {
  repo: string;
  /** A file path in the repo, or null to ask the manifest for `tag`. */
  file: string | null;
  tag: string;
}

/** True for the URI forms `--model` downloads (not a local path). */
export function isModelUri(model: string): boolean {
  return /^(hf:|huggingface:|hf\.co\/|huggingface\.co\/|https?:\/\/)/i.test(model.trim());
}

/** The hub repo and file (or tag) a URI names; null for a plain URL off the hub. */
export function parseHubUri(uri: string, endpoint: string = hubEndpoint()): ModelSource | null {
  const text = uri.trim();
  const prefix = /^(hf:\/\/|huggingface:\/\/|hf:|huggingface:|hf\.co\/|huggingface\.co\/)/i.exec(text);
  if (prefix) {
    const rest = text.slice(prefix[0].length).replace(/#.*$/, "");
    const [owner, model, ...path] = rest.split("/");
    if (!owner || !model) throw new Error(`Not a Hugging Face URI: ${uri} (expected hf:OWNER/REPO[:QUANT])`);
    if (path.length > 0 && path.join("/") !== "")
      return { repo: `${owner}/${model}`, file: path.join("/"), tag: "latest" };
    const [name, ...tag] = model.split(":");
    return { repo: `${owner}/${name}`, file: null, tag: tag.join(":").trim() || "latest" };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  const hubHosts = new Set([new URL(endpoint).host, "huggingface.co", "hf.co"]);
  if (!hubHosts.has(url.host)) return null;
  const seg = url.pathname.split("/").slice(1).map(decodeURIComponent);
  if (seg.length >= 5 && (seg[2] === "resolve" || seg[2] === "blob")) {
    return { repo: `${seg[0]}/${seg[1]}`, file: seg.slice(4).join("/"), tag: "latest" };
  }
  if (seg.length === 2 && seg[0] && seg[1]) return { repo: `${seg[0]}/${seg[1]}`, file: null, tag: "latest" };
  return null;
}

export interface ResolveModelOptions {
  dataDir: string;
  tokenStore?: TokenStore;
  endpoint?: string;
  /** One progress line at a time (headless prints them on stderr). */
  onLine?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

function mb(n: number): string {
  return `${(n / 1e6).toFixed(1)} MB`;
}

/**
 * The local path for `model`: itself when it is a path, else the downloaded file (first part
 * of a split GGUF). Throws with the reason when the download fails.
 */
export async function resolveModelArg(model: string, options: ResolveModelOptions): Promise<string> {
  if (!isModelUri(model)) return model;
  const env = options.env ?? process.env;
  const endpoint = options.endpoint ?? hubEndpoint(env);
  const envToken = env.HF_TOKEN?.trim() || null;
  const client = new HubClient({
    endpoint,
    token: async () => envToken ?? (await options.tokenStore?.get()) ?? null,
  });
  const say = options.onLine ?? (() => undefined);
  const source = parseHubUri(model, endpoint);
  if (!source) {
    // A plain URL off the hub: the same downloader (it resumes too), no hash to check; the
    // token goes only where HubClient allows it (the hub's own hosts).
    const dir = join(options.dataDir, "models", "urls");
    const name = basename(new URL(model).pathname) || "model.gguf";
    const path = join(dir, name);
    const { res } = await client.request(model, { what: name }, "HEAD");
    const size = Number(res.headers.get("content-length") ?? NaN);
    if (!Number.isSafeInteger(size) || size <= 0)
      throw new Error(
        `${model} does not say how large the file is (no Content-Length); it is not downloaded.`,
      );
    if ((await stat(path).catch(() => null))?.size === size) return path;
    await mkdir(dir, { recursive: true });
    say(`download ${model}: starting`);
    let lastLine = 0;
    const downloader = await httpDownloader({
      parts: [{ url: model, path, sizeBytes: size }],
      open: (url, target, init) => client.open(url, target, init),
      target: { what: name },
      onProgress: ({ totalSize, downloadedSize }) => {
        if (Date.now() - lastLine < 1000) return;
        lastLine = Date.now();
        say(
          `download ${name}: ${Math.floor((downloadedSize / Math.max(1, totalSize)) * 100)}% (${mb(downloadedSize)} of ${mb(totalSize)})`,
        );
      },
    });
    await downloader.download();
    await rename(`${path}${PARTIAL_SUFFIX}`, path);
    say(`download ${name}: done (${path})`);
    return path;
  }
  const file = source.file ?? (await client.manifestFile(source.repo, source.tag));
  const label = `hf:${source.repo}/${file}`;
  let lastLine = 0;
  const manager = new DownloadManager({
    dataDir: options.dataDir,
    client,
    progressIntervalMs: 1000,
    emit: (d) => {
      if (d.state === "downloading" && Date.now() - lastLine < 1000) return;
      lastLine = Date.now();
      const pct = d.totalBytes > 0 ? Math.floor((d.downloadedBytes / d.totalBytes) * 100) : 0;
      const speed = d.bytesPerSecond > 0 ? `, ${mb(d.bytesPerSecond)}/s` : "";
      const eta =
        d.etaSeconds !== null && d.state === "downloading" ? `, ETA ${Math.ceil(d.etaSeconds)} s` : "";
      say(
        `download ${label}: ${d.state} ${pct}% (${mb(d.downloadedBytes)} of ${mb(d.totalBytes)}${speed}${eta})`,
      );
    },
  });
  try {
    const started = await manager.start(source.repo, file, "model");
    if (started.downloadedBytes > 0 && started.downloadedBytes < started.totalBytes)
      say(`download ${label}: resuming from ${mb(started.downloadedBytes)}`);
    const done = await manager.wait(started.id);
    if (done.state === "unverified")
      throw new Error(
        `the hub lists no sha256 for ${file}, so the download cannot be checked; it is kept aside: accept it in the app's Models dialog (hub.acceptUnverified) to use it`,
      );
    if (done.state !== "done") throw new Error(done.error ?? `the download stopped (${done.state})`);
    say(`download ${label}: done (${done.path})`);
    return done.path;
  } finally {
    await manager.close();
  }
}
