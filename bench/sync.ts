/**
 * `npm run bench -- sync [--runs N]`: feedback upload throughput. 10,000 items go from a SQLite
 * outbox to the local cloud service, started in its own process as in production (real HTTP,
 * gzip, SQLite with synchronous=FULL at the service); "max loop stall" is the longest the
 * client's event loop was blocked (what a streaming chat in the same process would feel):
 * directly, through the fault proxy without faults (its own overhead), and with 20% of requests
 * broken (5xx, 429, resets, stalls, lost answers). Backoff waits are skipped (fast clock) so the
 * faulty row measures the protocol's cost of a fault (wasted requests, timeouts), not the
 * backoff policy; a stall costs the client timeout (200 ms here) in real time.
 *
 * The outbox is the app's SqliteOutbox (schema 0004). The last row is its write cost per
 * feedback event: the event row + the queued item in one transaction, synchronous=FULL like the
 * app's database, one transaction per event as FeedbackService writes them.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { FaultProxy, seededSchedule, type Fault, type FaultSchedule } from "../testing/cloud/fault-proxy";
import { makeItem } from "../testing/cloud/items";
import { FeedbackSync } from "../electron/core/feedback/sync/feedback-sync";
import { fastClock } from "../testing/sync/harness";
import { QueuedOutbox } from "../testing/sync/queued-outbox";
import { median, percentile, report, type BenchRow } from "./stats";

const ITEMS = 10_000;
const STALL_TIMEOUT_MS = 200;
const INSTALL_ID = randomUUID();

/** 20% of requests fail, spread over the fault kinds. */
const FAULT_RATES: Partial<Record<Fault, number>> = {
  error5xx: 0.06,
  throttle: 0.04,
  reset: 0.04,
  stall: 0.02,
  dropResponse: 0.04,
};

interface Scenario {
  name: string;
  schedule: FaultSchedule | null;
}

interface RunResult {
  ms: number;
  requests: number;
  stored: number;
  faults: number;
  /** Longest the event loop was blocked during the upload (what a chat stream would feel). */
  maxLoopStallMs: number;
}

/** The cloud service in its own process, as in production: its CPU time is not the client's. */
async function spawnCloud(dataDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", "cloud/cli.ts", "--port", "0", "--data-dir", dataDir],
    {
      cwd: resolve(import.meta.dirname, ".."),
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const url = await new Promise<string>((ok, fail) => {
    createInterface({ input: proc.stdout }).on("line", (l) => {
      const m = /^listening on (\S+)/.exec(l);
      if (m) ok(m[1]!);
    });
    proc.once("exit", (c) => fail(new Error(`cloud exited ${c}`)));
  });
  return {
    url,
    async stop() {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

async function runOnce(scenario: Scenario, seed: number): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-sync-"));
  const cloud = await spawnCloud(join(dir, "cloud"));
  const proxy = scenario.schedule
    ? await FaultProxy.start({ target: cloud.url, schedule: scenario.schedule })
    : null;
  const outbox = QueuedOutbox.open(join(dir, "outbox.db"));
  try {
    outbox.enqueueItems(
      Array.from({ length: ITEMS }, (_, i) =>
        makeItem(`bench-${seed}-${String(i).padStart(6, "0")}`, {
          prompt: [
            { role: "system", text: "You are Macaron." },
            { role: "user", text: `Question number ${i}: how do I sort a list in TypeScript?` },
          ],
          response: `Use Array.prototype.sort with a comparator; item ${i}. `.repeat(4),
        }),
      ),
    );
    const clock = fastClock();
    let token: string | null = null;
    const sync = new FeedbackSync({
      outbox,
      endpoint: proxy?.url ?? cloud.url,
      getInstall: () => ({ installId: INSTALL_ID }),
      getToken: () => token,
      setToken: (t) => void (token = t),
      isEnabled: () => true,
      sleep: clock.sleep,
      requestTimeoutMs: STALL_TIMEOUT_MS,
    });
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const t0 = performance.now();
    const status = await sync.syncNow();
    const ms = performance.now() - t0;
    loop.disable();
    const health = (await (await fetch(`${cloud.url}/v1/health`)).json()) as { items: number };
    const stored = health.items;
    if (status.queued !== 0 || stored !== ITEMS)
      throw new Error(
        `${scenario.name}: ${stored} stored, ${status.queued} still queued (${status.lastError})`,
      );
    const faults = proxy ? proxy.log.filter((r) => r.fault !== "none").length : 0;
    return {
      ms,
      requests: proxy?.log.length ?? Math.ceil(ITEMS / 200) + 1,
      stored,
      faults,
      maxLoopStallMs: loop.max / 1e6,
    };
  } finally {
    outbox.close();
    await proxy?.close();
    await cloud.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchSync(args: { runs: number }): Promise<void> {
  const scenarios: Scenario[] = [
    { name: "clean (direct)", schedule: null },
    { name: "clean (via proxy)", schedule: () => "none" },
    { name: "20% faults (via proxy)", schedule: seededSchedule(7, FAULT_RATES) },
  ];
  const rows: BenchRow[] = [];
  for (const scenario of scenarios) {
    const results: RunResult[] = [];
    for (let run = 0; run < args.runs; run++) {
      // A fresh seed per run: each run meets a different (but replayable) fault pattern.
      if (scenario.schedule && scenario.name.startsWith("20%"))
        scenario.schedule = seededSchedule(7 + run, FAULT_RATES);
      results.push(await runOnce(scenario, run));
    }
    const ms = median(results.map((r) => r.ms));
    rows.push({
      name: scenario.name,
      items: ITEMS,
      runs: results.length,
      "total s (median)": ms / 1000,
      "items/s": ITEMS / (ms / 1000),
      requests: median(results.map((r) => r.requests)),
      "faults injected": median(results.map((r) => r.faults)),
      "max loop stall ms": Math.max(...results.map((r) => r.maxLoopStallMs)),
      "stored exactly once": results.every((r) => r.stored === ITEMS) ? "yes" : "NO",
    });
  }
  rows.push(outboxWriteCost(2000));
  report("sync", rows, {
    items: ITEMS,
    faultRates: FAULT_RATES,
    clientTimeoutMs: STALL_TIMEOUT_MS,
    note: "backoff waits skipped (fast clock); a stall costs the client timeout",
  });
}

/** Time to queue one feedback event (event row + outbox item, own transaction, fsync'd). */
function outboxWriteCost(events: number): BenchRow {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-outbox-"));
  const outbox = QueuedOutbox.open(join(dir, "outbox.db"));
  try {
    outbox.conn.pragma("synchronous = FULL");
    const times: number[] = [];
    for (let i = 0; i < events; i++) {
      const item = makeItem(`write-${String(i).padStart(6, "0")}`);
      const t0 = performance.now();
      outbox.enqueueItems([item]);
      times.push(performance.now() - t0);
    }
    return {
      name: "outbox write per event",
      items: events,
      "p50 µs": median(times) * 1000,
      "p99 µs": percentile(times, 99) * 1000,
      "events/s": events / (times.reduce((a, b) => a + b, 0) / 1000),
    };
  } finally {
    outbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
