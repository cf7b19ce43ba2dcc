/**
 * DownloadManager against the loopback hub: a download with its sha256 and sidecar, pause /
 * resume / cancel mid-transfer (the hub throttles and stalls, the tests wait on bytes served),
 * a restart that lists the download as paused and resumes it with Range requests, a corrupted
 * byte (refused, deleted), 404/429/5xx, a dropped connection, a gated repo without and with a
 * token, a full disk (free-space check and ENOSPC while writing), split GGUFs; a hostile hub:
 * a body longer than listed (an error, never a crash, not a byte past the size), a file listed
 * without a sha256 (unverified until accepted), a redirect to another host (no token there).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { cp, open, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { Download } from "../../api";
import { testDir } from "../../../testing/core/temp-dir";
import {
  DEMO_REPO,
  GATED_REPO,
  NO_GGUF_REPO,
  SMALL_REPO,
  SPLIT_REPO,
  startHubServer,
  type HubServer,
} from "../../../testing/hub/hf-hub-server";
import { useTestHub } from "../../../testing/hub/test-hub";
import {
  DOWNLOAD_CHUNK_BYTES,
  DownloadManager,
  httpDownloader,
  PARTIAL_SUFFIX,
  readSidecar,
  resumableBytes,
  type CreateDownloader,
  type DownloadManagerDeps,
} from "./downloads";
import { HubClient } from "./hf-client";

let hub: HubServer;

const SMALL = "small-chat-F32.gguf";
const SMALL_KEY = `${SMALL_REPO}/${SMALL}`;

useTestHub((h) => (hub = h));

function sourceOf(repo: string, file: string): string {
  return hub.repos.find((r) => r.id === repo)!.files.find((f) => f.path === file)!.source;
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function manager(extra: Partial<DownloadManagerDeps> & { token?: string | null; dataDir?: string } = {}) {
  const dataDir = extra.dataDir ?? testDir("macaron-dl-");
  const events: Download[] = [];
  const token = extra.token ?? null;
  const m = new DownloadManager({
    dataDir,
    client: new HubClient({ endpoint: hub.url, token: () => Promise.resolve(token) }),
    emit: (d) => events.push(d),
    progressIntervalMs: 50,
    ...extra,
  });
  onTestFinished(() => m.close());
  return { m, dataDir, events };
}

/** Requests for a repo file since index `from`. */
function fileRequests(key: string, from = 0) {
  const path = `/${key.split("/").slice(0, 2).join("/")}/resolve/main/${key.split("/").slice(2).join("/")}`;
  return hub.requests.slice(from).filter((r) => r.path === path);
}

