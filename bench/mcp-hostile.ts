/**
 * Issue 27 numbers: how late a health check is answered while the app's MCP hub deals with a
 * hostile server (testing/mcp/hostile-mcp-server.mjs), and RSS over add/remove cycles. Prints JSON.
 *
 *   npx tsx bench/mcp-hostile.ts [--cycles 20] [--modes huge-schema,deep-schema,...]
 *
 * The health endpoint is a plain HTTP server on loopback in this process (the thread that runs
 * the hub, as in the app and the headless server); a separate process asks it every 50 ms and
 * reports each answer's latency, so a stalled thread shows as late answers, not as missed timers.
 * Per scenario: `mcp.add` (and, for flood and big-result, the call that waits on the attack),
 * the worst and 99th-percentile health latency meanwhile, and the event loop's worst delay.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parseArgs } from "node:util";
import { tempDir } from "../testing/core/temp-dir";
import { REPO_ROOT } from "../testing/mcp/mcp-test-servers";
import { McpHub } from "../electron/core/tools/mcp/mcp-hub";
import { ToolSwitches } from "../electron/core/tools/tool-switches";
import type { McpServerSpec } from "../electron/api/tools";

const HOSTILE = join(REPO_ROOT, "testing/mcp/hostile-mcp-server.mjs");
const spec = (mode: string, size?: number): McpServerSpec => ({
  command: process.execPath,
  args: [HOSTILE, "--mode", mode, ...(size === undefined ? [] : ["--size", String(size)])],
  env: {},
  cwd: REPO_ROOT,
});

const POLLER = `
const url = process.argv[1];
const latencies = [];
let stop = false;
process.stdin.on("data", () => { stop = true; });
(async () => {
  while (!stop) {
    const start = performance.now();
    try { await (await fetch(url)).text(); } catch {}
    latencies.push(performance.now() - start);
    const wait = 50 - (performance.now() - start);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  process.stdout.write(JSON.stringify(latencies));
})();
`;

async function withHealthPoller<T>(
  work: () => Promise<T>,
): Promise<{ result: T; health: Record<string, number> }> {
  const server = createServer((_req, res) => res.end('{"ok":true}'));
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as { port: number };
  const poller = spawn(process.execPath, ["-e", POLLER, `http://127.0.0.1:${port}/api/health`], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  poller.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((done) => poller.once("exit", () => done()));
  await new Promise((resolve) => setTimeout(resolve, 300)); // a few answers before the work
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const start = performance.now();
  const result = await work();
  const workMs = performance.now() - start;
  loop.disable();
  await new Promise((resolve) => setTimeout(resolve, 200));
  poller.stdin.end("stop");
  await exited;
  server.close();
  const latencies = (JSON.parse(out || "[]") as number[]).sort((a, b) => a - b);
  const pick = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    result,
    health: {
      workMs: round(workMs),
      healthChecks: latencies.length,
      healthP50Ms: round(pick(0.5)),
      healthP99Ms: round(pick(0.99)),
      healthMaxMs: round(latencies.at(-1) ?? 0),
      eventLoopMaxDelayMs: round(loop.max / 1e6),
    },
  };
}

function makeHub(dir: string): McpHub {
  const hub = new McpHub({
    dataDir: dir,
    switches: new ToolSwitches(dir),
    emit: () => undefined,
    log: () => undefined,
  });
  hub.start();
  return hub;
}

const never = new AbortController().signal;
const tool = (name: string) => ({ server: "h", name, description: "", inputSchema: { type: "object" } });

const SCENARIOS: Record<string, (hub: McpHub) => Promise<unknown>> = {
  "huge-schema": async (hub) => (await hub.add("h", spec("huge-schema"))).state,
  "deep-schema": async (hub) => (await hub.add("h", spec("deep-schema"))).state,
  "huge-description": async (hub) => (await hub.add("h", spec("huge-description"))).state,
  flood: async (hub) => {
    await hub.add("h", spec("flood", 200_000));
    const outcome = await hub.call(tool("stats"), {}, never);
    return outcome.ok ? outcome.text : outcome.error;
  },
  "big-result": async (hub) => {
    await hub.add("h", spec("big-result", 30_000_000));
    const outcome = await hub.call(tool("big"), {}, never);
    return outcome.ok ? `ok, ${outcome.text.length} chars` : outcome.error;
  },
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cycles: { type: "string", default: "20" },
      modes: { type: "string", default: Object.keys(SCENARIOS).join(",") },
      "rss-mode": { type: "string", default: "huge-schema" },
    },
  });
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const dir = tempDir("macaron-bench-hostile-");
  const report: Record<string, unknown> = {};
  try {
    for (const mode of values.modes.split(",").filter(Boolean)) {
      const hub = makeHub(dir.path);
      const { result, health } = await withHealthPoller(() => SCENARIOS[mode]!(hub));
      const listed = hub
        .listTools()
        .map((t) => ({ name: t.name, problem: t.problem?.slice(0, 120) ?? null }));
      await hub.remove("h");
      await hub.close();
      report[mode] = { ...health, result: String(result).slice(0, 200), tools: listed };
    }
    // RSS over add/remove cycles of one server (default: the 30,000-property schema).
    const cycles = Number(values.cycles);
    const hub = makeHub(dir.path);
    const mb = () => Math.round(process.memoryUsage().rss / 1024 / 1024);
    gc();
    const rss: number[] = [mb()];
    for (let i = 0; i < cycles; i++) {
      await hub.add("h", spec(values["rss-mode"]));
      await hub.remove("h");
      gc();
      rss.push(mb());
    }
    await hub.close();
    report.rss = {
      mode: values["rss-mode"],
      cycles,
      startMb: rss[0],
      endMb: rss.at(-1),
      maxMb: Math.max(...rss),
      perCycleMb: rss,
    };
  } finally {
    dir.remove();
  }
  console.log(JSON.stringify(report, null, 2));
}

await main();
