/**
 * Download throughput from the loopback test hub (testing/hub/hf-hub-server.ts):
 * the app's DownloadManager (node-llama-cpp's createModelDownloader / ipull, then the sha256
 * check against the hub's LFS hash) against `curl` of the same file, interleaved A/B runs,
 * medians and the ratio. The file is filler bytes named .gguf (the transfer does not parse it).
 *
 * Then the time to a first token for a downloaded model: the trained demo base downloaded from
 * the hub's `macaron-test/demo-chat-GGUF` (sha256 checked), loaded by a fresh engine process,
 * one greedy answer; download, load and first token timed separately.
 *
 *   npm run bench -- download [--runs 5]      (MACARON_BENCH_DOWNLOAD_MB, default 256)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DownloadManager } from "../electron/core/hub/downloads";
import { HubClient } from "../electron/core/hub/hf-client";
import { spawnNodeEngine } from "../electron/core/engine/spawn-node";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { DEMO_REPO, startHubServer } from "../testing/hub/hf-hub-server";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { median, report, type BenchRow } from "./stats";

const REPO = "macaron-bench/throughput-GGUF";
const FILE = "throughput-F16.gguf";

export async function benchDownload(options: { runs: number }): Promise<void> {
  const mb = Number(process.env.MACARON_BENCH_DOWNLOAD_MB ?? 256);
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-download-"));
  // The hub in its own process, as a real server is: it must not share this event loop.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const cli = join(import.meta.dirname, "../testing/hub/hf-hub-cli.ts");
  const server = spawn(process.execPath, ["--import", tsx, cli, "--dir", dir, "--blob-mb", String(mb)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^hub listening on (\S+)$/m.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    server.once("exit", (code) => reject(new Error(`the hub exited (${code})`)));
  });
  const size = statSync(join(dir, "throughput.gguf")).size;
  const fileUrl = `${url}/${REPO}/resolve/main/${FILE}`;
  const app: { total: number; transfer: number }[] = [];
  const curl: number[] = [];
  try {
    for (let run = 0; run < options.runs; run++) {
      // Interleaved: app, curl, app, curl, … so drift on the shared machine hits both alike.
      const dataDir = join(dir, `app-${run}`);
      const manager = new DownloadManager({
        dataDir,
        client: new HubClient({ endpoint: url }),
        emit: (d) => {
          if (d.state === "verifying" && transferEnd === 0) transferEnd = performance.now();
        },
      });
      let transferEnd = 0;
      const t0 = performance.now();
      const started = await manager.start(REPO, FILE);
      const done = await manager.wait(started.id);
      const t1 = performance.now();
      if (done.state !== "done") throw new Error(`app download failed: ${done.error}`);
      app.push({ total: (t1 - t0) / 1000, transfer: (transferEnd - t0) / 1000 });
      await manager.close();
      rmSync(dataDir, { recursive: true, force: true });

      const out = join(dir, `curl-${run}.gguf`);
      const c0 = performance.now();
      // Asynchronously: the bench keeps timing while curl runs.
      const status = await new Promise<number | null>((resolve) => {
        const child = spawn("curl", ["-sS", "-f", "-o", out, fileUrl], { stdio: "inherit" });
        child.once("exit", (code) => resolve(code));
      });
      const c1 = performance.now();
      if (status !== 0 || statSync(out).size !== size) throw new Error(`curl failed (exit ${status})`);
      curl.push((c1 - c0) / 1000);
      rmSync(out, { force: true });
    }
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
  const mbps = (seconds: number) => size / 1e6 / seconds;
  const rows: BenchRow[] = [
    {
      name: "app: createModelDownloader (transfer)",
      medianSeconds: median(app.map((a) => a.transfer)),
      MBps: mbps(median(app.map((a) => a.transfer))),
      vsCurl: median(curl) / median(app.map((a) => a.transfer)),
    },
    {
      name: "app: transfer + sha256 check",
      medianSeconds: median(app.map((a) => a.total)),
      MBps: mbps(median(app.map((a) => a.total))),
      vsCurl: median(curl) / median(app.map((a) => a.total)),
    },
    { name: "curl -o", medianSeconds: median(curl), MBps: mbps(median(curl)), vsCurl: 1 },
  ];
  rows.push(...(await firstToken(options.runs)));
  report("download", rows, {
    fileBytes: size,
    runs: options.runs,
    seconds: { app, curl },
    note: "loopback hub in its own process (node:http, no throttle); vsCurl = curl time / app time (1 = as fast as curl)",
  });
}

/** Download the demo base from the hub, load it in a fresh engine, time the first token. */
async function firstToken(runs: number): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-ttft-"));
  const hub = await startHubServer({ dir: join(dir, "repos") });
  const download: number[] = [];
  const load: number[] = [];
  const ttft: number[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const dataDir = join(dir, `data-${run}`);
      const manager = new DownloadManager({ dataDir, client: new HubClient({ endpoint: hub.url }) });
      const t0 = performance.now();
      const done = await manager.wait((await manager.start(DEMO_REPO, "demo-chat-Q8_0.gguf")).id);
      const t1 = performance.now();
      await manager.close();
      if (done.state !== "done") throw new Error(`download failed: ${done.error}`);
      const engine = new EngineSupervisor(
        spawnNodeEngine({ env: { ...process.env, MACARON_ENGINE_THREADS: "1" } }),
      );
      try {
        await engine.load(done.path);
        const t2 = performance.now();
        let first = 0;
        await engine.generate(
          [{ role: "user", text: "Hello! How are you?" }],
          { temperature: 0, maxTokens: 8 },
          () => {
            first ||= performance.now();
          },
        );
        download.push((t1 - t0) / 1000);
        load.push((t2 - t1) / 1000);
        ttft.push((first - t2) / 1000);
      } finally {
        await engine.close();
      }
    }
  } finally {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const total = download.map((d, i) => d + load[i]! + ttft[i]!);
  return [
    {
      name: "demo base (3.7 MB): download + sha256",
      medianSeconds: median(download),
      MBps: null,
      vsCurl: null,
    },
    { name: "demo base: engine start + load", medianSeconds: median(load), MBps: null, vsCurl: null },
    { name: "demo base: first token after load", medianSeconds: median(ttft), MBps: null, vsCurl: null },
    { name: "demo base: download to first token", medianSeconds: median(total), MBps: null, vsCurl: null },
  ];
}
