/**
 * The headless server against a hostile model hub (issue 27), each part with the server as its
 * own process (`electron/server/cli.ts` of `--app DIR`, default this checkout, so an older
 * checkout can be measured the same way):
 *
 * 1. **Killed every few seconds.** `serve --model hf:…` downloads a 48 MiB file from the loopback
 *    hub at 1 MB/s per connection and is killed with SIGKILL 3 s after its download starts, again
 *    and again; the next start says how much it resumes from (`resuming from X MB`). Reported:
 *    bytes kept after each kill, and kept / received.
 * 2. **The health check while a giant listing is read.** A hub whose search answer is 60 MB and whose
 *    repo tree lists 200,000 files in one page; `hub.search` and `hub.repo` are called while
 *    `/api/health` is asked back to back. Reported: each call's time and answer, the health
 *    check's median and worst latency, the server's peak RSS.
 *
 *   npm run bench -- hub-hostile [--app DIR] [--cycles 8] [--kill-ms 3000] [--bytes-per-second 1000000]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { startHubServer, writeBlob } from "../testing/hub/hf-hub-server";
import { median, report } from "./stats";

const REPO = "macaron-bench/throughput-GGUF";
const FILE = "throughput-F16.gguf";
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

interface Serve {
  child: ChildProcess;
  stderr: () => string;
  listening: Promise<string>;
}

function serve(app: string, dataDir: string, endpoint: string, model: string | null): Serve {
  const child = spawn(
    process.execPath,
    [
      "--import",
      tsx,
      join(app, "electron/server/cli.ts"),
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--api-key",
      "k",
      ...(model ? ["--model", model] : []),
    ],
    { cwd: app, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HF_ENDPOINT: endpoint } },
  );
  let out = "";
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const listening = new Promise<string>((res, rej) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^listening on (\S+)\/\?code=/m.exec(out);
      if (m?.[1]) res(m[1]);
    });
    child.once("exit", (code, signal) => rej(new Error(`exited ${code ?? signal}: ${err.slice(-2000)}`)));
  });
  listening.catch(() => undefined);
  return { child, stderr: () => err, listening };
}

function waitFor(check: () => boolean, child: ChildProcess): Promise<void> {
  return new Promise((res, rej) => {
    const timer = setInterval(() => {
      if (check()) {
        clearInterval(timer);
        res();
      } else if (child.exitCode !== null || child.signalCode !== null) {
        clearInterval(timer);
        rej(new Error("the server exited"));
      }
    }, 10);
  });
}

function resumedFrom(stderr: string): number {
  const m = /resuming from ([\d.]+) MB/.exec(stderr);
  return m ? Number(m[1]) * 1e6 : 0;
}

async function killedEvery(app: string, cycles: number, killMs: number, bytesPerSecond: number) {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-kill-"));
  const source = join(dir, "blob.gguf");
  const size = 48 * 1024 * 1024;
  await writeBlob(source, size, 5);
  const hub = await startHubServer({ dir, repos: [{ id: REPO, files: [{ path: FILE, source }] }] });
  hub.setFault(`${REPO}/${FILE}`, { kind: "throttle", bytesPerSecond });
  const dataDir = join(dir, "data");
  const kept: number[] = [];
  const received: number[] = [];
  try {
    for (let i = 0; i <= cycles; i++) {
      const servedBefore = hub.bytesServed(`${REPO}/${FILE}`);
      const run = serve(app, dataDir, hub.url, `hf:${REPO}/${FILE}`);
      // The download has started once the first progress line is out (after "resuming from").
      await waitFor(() => /download hf:\S+: (queued|downloading)/.test(run.stderr()), run.child);
      if (i === cycles) {
        // The last start only says what it resumes from.
        await waitFor(() => /download hf:\S+: (resuming|downloading)/.test(run.stderr()), run.child);
        kept.push(resumedFrom(run.stderr()));
        run.child.kill("SIGKILL");
        break;
      }
      await new Promise((r) => setTimeout(r, killMs));
      const exited = new Promise((r) => run.child.once("exit", r));
      run.child.kill("SIGKILL");
      await exited;
      await hub.connectionsClosed();
      received.push(hub.bytesServed(`${REPO}/${FILE}`) - servedBefore);
      // What this start resumed from: what the kills before it kept.
      if (i > 0) kept.push(resumedFrom(run.stderr()));
    }
  } finally {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const totalReceived = received.reduce((a, b) => a + b, 0);
  const last = kept.at(-1) ?? 0;
  return {
    cycles,
    killMs,
    bytesPerSecond,
    fileBytes: size,
    keptAfterEachKill: kept,
    receivedPerCycle: received,
    keptOfReceived: totalReceived > 0 ? last / totalReceived : 0,
    advancedPerCycleMB: last / cycles / 1e6,
  };
}

async function healthUnderListing(app: string) {
  // The hostile hub: a 60 MB search answer, a 200,000-file tree in one page.
  const item = JSON.stringify({ id: "evil/model", tags: ["gguf"], cardData: { pad: "x".repeat(3000) } });
  const search = Buffer.from(
    `[${Array.from({ length: Math.ceil(60e6 / item.length) }, () => item).join(",")}]`,
  );
  const tree = Buffer.from(
    JSON.stringify(
      Array.from({ length: 200_000 }, (_, i) => ({
        type: "file",
        path: `shards/model-Q4_K_M-${i}.gguf`,
        size: 1000 + i,
        oid: "0".repeat(40),
        lfs: { oid: "a".repeat(64), size: 1000 + i, pointerSize: 134 },
      })),
    ),
  );
  const info = Buffer.from(JSON.stringify({ id: "evil/big", tags: ["gguf"] }));
  const hostile = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const body = path === "/api/models" ? search : path.endsWith("/tree/main") ? tree : info;
    res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
    res.end(body);
  });
  await new Promise<void>((r) => hostile.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  const dataDir = mkdtempSync(join(tmpdir(), "macaron-bench-listing-"));
  const run = serve(app, dataDir, endpoint, null);
  const rows: Record<string, unknown>[] = [];
  try {
    const base = await run.listening;
    for (const [method, input, what] of [
      ["hub.search", { query: "x" }, `search answer of ${(search.length / 1e6).toFixed(0)} MB`],
      ["hub.repo", { repo: "evil/big" }, `tree of 200,000 files (${(tree.length / 1e6).toFixed(0)} MB)`],
    ] as const) {
      const latencies: number[] = [];
      let stop = false;
      const probe = (async () => {
        while (!stop) {
          const t = performance.now();
          await fetch(`${base}/api/health`).then((r) => r.arrayBuffer());
          latencies.push(performance.now() - t);
        }
      })();
      const t0 = performance.now();
      const res = await fetch(`${base}/api/call/${method}`, {
        method: "POST",
        headers: { authorization: "Bearer k", "content-type": "application/json" },
        body: JSON.stringify(input),
      });
      const body = (await res.json()) as { ok: boolean; error?: { code: string; message: string } };
      const seconds = (performance.now() - t0) / 1000;
      stop = true;
      await probe;
      const status = readFileSync(`/proc/${run.child.pid}/status`, "utf8");
      const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      latencies.sort((a, b) => a - b);
      rows.push({
        what,
        method,
        seconds: Number(seconds.toFixed(2)),
        http: res.status,
        answer: body.ok ? "ok" : `${body.error?.code}: ${body.error?.message}`,
        healthChecks: latencies.length,
        healthMedianMs: Number(median(latencies).toFixed(1)),
        healthWorstMs: Number((latencies.at(-1) ?? 0).toFixed(1)),
        serverPeakRssMB: Math.round(hwm),
      });
    }
  } finally {
    run.child.kill("SIGKILL");
    await new Promise<void>((r) => hostile.close(() => r()));
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      app: { type: "string", default: resolve(import.meta.dirname, "..") },
      cycles: { type: "string", default: "8" },
      "kill-ms": { type: "string", default: "3000" },
      "bytes-per-second": { type: "string", default: "1000000" },
      only: { type: "string" },
    },
    strict: false,
  });
  const app = resolve(String(values.app));
  const out: Record<string, unknown> = { app };
  if (values.only !== "listing")
    out.killed = await killedEvery(
      app,
      Number(values.cycles),
      Number(values["kill-ms"]),
      Number(values["bytes-per-second"]),
    );
  if (values.only !== "killed") out.listing = await healthUnderListing(app);
  console.log(JSON.stringify(out, null, 2));
  const rows = ((out.listing as Record<string, string | number>[] | undefined) ?? []).map((r) => ({
    name: String(r.what),
    seconds: r.seconds!,
    http: r.http!,
    healthMedianMs: r.healthMedianMs!,
    healthWorstMs: r.healthWorstMs!,
    serverPeakRssMB: r.serverPeakRssMB!,
  }));
  report(`hub-hostile${values.only ? `-${String(values.only)}` : ""}`, rows, out);
}