describe("DownloadManager", () => {
  it("downloads a model into models/<owner>/<name>/, checks its sha256 and writes the sidecar", async () => {
    const { m, dataDir, events } = manager();
    // Two starts of the same file at once are one download.
    const [started, twin] = await Promise.all([
      m.start(DEMO_REPO, "demo-chat-Q8_0.gguf"),
      m.start(DEMO_REPO, "demo-chat-Q8_0.gguf"),
    ]);
    expect(twin.id).toBe(started.id);
    expect(started.path).toBe(
      join(dataDir, "models", "macaron-test", "demo-chat-GGUF", "demo-chat-Q8_0.gguf"),
    );
    const done = await m.wait(started.id);
    expect(done).toMatchObject({ state: "done", error: null, downloadedBytes: done.totalBytes });
    expect(sha256(done.path)).toBe(sha256(sourceOf(DEMO_REPO, "demo-chat-Q8_0.gguf")));
    expect(await readSidecar(done.path)).toMatchObject({
      repo: DEMO_REPO,
      file: "demo-chat-Q8_0.gguf",
      kind: "model",
    });
    expect(events.map((e) => e.state)).toEqual(
      expect.arrayContaining(["queued", "downloading", "verifying", "done"]),
    );
    // The list survives a new manager (a restart) and says done.
    const again = new DownloadManager({ dataDir, client: new HubClient({ endpoint: hub.url }) });
    expect((await again.list()).find((d) => d.id === started.id)?.state).toBe("done");
  });

  it("counts a partial file's bytes: every byte written is kept, a longer partial is not trusted", async () => {
    const dir = testDir("macaron-partial-");
    const path = join(dir, "m.gguf");
    const size = 2 * DOWNLOAD_CHUNK_BYTES + 100;
    await writeFile(`${path}${PARTIAL_SUFFIX}`, Buffer.alloc(12_345));
    expect(await resumableBytes(path, size)).toBe(12_345);
    await writeFile(`${path}${PARTIAL_SUFFIX}`, Buffer.alloc(size + 1));
    expect(await resumableBytes(path, size)).toBe(0);
    await writeFile(path, Buffer.alloc(size));
    expect(await resumableBytes(path, size)).toBe(size);
  });

  it("pauses (partial kept), resumes from the partial file with Range requests, and cancels (partial deleted)", async () => {
    hub.setFault(SMALL_KEY, { kind: "stall", offset: 2 * DOWNLOAD_CHUNK_BYTES });
    onTestFinished(() => hub.setFault(SMALL_KEY, null));
    const { m, events } = manager();
    const base = hub.bytesServed(SMALL_KEY);
    const started = await m.start(SMALL_REPO, SMALL);
    // Two whole chunks served (and stalled at the third): wait until they are on disk.
    await hub.waitForBytes(SMALL_KEY, base + 2 * DOWNLOAD_CHUNK_BYTES);
    await until(
      async () => (await resumableBytes(started.path, started.totalBytes)) >= 2 * DOWNLOAD_CHUNK_BYTES,
    );
    const paused = await m.pause(started.id);
    expect(paused.state).toBe("paused");
    expect(paused.downloadedBytes).toBe(2 * DOWNLOAD_CHUNK_BYTES);
    expect((await stat(`${started.path}${PARTIAL_SUFFIX}`)).size).toBeGreaterThan(0);

    hub.setFault(SMALL_KEY, null);
    const from = hub.requests.length;
    await m.resume(started.id);
    const done = await m.wait(started.id);
    expect(done.state).toBe("done");
    expect(sha256(done.path)).toBe(sha256(sourceOf(SMALL_REPO, SMALL)));
    const ranged = fileRequests(SMALL_KEY, from).filter((r) => r.range);
    expect(ranged.length).toBeGreaterThan(0);
    for (const r of ranged)
      expect(Number(/bytes=(\d+)-/.exec(r.range!)![1])).toBeGreaterThanOrEqual(2 * DOWNLOAD_CHUNK_BYTES);
    expect(
      events.some((e) => e.state === "downloading" && e.downloadedBytes > 0 && e.bytesPerSecond >= 0),
    ).toBe(true);

    // Cancel mid-download deletes the partial file.
    const { m: m2 } = manager();
    hub.setFault(SMALL_KEY, { kind: "stall", offset: DOWNLOAD_CHUNK_BYTES });
    const second = await m2.start(SMALL_REPO, SMALL);
    await until(async () => (await stat(`${second.path}${PARTIAL_SUFFIX}`).catch(() => null)) !== null);
    const cancelled = await m2.cancel(second.id);
    expect(cancelled.state).toBe("cancelled");
    await expect(stat(`${second.path}${PARTIAL_SUFFIX}`)).rejects.toThrow();
    await expect(stat(second.path)).rejects.toThrow();
  });

  it("lists an interrupted download as paused after a restart and resumes it from its partial bytes", async () => {
    hub.setFault(SMALL_KEY, { kind: "stall", offset: 2 * DOWNLOAD_CHUNK_BYTES });
    onTestFinished(() => hub.setFault(SMALL_KEY, null));
    const { m, dataDir } = manager();
    const started = await m.start(SMALL_REPO, SMALL);
    await until(() => twoChunksOnDisk(started.path, started.totalBytes));
    // What a crash leaves on disk: a copy of the data folder now (the state file says "downloading").
    const crashed = testDir("macaron-dl-crashed-");
    await cp(dataDir, crashed, { recursive: true });
    await m.close();
    const saved = JSON.parse(
      await readFile(join(crashed, "models", ".downloads.json"), "utf8"),
    ) as Download[];
    expect(saved[0]?.state).toBe("downloading");
    hub.setFault(SMALL_KEY, null);

    const from = hub.requests.length;
    const { m: restarted } = manager({ dataDir: crashed });
    const listed = (await restarted.list())[0]!;
    expect(listed).toMatchObject({
      id: started.id,
      state: "paused",
      downloadedBytes: 2 * DOWNLOAD_CHUNK_BYTES,
    });
    await restarted.resume(listed.id);
    expect((await restarted.wait(listed.id)).state).toBe("done");
    const ranged = fileRequests(SMALL_KEY, from).filter((r) => r.range);
    expect(ranged.length).toBeGreaterThan(0);
    for (const r of ranged)
      expect(Number(/bytes=(\d+)-/.exec(r.range!)![1])).toBeGreaterThanOrEqual(2 * DOWNLOAD_CHUNK_BYTES);
  });

  it("a partial file that claims bytes it lacks (killed mid-write) is downloaded again from zero, once", async () => {
    hub.setFault(SMALL_KEY, { kind: "stall", offset: 2 * DOWNLOAD_CHUNK_BYTES });
    onTestFinished(() => hub.setFault(SMALL_KEY, null));
    const { m, dataDir } = manager();
    const started = await m.start(SMALL_REPO, SMALL);
    await until(() => twoChunksOnDisk(started.path, started.totalBytes));
    await m.close();
    // A partial file whose bytes are not what the hub sent (a power cut, another writer): zeros.
    const torn = await open(`${started.path}${PARTIAL_SUFFIX}`, "r+");
    await torn.write(Buffer.alloc(DOWNLOAD_CHUNK_BYTES), 0, DOWNLOAD_CHUNK_BYTES, 0);
    await torn.close();
    hub.setFault(SMALL_KEY, null);

    const from = hub.requests.length;
    const logged: string[] = [];
    const { m: restarted, events } = manager({ dataDir, log: (message) => logged.push(message) });
    const listed = (await restarted.list())[0]!;
    expect(listed.downloadedBytes).toBe(2 * DOWNLOAD_CHUNK_BYTES);
    await restarted.resume(listed.id);
    const done = await restarted.wait(listed.id);
    expect(done).toMatchObject({ state: "done", error: null });
    expect(sha256(done.path)).toBe(sha256(sourceOf(SMALL_REPO, SMALL)));
    expect(logged.join("\n")).toMatch(/did not check out; downloading it again from the start/);
    // The second transfer fetched the start of the file again.
    expect(fileRequests(SMALL_KEY, from).some((r) => !r.range || /^bytes=0-/.test(r.range))).toBe(true);
    expect(events.filter((e) => e.state === "verifying").length).toBe(2);
  });

  it("refuses a file whose sha256 does not match the hub's LFS hash and deletes it", async () => {
    const key = `${DEMO_REPO}/demo-chat-F32.gguf`;
    hub.setFault(key, { kind: "corrupt", offset: 1000 });
    onTestFinished(() => hub.setFault(key, null));
    const { m } = manager();
    const started = await m.start(DEMO_REPO, "demo-chat-F32.gguf");
    const done = await m.wait(started.id);
    expect(done.state).toBe("error");
    expect(done.error).toMatch(/demo-chat-F32\.gguf is damaged: its sha256 is .*the hub says .*deleted/);
    await expect(stat(done.path)).rejects.toThrow();
    await expect(stat(`${done.path}${PARTIAL_SUFFIX}`)).rejects.toThrow();
  });

  it("survives a dropped connection (continues from the bytes it has) and still verifies", async () => {
    const key = `${DEMO_REPO}/demo-chat-Q8_0.gguf`;
    hub.setFault(key, { kind: "drop", afterBytes: 100_000, times: 2 });
    onTestFinished(() => hub.setFault(key, null));
    const { m } = manager();
    const done = await m.wait((await m.start(DEMO_REPO, "demo-chat-Q8_0.gguf")).id);
    expect(done.state).toBe("done");
  });

  it("ends a transfer that stops receiving data (the server fails mid-download) as an error, partial kept", async () => {
    hub.setFault(SMALL_KEY, { kind: "stall", offset: DOWNLOAD_CHUNK_BYTES + 4096 });
    onTestFinished(() => hub.setFault(SMALL_KEY, null));
    const { m } = manager({ stallTimeoutMs: 300 });
    const started = await m.start(SMALL_REPO, SMALL);
    const done = await m.wait(started.id);
    expect(done.state).toBe("error");
    expect(done.error).toMatch(/sent no data for 1 s .*partial download is kept: resume/);
    hub.setFault(SMALL_KEY, null);
    await m.resume(started.id);
    expect((await m.wait(started.id)).state).toBe("done");
  });

  it("says what went wrong for 404, 429 (with the wait), 5xx and a repo without GGUF files", async () => {
    const { m } = manager();
    await expect(m.start(DEMO_REPO, "missing-Q4_K_M.gguf")).rejects.toThrow(
      /has no GGUF file missing-Q4_K_M\.gguf/,
    );
    await expect(m.start("macaron-test/does-not-exist", "x.gguf")).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(m.start(NO_GGUF_REPO, "model.safetensors")).rejects.toThrow(/only \.gguf models/);

    const key = `${DEMO_REPO}/demo-chat-Q8_0.gguf`;
    hub.setFault(key, { kind: "status", status: 429, retryAfterSeconds: 30 });
    await expect(m.start(DEMO_REPO, "demo-chat-Q8_0.gguf")).rejects.toMatchObject({
      code: "busy",
      message: expect.stringMatching(/rate-limiting.*in 30 s/) as unknown,
    });
    hub.setFault(key, { kind: "status", status: 503 });
    await expect(m.start(DEMO_REPO, "demo-chat-Q8_0.gguf")).rejects.toThrow(
      /failed \(HTTP 503\).*try again later/,
    );
    hub.setFault(key, null);
    expect(await m.list()).toEqual([]);
  });

  it("needs a token for a gated repo and downloads with it (Authorization header)", async () => {
    const { m } = manager();
    await expect(m.start(GATED_REPO, "gated-demo-Q8_0.gguf")).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringMatching(/gated: it needs a Hugging Face access token/) as unknown,
    });
    const { m: wrong } = manager({ token: "hf_wrong" });
    await expect(wrong.start(GATED_REPO, "gated-demo-Q8_0.gguf")).rejects.toThrow(/token has no access/);
    const from = hub.requests.length;
    const { m: good } = manager({ token: hub.token });
    const done = await good.wait((await good.start(GATED_REPO, "gated-demo-Q8_0.gguf")).id);
    expect(done.state).toBe("done");
    const gets = fileRequests(`${GATED_REPO}/gated-demo-Q8_0.gguf`, from).filter((r) => r.method === "GET");
    expect(gets.length).toBeGreaterThan(0);
    for (const r of gets) expect(r.authorization).toBe(`Bearer ${hub.token}`);
  });

  it("checks free space first and reports a full disk while writing, keeping the partial file", async () => {
    const { m } = manager({ statfs: () => Promise.resolve({ bavail: 100, bsize: 4096 }) });
    await expect(m.start(SMALL_REPO, SMALL)).rejects.toThrow(
      /Not enough disk space: the download needs 11\.0 MB but only 410 kB is free/,
    );
    expect(await m.list()).toEqual([]);

    // A disk that fills up after the first chunk: the real downloader, then ENOSPC.
    const filling: CreateDownloader = async (options) => {
      let failNow: (err: Error) => void = () => undefined;
      const failed = new Promise<never>((_, reject) => (failNow = reject));
      const real = await httpDownloader({
        ...options,
        onProgress: (p: { totalSize: number; downloadedSize: number }) => {
          options.onProgress(p);
          if (p.downloadedSize >= DOWNLOAD_CHUNK_BYTES)
            failNow(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }));
        },
      });
      return {
        download: async () => {
          const running = real.download();
          try {
            await Promise.race([running, failed]);
          } catch (err) {
            // The disk's error, not the cancel's.
            await real.cancel({ deleteTempFile: false });
            await running.catch(() => undefined);
            throw err;
          }
        },
        cancel: (o) => real.cancel(o),
      };
    };
    const { m: full, dataDir } = manager({ createDownloader: filling });
    const done = await full.wait((await full.start(SMALL_REPO, SMALL)).id);
    expect(done.state).toBe("error");
    expect(done.error).toMatch(/The disk is full .*partial download is kept: free some space, then resume/);
    await full.close();
    // Nothing is lost: the download is still listed, and resuming on a working disk finishes it.
    const { m: fixed } = manager({ dataDir });
    const listed = (await fixed.list())[0]!;
    expect(listed).toMatchObject({ id: done.id, state: "error" });
    await fixed.resume(listed.id);
    expect((await fixed.wait(listed.id)).state).toBe("done");
  });

  it("downloads every part of a split GGUF and verifies each", async () => {
    const { m } = manager();
    const first = "split-tiny-Q8_0-00001-of-00002.gguf";
    const done = await m.wait((await m.start(SPLIT_REPO, first)).id);
    expect(done.state).toBe("done");
    for (const part of [first, "split-tiny-Q8_0-00002-of-00002.gguf"]) {
      expect(sha256(join(done.path, "..", part))).toBe(sha256(sourceOf(SPLIT_REPO, part)));
    }
    expect(done.totalBytes).toBe(
      (await stat(sourceOf(SPLIT_REPO, first))).size +
        (await stat(sourceOf(SPLIT_REPO, "split-tiny-Q8_0-00002-of-00002.gguf"))).size,
    );
  });
});

