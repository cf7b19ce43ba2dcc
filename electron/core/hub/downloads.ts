/**
 * Model downloads into `<dataDir>/models/<owner>/<name>/`, on the app's own downloader
 * (`file-transfer.ts`: every byte written in order to `FILE.partial`, whose length is the resume
 * point, so a pause, a crash or `kill -9` loses nothing that reached the disk; not a byte past the
 * listed size; every failure an error on the download, never a crash).
 *
 * Around it: a free-space check first (`statfs`, injectable), progress/speed/ETA as throttled
 * `hub.download` events, pause (stop, keep the partial file), resume, cancel (delete it), the
 * state persisted in `models/.downloads.json` (after a kill, unfinished downloads list as
 * paused), every part's sha256 checked against the hub's LFS hash before it gets its final name
 * (a mismatch deletes the file), and a sidecar `<first part>.hub.json` recording where the model
 * came from. A part the hub lists without a sha256 cannot be checked: the download ends
 * `unverified`, its file kept under its partial name (not a model the app lists or loads) until
 * the user accepts it (`acceptUnverified`) or cancels it.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, statfs, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { ApiError, type Download, type HubFile } from "../../api";
import { formatBytes } from "../../../common/format-bytes";
import { sha256File } from "../../../common/hashing";
import {
  httpDownloader,
  partialBytes,
  PARTIAL_SUFFIX,
  TransferStatusError,
  type CreateDownloader,
  type Downloader,
} from "./file-transfer";
import { hubStatusError, networkError, type HubClient } from "./hf-client";

export type { CreateDownloader, Downloader, DownloaderOptions } from "./file-transfer";
export { httpDownloader, PARTIAL_SUFFIX } from "./file-transfer";

export type DownloadKind = Download["kind"];

export interface FreeSpace {
  bavail: number | bigint;
  bsize: number | bigint;
}

export interface DownloadManagerDeps {
  dataDir: string;
  client: HubClient;
  /** `hub.download` events. */
  emit?: (download: Download) => void;
  /** Free space of the models folder (tests inject a full disk). */
  statfs?: (path: string) => Promise<FreeSpace>;
  /** The downloader (tests inject a failing disk). */
  createDownloader?: CreateDownloader;
  /** Least time between two progress events of one download (default 250 ms). */
  progressIntervalMs?: number;
  /**
   * No data for this long ends a transfer as an error with its partial file kept (default 60 s):
   * ipull itself retries a failing server for many minutes.
   */
  stallTimeoutMs?: number;
  /** Downloads running at once; more wait as "queued" (default 2). */
  concurrency?: number;
  /** A part's sha256, checked against the hub's: the model fingerprint keeps it (no second hash at load). */
  onVerified?: (path: string, sha256: string) => void;
  log?: (message: string, err: unknown) => void;
}

/** A download's persisted record. */
interface DownloadRecord extends Download {
  parts: HubFile["parts"];
  /** Folder of the model's files, absolute. */
  dir: string;
  /** The resolve URL of the first part (its directory is the repo's). */
  url: string;
  /** Bytes the current transfer kept from a partial file (0: it started from zero). */
  resumedFrom?: number;
  /** A resumed download that failed its check was started again from zero once. */
  restartedFresh?: boolean;
  /** Parts the hub lists without a sha256: their sha256 as downloaded, for the user to accept. */
  unverified?: { file: string; sha256: string }[];
}

/** The sidecar beside a downloaded model's first part. */
export interface HubSidecar {
  repo: string;
  file: string;
  kind: DownloadKind;
  parts: { path: string; sizeBytes: number; sha256: string | null }[];
  endpoint: string;
  downloadedAt: number;
}

export const SIDECAR_SUFFIX = ".hub.json";
/** The partial file of node-llama-cpp's downloader (ipull), which the app used before: deleted with its download. */
export const LEGACY_PARTIAL_SUFFIX = ".ipull";

export function sidecarPath(modelPath: string): string {
  return `${modelPath}${SIDECAR_SUFFIX}`;
}

