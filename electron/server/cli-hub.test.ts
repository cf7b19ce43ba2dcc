/**
 * Headless `--model hf:…` as a real process against the loopback hub (HF_ENDPOINT): the model
 * is downloaded into DATA-DIR/models with progress lines on stderr, then loaded by the real
 * engine; a download killed with SIGKILL resumes on the next start from its partial bytes
 * (the hub's Range log shows no completed chunk fetched again). A hub that sends a file longer
 * than it lists ends the download in an error, and the server lives on (ipull's uncaught throw
 * ended the process), also when the download is resumed after a restart.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { DOWNLOAD_CHUNK_BYTES, PARTIAL_SUFFIX, resumableBytes } from "../core/hub/downloads";
import { DEMO_REPO, SMALL_REPO, type HubServer } from "../../testing/hub/hf-hub-server";
import { useTestHub } from "../../testing/hub/test-hub";
import { testDir } from "../../testing/core/temp-dir";
import { readJson } from "../../testing/server/test-core";
import type { Download } from "../api";

const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const cli = join(import.meta.dirname, "cli.ts");

let hub: HubServer;

useTestHub((h) => (hub = h));

interface Serve {
  child: ChildProcess;
  stderr: () => string;
  /** Resolves with the base URL at the `listening on` line. */
  listening: Promise<string>;
}

function serve(dataDir: string, model: string | null): Serve {
  const child = spawn(
    process.execPath,
    [
      "--import",
      tsxLoader,
      cli,
      "--port",
      "0",
      "--data-dir",
      dataDir,
      ...(model ? ["--model", model] : []),
      "--api-key",
      "k",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, HF_ENDPOINT: hub.url, MACARON_ENGINE_THREADS: "1" },
    },
  );
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^listening on (\S+)\/\?code=/m.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code, signal) => reject(new Error(`exited ${code ?? signal}: ${err}`)));
  });
  listening.catch(() => undefined);
  return { child, stderr: () => err, listening };
}

