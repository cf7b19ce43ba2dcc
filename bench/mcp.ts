/**
 * Issue 12 numbers: a tool's round-trip through the app's MCP path (ToolCatalog → McpHub → the
 * SDK's client → a real server process and back, arguments checked, result rendered), over
 * stdio and over Streamable HTTP on loopback, for the fixture server and for
 * `@modelcontextprotocol/server-everything` from npm; and the time from "add" to "ready".
 *
 *   npm run bench -- mcp [--runs N]     (N × 100 echo calls per server after 20 warm-up calls)
 */
import { tempDir } from "../testing/core/temp-dir";
import { McpHub } from "../electron/core/tools/mcp/mcp-hub";
import {
  everythingSpec,
  fixtureSpec,
  startEverythingHttp,
  startFixtureHttp,
  type HttpServerProcess,
} from "../testing/mcp/mcp-test-servers";
import { ToolCatalog } from "../electron/core/tools/tool-catalog";
import { ToolSwitches } from "../electron/core/tools/tool-switches";
import type { McpServerSpec } from "../electron/api/tools";
import { median, percentile, report, type BenchRow } from "./stats";

const WARM_UP = 20;

interface Target {
  name: string;
  transport: "stdio" | "http";
  spec: () => Promise<{ spec: McpServerSpec; server?: HttpServerProcess }>;
  tool: string;
  args: Record<string, unknown>;
}

const targets: Target[] = [
  {
    name: "fixture",
    transport: "stdio",
    spec: () => Promise.resolve({ spec: fixtureSpec() }),
    tool: "echo",
    args: { text: "ping" },
  },
  {
    name: "fixture",
    transport: "http",
    spec: async () => {
      const server = await startFixtureHttp();
      return { spec: { url: server.url, headers: {} }, server };
    },
    tool: "echo",
    args: { text: "ping" },
  },
  {
    name: "server-everything",
    transport: "stdio",
    spec: () => Promise.resolve({ spec: everythingSpec() }),
    tool: "echo",
    args: { message: "ping" },
  },
  {
    name: "server-everything",
    transport: "http",
    spec: async () => {
      const server = await startEverythingHttp();
      return { spec: { url: server.url, headers: {} }, server };
    },
    tool: "echo",
    args: { message: "ping" },
  },
];

export async function benchMcp(options: { runs: number }): Promise<void> {
  const calls = Math.max(1, options.runs) * 100;
  const rows: BenchRow[] = [];
  for (const target of targets) {
    const dir = tempDir("macaron-bench-mcp-");
    const switches = new ToolSwitches(dir.path);
    const hub = new McpHub({ dataDir: dir.path, switches, emit: () => undefined, log: () => undefined });
    hub.start();
    const catalog = new ToolCatalog(switches, [hub]);
    const { spec, server } = await target.spec();
    try {
      const addStart = performance.now();
      const status = await hub.add("bench", spec);
      const readyMs = performance.now() - addStart;
      if (status.state !== "ready") throw new Error(`${target.name}/${target.transport}: ${status.error}`);
      const tool = catalog.find("bench", target.tool);
      if (!tool) throw new Error(`${target.name} has no ${target.tool}`);
      const signal = new AbortController().signal;
      const times: number[] = [];
      for (let i = 0; i < WARM_UP + calls; i += 1) {
        const start = performance.now();
        const outcome = await catalog.call(tool, target.args, signal);
        const elapsed = performance.now() - start;
        if (!outcome.ok) throw new Error(`${target.name}/${target.transport}: ${outcome.error}`);
        if (i >= WARM_UP) times.push(elapsed);
      }
      rows.push({
        name: `${target.name} ${target.transport}`,
        calls,
        medianMs: median(times),
        p90Ms: percentile(times, 90),
        minMs: Math.min(...times),
        maxMs: Math.max(...times),
        addToReadyMs: readyMs,
      });
    } finally {
      await hub.close();
      await server?.stop();
      dir.remove();
    }
  }
  report("mcp", rows, { warmUp: WARM_UP, tool: "echo" });
}