/** Reads the sidecar of a model file, or null. */
export async function readSidecar(modelPath: string): Promise<HubSidecar | null> {
  try {
    return JSON.parse(await readFile(sidecarPath(modelPath), "utf8")) as HubSidecar;
  } catch {
    return null;
  }
}

/**
 * The unit ipull, the downloader before this one, kept progress in (a kill lost up to this much
 * per stream). The tests still stall the hub at multiples of it.
 */
export const DOWNLOAD_CHUNK_BYTES = 5 * 1024 * 1024;

/** Bytes of `finalPath` that a resume keeps: the whole file when complete, else its partial file's length. */
export const resumableBytes = partialBytes;

/** Disk space as the disk counts it: "410 kB", "11.0 MB". */
const DISK_BYTES = { base: 1000 } as const;

/** Refuses when `needBytes` do not fit on the disk of `dir` (with a 1% / 16 MiB margin). */
export async function checkFreeSpace(
  dir: string,
  needBytes: number,
  fs: (path: string) => Promise<FreeSpace> = (p) => statfs(p),
): Promise<void> {
  if (needBytes <= 0) return;
  const s = await fs(dir);
  const free = Number(s.bavail) * Number(s.bsize);
  const margin = Math.min(16 * 1024 * 1024, Math.ceil(needBytes * 0.01));
  if (free < needBytes + margin) {
    throw new ApiError(
      "invalid_input",
      `Not enough disk space: the download needs ${formatBytes(needBytes, DISK_BYTES)} but only ${formatBytes(free, DISK_BYTES)} is free in ${dir}.`,
    );
  }
}

function isEnospc(err: unknown): boolean {
  return (
    (err as NodeJS.ErrnoException)?.code === "ENOSPC" || /ENOSPC/.test(String((err as Error)?.message ?? err))
  );
}

/** The user's sentence for a failed transfer. */
function downloadFailure(err: unknown, record: DownloadRecord, endpoint: string, hasToken: boolean): string {
  if (err instanceof ApiError) return err.message;
  if (isEnospc(err)) {
    return `The disk is full (no space left while writing ${basename(record.path)}). The partial download is kept: free some space, then resume.`;
  }
  if (err instanceof TransferStatusError) {
    const status = err.statusCode;
    const headers = err.responseHeaders;
    return hubStatusError(
      status,
      { repo: record.repo, file: record.file },
      { hasToken, retryAfter: headers?.["retry-after"], errorCode: headers?.["x-error-code"], endpoint },
    ).message;
  }
  if (err instanceof TypeError || (err as { cause?: unknown })?.cause) {
    return networkError(endpoint, err, { repo: record.repo, file: record.file }).message;
  }
  return `The download of ${record.file} failed: ${(err as Error)?.message ?? String(err)}`;
}

const PUBLIC_KEYS = [
  "id",
  "repo",
  "file",
  "kind",
  "state",
  "totalBytes",
  "downloadedBytes",
  "bytesPerSecond",
  "etaSeconds",
  "path",
  "error",
  "startedAt",
] as const;

function toPublic(r: DownloadRecord): Download {
  const out = Object.fromEntries(PUBLIC_KEYS.map((k) => [k, r[k]])) as unknown as Download;
  if (r.state === "unverified") out.unverified = r.unverified ?? [];
  return out;
}

interface Active {
  downloader: Downloader | null;
  /** Why the transfer is being stopped ("stall": no data for stallTimeoutMs). */
  stop: "pause" | "cancel" | "stall" | null;
  done: Promise<void>;
}