async function call(base: string, method: string, input: unknown = {}) {
  const res = await fetch(`${base}/api/call/${method}`, {
    method: "POST",
    headers: { authorization: "Bearer k", "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return readJson<{ ok: boolean; value?: unknown; error?: { code: string; message: string } }>(res);
}

async function status(base: string) {
  return (await call(base, "models.status")).value as { state: string; model: { path: string } | null };
}

/**
 * Polls `hub.downloads` until download `id` has left the running states (the server's own event
 * stream is not needed for that); fails at once if the process exits meanwhile.
 */
async function settled(run: Serve, base: string, id: string): Promise<Download> {
  for (;;) {
    if (run.child.exitCode !== null || run.child.signalCode !== null)
      throw new Error(`the server exited (${run.child.exitCode ?? run.child.signalCode}): ${run.stderr()}`);
    const list = (await call(base, "hub.downloads")).value as Download[];
    const d = list.find((x) => x.id === id);
    if (d && !["queued", "downloading", "verifying"].includes(d.state)) return d;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

describe("serve --model hf:…", () => {
  it("downloads the model from HF_ENDPOINT with progress lines, then serves it loaded", async () => {
    const dataDir = testDir("macaron-cli-hub-");
    const run = serve(dataDir, `hf:${DEMO_REPO}:Q8_0`);
    const base = await run.listening;
    const path = join(dataDir, "models", "macaron-test", "demo-chat-GGUF", "demo-chat-Q8_0.gguf");
    expect(run.stderr()).toContain(`download hf:${DEMO_REPO}/demo-chat-Q8_0.gguf: done (${path})`);
    expect(run.stderr()).toMatch(/download hf:.*: (queued|downloading) \d+%/);
    expect(run.stderr()).not.toContain("could not load");
    const s = await status(base);
    expect(s.state).toBe("ready");
    expect(s.model?.path).toBe(path);
  });

  it("resumes a download killed with SIGKILL from its partial bytes, not from zero", async () => {
    const dataDir = testDir("macaron-cli-hub-");
    const key = `${SMALL_REPO}/small-chat-F32.gguf`;
    const path = join(dataDir, "models", "macaron-test", "small-chat-GGUF", "small-chat-F32.gguf");
    const source = readFileSync(hub.repos.find((r) => r.id === SMALL_REPO)!.files[0]!.source);
    const size = source.length;
    // The hub serves 10 MiB, then holds the connection: the process is mid-download.
    hub.setFault(key, { kind: "stall", offset: 2 * DOWNLOAD_CHUNK_BYTES });
    onTestFinished(() => hub.setFault(key, null));
    const first = serve(dataDir, `hf:${SMALL_REPO}:F32`);
    const deadline = Date.now() + 90_000;
    // Killed once those bytes are in the partial file.
    const landed = async () =>
      (await resumableBytes(path, size)) >= 2 * DOWNLOAD_CHUNK_BYTES &&
      readFileSync(`${path}${PARTIAL_SUFFIX}`)
        .subarray(0, 2 * DOWNLOAD_CHUNK_BYTES)
        .equals(source.subarray(0, 2 * DOWNLOAD_CHUNK_BYTES));
    while (!(await landed())) {
      if (Date.now() > deadline) throw new Error(`no partial download: ${first.stderr()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const exited = new Promise((r) => first.child.once("exit", r));
    first.child.kill("SIGKILL");
    await exited;
    const saved = JSON.parse(await readFile(join(dataDir, "models", ".downloads.json"), "utf8")) as {
      state: string;
    }[];
    expect(saved[0]?.state).toBe("downloading"); // what the killed process left

    hub.setFault(key, null);
    // Requests the killed process sent are read by the hub only as its connections close.
    await hub.connectionsClosed();
    const from = hub.requests.length;
    const second = serve(dataDir, `hf:${SMALL_REPO}:F32`);
    const base = await second.listening;
    expect(second.stderr()).not.toContain("could not load");
    expect(second.stderr()).toContain(`download hf:${SMALL_REPO}/small-chat-F32.gguf: resuming from 10.5 MB`);
    const ranged = hub.requests
      .slice(from)
      .filter((r) => r.path === `/${SMALL_REPO}/resolve/main/small-chat-F32.gguf` && r.range);
    expect(ranged.length).toBeGreaterThan(0);
    const starts = ranged.map((r) => Number(/bytes=(\d+)-/.exec(r.range!)![1]));
    expect(Math.min(...starts), JSON.stringify(ranged)).toBeGreaterThanOrEqual(2 * DOWNLOAD_CHUNK_BYTES);
    expect(ranged.reduce((s, r) => s + r.bytes, 0)).toBeLessThanOrEqual(size - 2 * DOWNLOAD_CHUNK_BYTES);
    expect(sha256(readFileSync(path))).toBe(sha256(source));
    expect((await status(base)).model?.path).toBe(path);
  }, 180_000);

  it("serves without a model and says why when the download fails (gated, no token)", async () => {
    const dataDir = testDir("macaron-cli-hub-");
    const run = serve(dataDir, "hf:macaron-test/gated-demo-GGUF:Q8_0");
    const base = await run.listening;
    expect(run.stderr()).toMatch(
      /could not load hf:macaron-test\/gated-demo-GGUF:Q8_0: the download failed: .*gated/,
    );
    expect((await status(base)).model).toBeNull();
  });

  it("a file longer than the hub lists ends its download in an error; the server lives on, also through resume after a restart", async () => {
    const dataDir = testDir("macaron-cli-hub-");
    const key = `${SMALL_REPO}/small-chat-F32.gguf`;
    hub.setFault(key, { kind: "oversize", extraBytes: 1 << 20 });
    onTestFinished(() => hub.setFault(key, null));
    const first = serve(dataDir, null);
    const base = await first.listening;
    const queued = await call(base, "hub.download", { repo: SMALL_REPO, file: "small-chat-F32.gguf" });
    expect(queued.ok).toBe(true);
    const started = queued.value as Download;
    const failed = await settled(first, base, started.id);
    expect(failed.state).toBe("error");
    expect(failed.error).toMatch(/sent \d+ bytes, but the \d+ bytes it lists for small-chat-F32\.gguf/);
    // Alive and answering.
    expect((await fetch(`${base}/api/health`)).ok).toBe(true);
    expect((await call(base, "hub.resume", { id: started.id })).ok).toBe(true);
    expect((await settled(first, base, started.id)).state).toBe("error");
    expect(first.child.exitCode).toBeNull();

    // Restarted (as after the crash it used to cause): listed, and resuming fails the same way.
    const exited = new Promise((r) => first.child.once("exit", r));
    first.child.kill("SIGTERM");
    await exited;
    const second = serve(dataDir, null);
    const base2 = await second.listening;
    const listed = ((await call(base2, "hub.downloads")).value as Download[]).find(
      (d) => d.id === started.id,
    );
    expect(listed?.state).toBe("error");
    expect((await call(base2, "hub.resume", { id: started.id })).ok).toBe(true);
    const again = await settled(second, base2, started.id);
    expect(again).toMatchObject({ state: "error", error: failed.error });
    expect((await fetch(`${base2}/api/health`)).ok).toBe(true);
    expect(second.child.exitCode).toBeNull();
  }, 240_000);
});
