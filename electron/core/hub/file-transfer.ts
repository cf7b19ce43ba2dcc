/**
 * The app's own model downloader (it replaced node-llama-cpp's `createModelDownloader`, ipull).
 *
 * Why not ipull: a response longer than the size it expected made it throw from inside its
 * stream handling, outside any handler, which ended the whole process (the headless server, or
 * Electron's main process); it forwarded `Authorization` to wherever a redirect pointed; and it
 * kept resume progress only per completed 5 MiB chunk, so a download killed every few seconds
 * never advanced.
 *
 * Here every byte is written in order to `FILE.partial`, each write awaited before the next: the
 * partial file's length is the resume point, correct after a crash or `kill -9` (a write cut off
 * by a kill leaves a prefix of what it was writing). One ranged GET per part, from that length to
 * the size the hub lists. Everything it does is awaited inside `download()`, so every failure —
 * a status, a dropped connection, a body longer or shorter than listed, a full disk — rejects
 * that promise and becomes an error on that download. Bytes past the listed size are never
 * written: an announced or actual longer body is refused. Requests go through HubClient.open:
 * redirects followed there, the token only to the hub's own hosts.
 *
 * A completed part stays `FILE.partial`: the download manager checks its sha256 and renames it.
 */
import { open, rm, stat, writeFile } from "node:fs/promises";
import { basename } from "node:path";
import { ApiError } from "../../api";
import type { HubClient, HubResponse, HubTarget } from "./hf-client";

export const PARTIAL_SUFFIX = ".partial";

export interface TransferPart {
  /** Where the part is downloaded from. */
  url: string;
  /** Its final path (the partial file is `path + PARTIAL_SUFFIX`). */
  path: string;
  /** The size the hub lists: not a byte more is written. */
  sizeBytes: number;
}

/** What a downloader must do. */
export interface Downloader {
  /** Resolves once every part is complete (a complete part is left as its partial file, or was already final). */
  download(): Promise<void>;
  /** Stops the transfer; the partial files stay unless `deleteTempFile`. */
  cancel(options?: { deleteTempFile?: boolean }): Promise<void>;
}

export interface DownloaderOptions {
  parts: TransferPart[];
  /** Opens a URL (redirects, the token policy): HubClient.open. */
  open: HubClient["open"];
  /** Names the download in errors. */
  target: HubTarget;
  onProgress: (status: { totalSize: number; downloadedSize: number }) => void;
  /** Attempts in a row without a new byte before a network failure or 5xx/429 is the download's error (default 5). */
  retries?: number;
  /** First wait between attempts, doubled each time (default 500 ms). */
  retryDelayMs?: number;
}

export type CreateDownloader = (options: DownloaderOptions) => Downloader | Promise<Downloader>;

/** An HTTP status that ended a transfer: the download manager words it with hubStatusError. */
export class TransferStatusError extends Error {
  constructor(
    readonly statusCode: number,
    readonly responseHeaders: Record<string, string>,
    file: string,
  ) {
    super(`HTTP ${statusCode} for ${file}`);
    this.name = "TransferStatusError";
  }
}

/** Bytes a resume keeps of `finalPath` (listed at `size`): all when final, else its partial file's length. */
export async function partialBytes(finalPath: string, size: number): Promise<number> {
  const done = await stat(finalPath).catch(() => null);
  if (done?.isFile() && done.size === size) return size;
  const partial = await stat(`${finalPath}${PARTIAL_SUFFIX}`).catch(() => null);
  if (!partial?.isFile()) return 0;
  return partial.size <= size ? partial.size : 0;
}

function retryable(err: unknown): boolean {
  if (err instanceof TransferStatusError) return err.statusCode >= 500 || err.statusCode === 429;
  if (err instanceof ApiError) return err.code === "upstream" && /Cannot reach|broke off/.test(err.message);
  // fetch's network failures and a body cut off mid-way.
  return err instanceof TypeError || (err as { cause?: unknown })?.cause !== undefined;
}

/** The downloader over HubClient.open. */
export const httpDownloader: CreateDownloader = (options) => new HttpDownloader(options);

class HttpDownloader implements Downloader {
  private readonly abort = new AbortController();
  private running: Promise<void> | null = null;

  constructor(private readonly o: DownloaderOptions) {}

  download(): Promise<void> {
    this.running ??= this.run();
    return this.running;
  }

  async cancel(options: { deleteTempFile?: boolean } = {}): Promise<void> {
    this.abort.abort(new Error("cancelled"));
    await this.running?.catch(() => undefined);
    if (options.deleteTempFile)
      for (const p of this.o.parts) await rm(`${p.path}${PARTIAL_SUFFIX}`, { force: true });
  }

