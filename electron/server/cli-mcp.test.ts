/** `npm run serve -- --mcp-config FILE` as a real process: the file's servers start, bad ones are named. */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { McpServerStatus } from "../api/tools";
import { fixtureSpec } from "../../testing/mcp/mcp-test-servers";
import { readJson } from "../../testing/server/test-core";
import { suiteDir } from "../../testing/core/temp-dir";

const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const cli = join(import.meta.dirname, "cli.ts");
const dir = suiteDir("macaron-cli-mcp-");

function serve(config: string) {
  const path = join(dir.path, `mcp-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, config);
  const child = spawn(
    process.execPath,
    [
      "--import",
      tsxLoader,
      cli,
      "--port",
      "0",
      "--data-dir",
      join(dir.path, "data"),
      "--api-key",
      "k",
      "--mcp-config",
      path,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      const match = /^listening on (\S+)\/\?code=/m.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  // A refused config never listens: that rejection is the exit's business, not an unhandled one.
  listening.catch(() => undefined);
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, listening, exit, stderr: () => stderr };
}

async function call(base: string, method: string, input: unknown = {}): Promise<unknown> {
  const res = await fetch(`${base}/api/call/${method}`, {
    method: "POST",
    headers: { authorization: "Bearer k", "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return (await readJson(res)).value;
}

describe("serve --mcp-config", () => {
  it("starts the file's servers for this run and names the entries it skips", async () => {
    const server = serve(JSON.stringify({ mcpServers: { fx: fixtureSpec(), broken: { command: 7 } } }));
    try {
      const base = await server.listening;
      expect(server.stderr()).toMatch(
        /warning: --mcp-config: server "broken" is skipped: The entry is not valid/,
      );
      let list: McpServerStatus[] = [];
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        list = (await call(base, "mcp.list")) as McpServerStatus[];
        if (list[0]?.state !== "starting") break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(list.map((s) => [s.name, s.state])).toEqual([["fx", "ready"]]);
      const tools = (await call(base, "tools.list")) as { server: string; name: string }[];
      expect(tools.some((t) => t.server === "fx" && t.name === "set_timer")).toBe(true);
    } finally {
      server.child.kill("SIGTERM");
      expect(await server.exit).toBe(0);
    }
  });

  it("refuses a file that does not parse, saying where", async () => {
    const server = serve('{"mcpServers": {"fx": }}');
    expect(await server.exit).toBe(2);
    expect(server.stderr()).toMatch(
      /error: --mcp-config .*mcp-\w+\.json: The MCP config is not valid JSON at line 1, column 23: /,
    );
  });
});