describe("DownloadManager against a hostile hub", () => {
  it("a body longer than the hub lists is an error on the download (not a crash), and so is resuming it", async () => {
    const key = `${DEMO_REPO}/demo-chat-F32.gguf`;
    // Content-Length counts 1 MB more than the tree lists: ipull threw outside any handler.
    hub.setFault(key, { kind: "oversize", extraBytes: 1 << 20 });
    onTestFinished(() => hub.setFault(key, null));
    const { m } = manager();
    const started = await m.start(DEMO_REPO, "demo-chat-F32.gguf");
    const failed = await m.wait(started.id);
    expect(failed.state).toBe("error");
    expect(failed.error).toMatch(
      new RegExp(
        `sent ${started.totalBytes + (1 << 20)} bytes, but the ${started.totalBytes} bytes it lists`,
      ),
    );
    await expect(stat(started.path)).rejects.toThrow();
    // Resume: the same answer, the same error.
    await m.resume(started.id);
    const again = await m.wait(started.id);
    expect(again).toMatchObject({ state: "error", error: failed.error });
    expect(await resumableBytes(started.path, started.totalBytes)).toBeLessThan(started.totalBytes);
  });

  it("stops at the listed size when a longer body comes without a length (never a byte more on disk)", async () => {
    const key = `${SMALL_REPO}/${SMALL}`;
    hub.setFault(key, { kind: "oversize", extraBytes: 8 << 20, announce: false });
    onTestFinished(() => hub.setFault(key, null));
    const { m } = manager();
    const started = await m.start(SMALL_REPO, SMALL);
    const failed = await m.wait(started.id);
    expect(failed.state).toBe("error");
    expect(failed.error).toMatch(/sent more bytes than the \d+ bytes it lists for small-chat-F32\.gguf/);
    const partial = await stat(`${started.path}${PARTIAL_SUFFIX}`);
    expect(partial.size).toBeLessThanOrEqual(started.totalBytes);
    await expect(stat(started.path)).rejects.toThrow();
    hub.setFault(key, null);
    await m.resume(started.id);
    const done = await m.wait(started.id);
    expect(done.state).toBe("done");
    expect(sha256(done.path)).toBe(sha256(sourceOf(SMALL_REPO, SMALL)));
  });

  it("a file listed without a sha256 ends unverified, kept aside until the user accepts it", async () => {
    const repos = testDir("macaron-hub-unhashed-");
    const source = sourceOf(DEMO_REPO, "demo-chat-Q8_0.gguf");
    const plain = await startHubServer({
      dir: repos,
      repos: [
        { id: "macaron-test/unhashed-GGUF", files: [{ path: "plain-Q8_0.gguf", source, unhashed: true }] },
      ],
    });
    onTestFinished(() => plain.close());
    const dataDir = testDir("macaron-dl-");
    const verified: string[] = [];
    const m = new DownloadManager({
      dataDir,
      client: new HubClient({ endpoint: plain.url }),
      onVerified: (path) => verified.push(path),
    });
    onTestFinished(() => m.close());
    // A flipped byte cannot be noticed without a hash: that is why the user decides.
    plain.setFault("macaron-test/unhashed-GGUF/plain-Q8_0.gguf", { kind: "corrupt", offset: 5000 });
    const started = await m.start("macaron-test/unhashed-GGUF", "plain-Q8_0.gguf");
    const ended = await m.wait(started.id);
    expect(ended.state).toBe("unverified");
    expect(ended.unverified).toEqual([
      { file: "plain-Q8_0.gguf", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown },
    ]);
    expect(ended.unverified![0]!.sha256).not.toBe(sha256(source));
    // Not a model yet: no final file, no sidecar, nothing verified.
    await expect(stat(started.path)).rejects.toThrow();
    expect(await readSidecar(started.path)).toBeNull();
    expect(verified).toEqual([]);
    // Still waiting after a restart; starting or resuming it again does not make it done.
    await m.close();
    const again = new DownloadManager({
      dataDir,
      client: new HubClient({ endpoint: plain.url }),
      onVerified: (path) => verified.push(path),
    });
    onTestFinished(() => again.close());
    expect((await again.list())[0]).toMatchObject({ id: started.id, state: "unverified" });
    expect((await again.resume(started.id)).state).toBe("unverified");
    expect((await again.start("macaron-test/unhashed-GGUF", "plain-Q8_0.gguf")).state).toBe("unverified");
    const accepted = await again.acceptUnverified(started.id);
    expect(accepted.state).toBe("done");
    expect((await stat(started.path)).size).toBe(started.totalBytes);
    expect(await readSidecar(started.path)).toMatchObject({ repo: "macaron-test/unhashed-GGUF" });
    expect(verified).toEqual([started.path]);
    await expect(again.acceptUnverified(started.id)).rejects.toThrow(/is done, not waiting to be accepted/);
  });

  it("sends the token to the hub only: a redirect to another host gets none, and the file still arrives", async () => {
    // The other host serves the same bytes (the demo repo's public copy) and logs what it gets.
    const seen: (string | undefined)[] = [];
    const cdn = createServer((req, res) => {
      seen.push(req.headers.authorization);
      const upstream = httpRequest(
        hub.fileUrl(DEMO_REPO, "demo-chat-Q8_0.gguf"),
        { method: req.method, headers: req.headers.range ? { range: req.headers.range } : {} },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      upstream.end();
    });
    await new Promise<void>((r) => cdn.listen(0, "127.0.0.1", r));
    onTestFinished(() => new Promise<void>((r) => cdn.close(() => r())));
    const cdnUrl = `http://127.0.0.1:${(cdn.address() as AddressInfo).port}/blob/gated-demo-Q8_0.gguf`;
    const key = `${GATED_REPO}/gated-demo-Q8_0.gguf`;
    hub.setFault(key, { kind: "redirect", location: cdnUrl });
    onTestFinished(() => hub.setFault(key, null));
    const from = hub.requests.length;
    const { m } = manager({ token: hub.token });
    const done = await m.wait((await m.start(GATED_REPO, "gated-demo-Q8_0.gguf")).id);
    expect(done).toMatchObject({ state: "done", error: null });
    expect(seen.length).toBeGreaterThanOrEqual(2); // the HEAD and the GET
    expect(seen.every((a) => a === undefined)).toBe(true);
    // The hub itself was asked with the token.
    const asked = fileRequests(key, from);
    expect(asked.length).toBeGreaterThanOrEqual(2);
    for (const r of asked) expect(r.authorization).toBe(`Bearer ${hub.token}`);
  });
});

/** The partial file holds the first two chunks' bytes (the hub stalls there). */
async function twoChunksOnDisk(path: string, size: number): Promise<boolean> {
  const two = 2 * DOWNLOAD_CHUNK_BYTES;
  if ((await resumableBytes(path, size)) < two) return false;
  const partial = await readFile(`${path}${PARTIAL_SUFFIX}`);
  return partial.subarray(0, two).equals(readFileSync(sourceOf(SMALL_REPO, SMALL)).subarray(0, two));
}

/** Waits (polling the disk) for a condition a test cannot be told about otherwise. */
async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}