  private async run(): Promise<void> {
    const total = this.o.parts.reduce((s, p) => s + p.sizeBytes, 0);
    let before = 0;
    for (const part of this.o.parts) {
      let failures = 0;
      // An empty file needs no request (and `bytes=0--1` is no range).
      if (part.sizeBytes === 0 && (await stat(part.path).catch(() => null))?.size !== 0)
        await writeFile(`${part.path}${PARTIAL_SUFFIX}`, "");
      for (;;) {
        this.throwIfAborted();
        const at = await partialBytes(part.path, part.sizeBytes);
        if (at >= part.sizeBytes) break;
        try {
          await this.fetchPart(part, at, (n) =>
            this.o.onProgress({ totalSize: total, downloadedSize: before + n }),
          );
          failures = 0;
        } catch (err) {
          if (this.abort.signal.aborted) throw err;
          const now = await partialBytes(part.path, part.sizeBytes);
          if (now > at) failures = 0; // it advanced: a new run of attempts
          failures++;
          if (!retryable(err) || failures >= (this.o.retries ?? 5)) throw err;
          await this.wait(err, failures);
        }
      }
      before += part.sizeBytes;
      this.o.onProgress({ totalSize: total, downloadedSize: before });
    }
  }

  private throwIfAborted(): void {
    if (this.abort.signal.aborted) throw this.abort.signal.reason ?? new Error("cancelled");
  }

  private async wait(err: unknown, failures: number): Promise<void> {
    const retryAfter = Number((err as TransferStatusError).responseHeaders?.["retry-after"] ?? NaN);
    const ms = Number.isFinite(retryAfter)
      ? Math.min(30_000, retryAfter * 1000)
      : (this.o.retryDelayMs ?? 500) * 2 ** (failures - 1);
    const signal = this.abort.signal;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done);
    });
    this.throwIfAborted();
  }

  /** One ranged GET from `offset` to the part's end, appended to its partial file. */
  private async fetchPart(part: TransferPart, offset: number, onBytes: (n: number) => void): Promise<void> {
    const name = basename(part.path);
    const size = part.sizeBytes;
    const { res }: HubResponse = await this.o.open(part.url, this.o.target, {
      headers: { Range: `bytes=${offset}-${size - 1}`, "Accept-Encoding": "identity" },
      signal: this.abort.signal,
    });
    const headers = Object.fromEntries(res.headers);
    const drop = () => res.body?.cancel().catch(() => undefined);
    if (res.status !== 200 && res.status !== 206) {
      await drop();
      throw new TransferStatusError(res.status, headers, name);
    }
    let start = offset;
    if (res.status === 206) {
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(headers["content-range"] ?? "");
      if (!m || Number(m[1]) !== offset) {
        await drop();
        throw new ApiError(
          "upstream",
          `The model hub answered a request for ${name} from byte ${offset} with other bytes (${headers["content-range"] ?? "no Content-Range"}).`,
        );
      }
      if (m[3] !== "*" && Number(m[3]) !== size) {
        await drop();
        throw this.sizeMismatch(name, Number(m[3]), size);
      }
    } else start = 0; // no Range support: the whole file again
    const length = res.headers.get("content-length");
    if (length !== null && Number(length) !== size - start) {
      await drop();
      throw this.sizeMismatch(name, start + Number(length), size);
    }
    const handle = await open(`${part.path}${PARTIAL_SUFFIX}`, start === 0 ? "w" : "a");
    let at = start;
    try {
      if (!res.body) throw new ApiError("upstream", `The model hub sent no data for ${name}.`);
      const reader = res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (at + value.byteLength > size) throw this.sizeMismatch(name, null, size);
          await handle.write(value);
          at += value.byteLength;
          onBytes(at);
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    } finally {
      await handle.close();
    }
    if (at < size) {
      // The body ended early: what arrived is kept, the next attempt continues from it.
      throw new ApiError(
        "upstream",
        `The download of ${name} broke off at ${at} of ${size} bytes (the connection closed).`,
      );
    }
  }

  private sizeMismatch(name: string, actual: number | null, listed: number): ApiError {
    const what = actual === null ? "more bytes than" : `${actual} bytes, but`;
    return new ApiError(
      "upstream",
      `The model hub sent ${what} the ${listed} bytes it lists for ${name}; the download stops at the listed size. The hub's file and its listing disagree: try again later or choose another file.`,
    );
  }
}