export class DownloadManager {
  readonly modelsDir: string;
  private readonly stateFile: string;
  private readonly records = new Map<string, DownloadRecord>();
  private readonly active = new Map<string, Active>();
  private readonly waiters = new Map<string, ((d: Download) => void)[]>();
  private readonly lastEmit = new Map<string, number>();
  private readonly queue: string[] = [];
  private readonly starting = new Map<string, Promise<Download>>();
  private loaded: Promise<void>;
  private persisting: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly deps: DownloadManagerDeps) {
    this.modelsDir = resolve(deps.dataDir, "models");
    this.stateFile = join(this.modelsDir, ".downloads.json");
    this.loaded = this.load();
  }

  /** Where `repo`'s `file` lands: models/<owner>/<name>/<file>. */
  destination(repo: string, file: string): string {
    const path = resolve(this.modelsDir, ...repo.split("/"), ...file.split("/"));
    const rel = relative(this.modelsDir, path);
    if (rel.startsWith("..") || rel.split(sep).includes(".."))
      throw new ApiError("invalid_input", "Bad file path.");
    return path;
  }

  async list(): Promise<Download[]> {
    await this.loaded;
    return [...this.records.values()].sort((a, b) => b.startedAt - a.startedAt).map(toPublic);
  }

  async get(id: string): Promise<Download> {
    await this.loaded;
    return toPublic(this.record(id));
  }

  /**
   * Start downloading `file` of `repo` (all parts of a split GGUF). Throws (nothing started)
   * when the repo or file does not exist, is gated without access, or the disk is too full.
   * An unfinished download of the same file is resumed; a finished one is returned as is.
   */
  start(repo: string, file: string, kind: DownloadKind = "model"): Promise<Download> {
    // Two calls for the same file at once share one start (one transfer per file).
    const key = downloadId(repo, file);
    const pending = this.starting.get(key);
    if (pending) return pending;
    const started = this.startNow(repo, file, kind).finally(() => this.starting.delete(key));
    this.starting.set(key, started);
    return started;
  }

  private async startNow(repo: string, file: string, kind: DownloadKind): Promise<Download> {
    await this.loaded;
    const id = downloadId(repo, file);
    const existing = this.records.get(id);
    if (
      existing &&
      (existing.state === "downloading" || existing.state === "queued" || existing.state === "verifying")
    )
      return toPublic(existing);
    if (existing?.state === "done" && (await stat(existing.path).catch(() => null)))
      return toPublic(existing);
    if (existing?.state === "unverified") return toPublic(existing);

    const info = await this.deps.client.repo(repo);
    const hubFile = info.files.find((f) => f.path === file || f.parts.some((p) => p.path === file));
    if (!hubFile) {
      const what = file.endsWith(".gguf") ? "GGUF file" : "file (only .gguf models can be downloaded)";
      throw new ApiError("not_found", `${repo} has no ${what} ${file}.`);
    }
    // Preflight: the hub's own answer for every part (gated, missing, rate limit) before writing
    // anything; a part the listing gives no size takes the size the file's HEAD says.
    const parts = hubFile.parts.map((p) => ({ ...p }));
    for (const part of parts) {
      const head = await this.deps.client.head(repo, part.path);
      if (part.sizeBytes <= 0) part.sizeBytes = head.size;
    }
    const path = this.destination(repo, hubFile.path);
    const record: DownloadRecord = {
      id,
      repo,
      file: hubFile.path,
      kind,
      state: "queued",
      totalBytes: parts.reduce((sum, p) => sum + p.sizeBytes, 0),
      downloadedBytes: 0,
      bytesPerSecond: 0,
      etaSeconds: null,
      path,
      error: null,
      startedAt: existing?.startedAt ?? Date.now(),
      parts,
      dir: dirname(path),
      url: this.deps.client.fileUrl(repo, hubFile.path),
    };
    record.downloadedBytes = await this.presentBytes(record);
    await mkdir(record.dir, { recursive: true });
    await checkFreeSpace(record.dir, record.totalBytes - record.downloadedBytes, this.deps.statfs);
    this.records.set(id, record);
    this.enqueue(record);
    return toPublic(record);
  }

  /** Stop a download, keeping its partial file. */
  async pause(id: string): Promise<Download> {
    await this.loaded;
    const record = this.record(id);
    const queued = this.queue.indexOf(id);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.setState(record, "paused");
      return toPublic(record);
    }
    const active = this.active.get(id);
    if (active) {
      active.stop = "pause";
      await settle(
        (async () => {
          await active.downloader?.cancel({ deleteTempFile: false }).catch(() => undefined);
          await active.done;
        })(),
      );
      // A transfer stuck before its response never hears the abort: it is paused all the same.
      if (record.state !== "paused") await this.stopped(record, active);
    }
    return toPublic(record);
  }

  /** Continue a paused (or failed) download from its partial file. */
  async resume(id: string): Promise<Download> {
    await this.loaded;
    const record = this.record(id);
    if (record.state === "downloading" || record.state === "queued" || record.state === "verifying")
      return toPublic(record);
    if (record.state === "done" || record.state === "unverified") return toPublic(record);
    if (record.state === "cancelled") return this.start(record.repo, record.file, record.kind);
    record.downloadedBytes = await this.presentBytes(record);
    await checkFreeSpace(record.dir, record.totalBytes - record.downloadedBytes, this.deps.statfs);
    record.error = null;
    this.enqueue(record);
    return toPublic(record);
  }

  /** Stop a download and delete its partial files (complete models are deleted with models.delete). */
  async cancel(id: string): Promise<Download> {
    await this.loaded;
    const record = this.record(id);
    if (record.state === "done")
      throw new ApiError("invalid_input", "This download is finished; delete the model instead.");
    const queued = this.queue.indexOf(id);
    if (queued >= 0) this.queue.splice(queued, 1);
    const active = this.active.get(id);
    if (active) {
      active.stop = "cancel";
      await settle(
        (async () => {
          await active.downloader?.cancel({ deleteTempFile: true }).catch(() => undefined);
          await active.done;
        })(),
      );
    }
    await this.deleteFiles(record);
    record.downloadedBytes = 0;
    record.bytesPerSecond = 0;
    record.etaSeconds = null;
    this.setState(record, "cancelled");
    return toPublic(record);
  }

  /**
   * Keep an `unverified` download (the hub lists no sha256 for it): its files get their final
   * names and it is a model like any other. The user's decision; nothing else makes it so.
   */
  async acceptUnverified(id: string): Promise<Download> {
    await this.loaded;
    const record = this.record(id);
    if (record.state !== "unverified")
      throw new ApiError("invalid_input", `This download is ${record.state}, not waiting to be accepted.`);
    const paths = this.partPaths(record);
    for (let i = 0; i < paths.length; i++) {
      const path = paths[i]!;
      const partial = `${path}${PARTIAL_SUFFIX}`;
      if ((await stat(partial).catch(() => null))?.size === record.parts[i]!.sizeBytes)
        await rename(partial, path);
      if ((await stat(path).catch(() => null))?.size !== record.parts[i]!.sizeBytes) {
        record.error = `${basename(path)} is no longer there; download it again.`;
        record.unverified = undefined;
        this.setState(record, "error");
        return toPublic(record);
      }
    }
    for (const u of record.unverified ?? []) {
      const i = record.parts.findIndex((p) => p.path === u.file);
      if (i >= 0) this.deps.onVerified?.(paths[i]!, u.sha256);
    }
    await this.writeSidecar(record);
    record.unverified = undefined;
    this.setState(record, "done");
    return toPublic(record);
  }

  /** Resolves when download `id` is no longer running (done, error, paused or cancelled). */
  async wait(id: string): Promise<Download> {
    await this.loaded;
    const record = this.record(id);
    if (!["queued", "downloading", "verifying"].includes(record.state)) return toPublic(record);
    return new Promise((resolveWait) => {
      const list = this.waiters.get(id) ?? [];
      list.push(resolveWait);
      this.waiters.set(id, list);
    });
  }

  /** Forget a finished record (the model itself stays). */
  async forgetPath(path: string): Promise<void> {
    await this.loaded;
    for (const r of this.records.values()) {
      if (resolve(r.path) === resolve(path) && !this.active.has(r.id)) this.records.delete(r.id);
    }
    await this.persist();
  }

  /** Pause every running download (partial files kept) and save the state. */
  async close(): Promise<void> {
    await this.loaded;
    this.closed = true;
    this.queue.length = 0;
    await Promise.all([...this.active.keys()].map((id) => this.pause(id)));
    await this.persisting;
  }

  // -------------------------------------------------------------------------------------------

  private record(id: string): DownloadRecord {
    const r = this.records.get(id);
    if (!r) throw new ApiError("not_found", `No download ${id}.`);
    return r;
  }

  private partPaths(record: DownloadRecord): string[] {
    return record.parts.map((p) => join(record.dir, basename(p.path)));
  }

  /** Bytes already on disk that a resume keeps. */
  private async presentBytes(record: DownloadRecord): Promise<number> {
    const paths = this.partPaths(record);
    let total = 0;
    for (let i = 0; i < paths.length; i++)
      total += await resumableBytes(paths[i]!, record.parts[i]!.sizeBytes);
    return total;
  }

  private async deleteFiles(record: DownloadRecord): Promise<void> {
    for (const p of this.partPaths(record)) {
      await rm(`${p}${PARTIAL_SUFFIX}`, { force: true });
      await rm(`${p}${LEGACY_PARTIAL_SUFFIX}`, { force: true });
      await rm(p, { force: true });
    }
    await rm(sidecarPath(record.path), { force: true });
  }

  private enqueue(record: DownloadRecord): void {
    if (this.closed) return;
    if (!this.queue.includes(record.id)) this.queue.push(record.id);
    this.setState(record, "queued");
    this.pump();
  }

  private pump(): void {
    const limit = this.deps.concurrency ?? 2;
    while (this.active.size < limit && this.queue.length > 0) {
      const id = this.queue.shift()!;
      const record = this.records.get(id);
      if (!record) continue;
      const slot: Active = { downloader: null, stop: null, done: Promise.resolve() };
      this.active.set(id, slot);
      slot.done = this.run(record, slot).finally(() => {
        this.active.delete(id);
        this.pump();
      });
    }
  }

  private async run(record: DownloadRecord, slot: Active): Promise<void> {
    let last = { t: Date.now(), bytes: record.downloadedBytes };
    record.resumedFrom = record.downloadedBytes;
    record.unverified = undefined;
    this.setState(record, "downloading");
    const stallMs = this.deps.stallTimeoutMs ?? 60_000;
    let progressAt = Date.now();
    let progressBytes = -1;
    let onStall: () => void = () => undefined;
    const stalled = new Promise<void>((r) => (onStall = r));
    const watchdog = setInterval(
      () => {
        if (slot.stop || Date.now() - progressAt < stallMs) return;
        slot.stop = "stall";
        void slot.downloader?.cancel({ deleteTempFile: false }).catch(() => undefined);
        onStall();
      },
      Math.max(20, Math.min(1000, stallMs / 4)),
    );
    try {
      const client = this.deps.client;
      const paths = this.partPaths(record);
      const downloader = await (this.deps.createDownloader ?? httpDownloader)({
        parts: record.parts.map((p, i) => ({
          url: client.fileUrl(record.repo, p.path),
          path: paths[i]!,
          sizeBytes: p.sizeBytes,
        })),
        open: (url, target, init) => client.open(url, target, init),
        target: { repo: record.repo, file: record.file },
        onProgress: ({ totalSize, downloadedSize }) => {
          if (slot.stop) return;
          const now = Date.now();
          if (downloadedSize !== progressBytes) {
            progressBytes = downloadedSize;
            progressAt = now;
          }
          if (totalSize > 0) record.totalBytes = totalSize;
          record.downloadedBytes = Math.min(downloadedSize, record.totalBytes);
          const dt = (now - last.t) / 1000;
          if (dt >= 0.2) {
            const speed = Math.max(0, (record.downloadedBytes - last.bytes) / dt);
            record.bytesPerSecond =
              record.bytesPerSecond > 0 ? record.bytesPerSecond * 0.6 + speed * 0.4 : speed;
            last = { t: now, bytes: record.downloadedBytes };
          }
          record.etaSeconds =
            record.bytesPerSecond > 0
              ? (record.totalBytes - record.downloadedBytes) / record.bytesPerSecond
              : null;
          this.progress(record);
        },
      });
      slot.downloader = downloader;
      if (slot.stop) await downloader.cancel({ deleteTempFile: slot.stop === "cancel" });
      else await Promise.race([downloader.download(), stalled]);
    } catch (err) {
      if (slot.stop) return this.stopped(record, slot);
      record.bytesPerSecond = 0;
      record.etaSeconds = null;
      record.downloadedBytes = await this.presentBytes(record);
      record.error = downloadFailure(
        err,
        record,
        this.deps.client.endpoint,
        await this.deps.client.hasToken().catch(() => false),
      );
      this.deps.log?.(`download of ${record.repo}/${record.file} failed`, err);
      this.setState(record, "error");
      return;
    } finally {
      clearInterval(watchdog);
    }
    if (slot.stop) return this.stopped(record, slot);
    await this.verify(record);
  }

  private async stopped(record: DownloadRecord, slot: Active): Promise<void> {
    record.bytesPerSecond = 0;
    record.etaSeconds = null;
    if (slot.stop === "cancel") return; // cancel() deletes and sets the state
    record.downloadedBytes = await this.presentBytes(record);
    if (slot.stop === "stall") {
      const seconds = Math.max(1, Math.round((this.deps.stallTimeoutMs ?? 60_000) / 1000));
      record.error = `The hub sent no data for ${seconds} s (it may be failing or the connection dropped). The partial download is kept: resume to try again.`;
      return this.setState(record, "error");
    }
    this.setState(record, "paused");
  }

  /**
   * sha256 of every part against the hub's LFS hash before it gets its final name; a mismatch
   * deletes the files. A part without a hub hash keeps its partial name: `unverified`.
   */
  private async verify(record: DownloadRecord): Promise<void> {
    record.bytesPerSecond = 0;
    record.etaSeconds = null;
    record.downloadedBytes = record.totalBytes;
    this.setState(record, "verifying");
    const paths = this.partPaths(record);
    const unverified: { file: string; sha256: string }[] = [];
    for (let i = 0; i < paths.length; i++) {
      const part = record.parts[i]!;
      const final = paths[i]!;
      const partial = `${final}${PARTIAL_SUFFIX}`;
      const done = (await stat(final).catch(() => null))?.size === part.sizeBytes;
      const path = done ? final : partial;
      const size = (await stat(path).catch(() => null))?.size;
      if (size !== part.sizeBytes) {
        if (await this.restartFresh(record)) return;
        await this.deleteFiles(record);
        record.downloadedBytes = 0;
        record.error = `${basename(final)} arrived incomplete (${size ?? 0} of ${part.sizeBytes} bytes); it was deleted. Download it again.`;
        return this.setState(record, "error");
      }
      const actual = await sha256File(path);
      if (!part.sha256) {
        unverified.push({ file: part.path, sha256: actual });
        continue;
      }
      if (actual !== part.sha256.toLowerCase()) {
        if (await this.restartFresh(record)) return;
        await this.deleteFiles(record);
        record.downloadedBytes = 0;
        record.error =
          `${basename(final)} is damaged: its sha256 is ${actual.slice(0, 12)}…, the hub says ${part.sha256.slice(0, 12)}…. ` +
          "The file was deleted; download it again.";
        return this.setState(record, "error");
      }
      if (!done) await rename(partial, final);
      this.deps.onVerified?.(final, actual);
    }
    if (unverified.length > 0) {
      record.unverified = unverified;
      return this.setState(record, "unverified");
    }
    await this.writeSidecar(record);
    this.setState(record, "done");
  }

  private async writeSidecar(record: DownloadRecord): Promise<void> {
    const sidecar: HubSidecar = {
      repo: record.repo,
      file: record.file,
      kind: record.kind,
      parts: record.parts,
      endpoint: this.deps.client.endpoint,
      downloadedAt: Date.now(),
    };
    const tmp = `${sidecarPath(record.path)}.${randomUUID()}.tmp`;
    await writeFile(tmp, `${JSON.stringify(sidecar, null, 2)}\n`);
    await rename(tmp, sidecarPath(record.path));
  }

  /**
   * A resumed download that fails its check starts again from zero, once. ipull marks a chunk
   * complete and saves that before the chunk's own writes have landed, so a process killed in
   * between leaves a partial file that claims bytes it does not hold; the sha256 catches it, and
   * the user gets the model instead of an error. Queued here, started when this run's slot ends.
   */
  private async restartFresh(record: DownloadRecord): Promise<boolean> {
    if (!record.resumedFrom || record.restartedFresh || this.closed) return false;
    record.restartedFresh = true;
    this.deps.log?.(
      `download of ${record.repo}/${record.file}: the partial file kept from before did not check out; downloading it again from the start`,
      null,
    );
    await this.deleteFiles(record);
    record.downloadedBytes = 0;
    record.resumedFrom = 0;
    this.queue.push(record.id);
    this.setState(record, "queued");
    return true;
  }

  private progress(record: DownloadRecord): void {
    const now = Date.now();
    if (now - (this.lastEmit.get(record.id) ?? 0) < (this.deps.progressIntervalMs ?? 250)) return;
    this.lastEmit.set(record.id, now);
    this.deps.emit?.(toPublic(record));
  }

  private setState(record: DownloadRecord, state: Download["state"]): void {
    record.state = state;
    this.lastEmit.set(record.id, Date.now());
    this.deps.emit?.(toPublic(record));
    const saved = this.persist();
    if (!["queued", "downloading", "verifying"].includes(state)) {
      // Waiters hear of the end once it is saved (a restart right after sees it).
      const list = this.waiters.get(record.id) ?? [];
      this.waiters.delete(record.id);
      const snapshot = toPublic(record);
      void saved.then(() => {
        for (const w of list) w(snapshot);
      });
    }
  }

  private persist(): Promise<void> {
    const snapshot = JSON.stringify([...this.records.values()], null, 1);
    this.persisting = this.persisting
      .then(async () => {
        await mkdir(this.modelsDir, { recursive: true });
        const tmp = `${this.stateFile}.${process.pid}.tmp`;
        await writeFile(tmp, snapshot);
        await rename(tmp, this.stateFile);
      })
      .catch((err: unknown) => this.deps.log?.("could not save the download list", err));
    return this.persisting;
  }

  /** Reads the saved list; downloads that were running when the app stopped become paused. */
  private async load(): Promise<void> {
    let saved: DownloadRecord[] = [];
    try {
      saved = JSON.parse(await readFile(this.stateFile, "utf8")) as DownloadRecord[];
    } catch {
      return;
    }
    for (const r of Array.isArray(saved) ? saved : []) {
      if (!r || typeof r.id !== "string" || !Array.isArray(r.parts)) continue;
      if (r.state === "downloading" || r.state === "queued" || r.state === "verifying") {
        r.state = "paused";
        r.bytesPerSecond = 0;
        r.etaSeconds = null;
        r.downloadedBytes = await this.presentBytes(r);
      }
      this.records.set(r.id, r);
    }
  }
}

/** Waits for `work`, at most `ms` (a stop must not hang on a stuck transfer). */
function settle(work: Promise<unknown>, ms = 5000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work.then(() => undefined),
    new Promise<void>((r) => (timer = setTimeout(r, ms))),
  ]).finally(() => clearTimeout(timer));
}

export function downloadId(repo: string, file: string): string {
  return createHash("sha1").update(`${repo}\u0000${file}`).digest("hex").slice(0, 16);
}
