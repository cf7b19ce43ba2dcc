/**
 * tools.* and mcp.* through core's dispatch (real SQLite, real fixture server process; the
 * engine is not involved): events, error envelopes, built-in and MCP tools in one list, and
 * closing core stops the servers.
 */
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServerStatus, ToolInfo } from "../../../api/tools";
import { assembleCore, type Core } from "../../index";
import { EventRecorder } from "../../../../testing/core/events";
import { FakeEngine } from "../../../../testing/engine/fake-engine";
import { value } from "../../../../testing/core/result-value";
import { testDir } from "../../../../testing/core/temp-dir";
import { fixtureSpec } from "../../../../testing/mcp/mcp-test-servers";

const ctx = { transport: "http" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(): Promise<{ core: Core; events: EventRecorder }> {
  const core = await assembleCore(
    { dataDir: testDir("macaron-mcp-core-"), log: () => undefined },
    () => new FakeEngine(),
  );
  cleanups.push(() => core.close());
  return { core, events: new EventRecorder((listener) => core.subscribe(listener)) };
}

describe("tools.* and mcp.* through core", () => {
  it("adds a server, lists its tools next to the built-in ones, switches one off, shows logs, and stops it on close", async () => {
    const { core, events } = await start();
    const ready = events.next("mcp.changed", (p) => p.server?.state === "ready");
    const added = value<McpServerStatus>(
      await core.dispatch("mcp.add", { name: "fx", spec: fixtureSpec() }, ctx),
    );
    expect(added.state).toBe("ready");
    expect((await ready).name).toBe("fx");

    const tools = value<ToolInfo[]>(await core.dispatch("tools.list", {}, ctx));
    expect(tools.some((t) => t.server === "builtin")).toBe(true);
    // Built-in tools list first, then the servers'.
    expect(tools.findIndex((t) => t.server === "fx")).toBeGreaterThan(
      tools.findLastIndex((t) => t.server === "builtin"),
    );
    expect(tools.find((t) => t.server === "fx" && t.name === "bogus")?.enabled).toBe(false);

    const switched = events.next(
      "mcp.changed",
      (p) => p.server?.tools.find((t) => t.name === "echo")?.enabled === false,
    );
    const off = value<ToolInfo>(
      await core.dispatch("tools.setEnabled", { server: "fx", name: "echo", enabled: false }, ctx),
    );
    expect(off).toMatchObject({ server: "fx", name: "echo", enabled: false });
    await switched;
    expect(
      await core.dispatch("tools.setEnabled", { server: "fx", name: "bogus", enabled: true }, ctx),
    ).toMatchObject({
      ok: false,
      error: { code: "invalid_input", message: expect.stringMatching(/cannot be turned on/) as unknown },
    });
    expect(
      await core.dispatch("tools.setEnabled", { server: "fx", name: "nope", enabled: true }, ctx),
    ).toMatchObject({
      ok: false,
      error: { code: "not_found" },
    });

    const logs = value<{ lines: string[] }>(await core.dispatch("mcp.logs", { name: "fx" }, ctx));
    expect(logs.lines).toContain("stderr: mcp fixture ready on stdio");
    expect(value<McpServerStatus[]>(await core.dispatch("mcp.list", {}, ctx)).map((s) => s.name)).toEqual([
      "fx",
    ]);

    const [pid] = fixtureChildren();
    expect(pid).toBeGreaterThan(0);
    await core.close();
    expect(() => process.kill(pid ?? 0, 0)).toThrow(/ESRCH/);
  });

  it("answers bad input with the API's errors and leaves the other servers alone", async () => {
    const { core } = await start();
    value<McpServerStatus>(await core.dispatch("mcp.add", { name: "fx", spec: fixtureSpec() }, ctx));
    expect(await core.dispatch("mcp.import", { json: "{ nope" }, ctx)).toMatchObject({
      ok: false,
      error: {
        code: "invalid_input",
        message: expect.stringMatching(/^The MCP config is not valid JSON at line 1, column 3/) as unknown,
      },
    });
    expect(await core.dispatch("mcp.add", { name: "fx", spec: fixtureSpec() }, ctx)).toMatchObject({
      ok: false,
      error: {
        code: "invalid_input",
        message: 'A server named "fx" exists already (remove it first to replace it).',
      },
    });
    expect(await core.dispatch("mcp.add", { name: "x", spec: { command: "" } }, ctx)).toMatchObject({
      ok: false,
      error: { code: "invalid_input" },
    });
    expect(await core.dispatch("mcp.restart", { name: "ghost" }, ctx)).toMatchObject({
      ok: false,
      error: { code: "not_found", message: 'There is no MCP server named "ghost".' },
    });
    expect(value(await core.dispatch("mcp.remove", { name: "ghost" }, ctx))).toEqual({ removed: false });
    expect(value<McpServerStatus[]>(await core.dispatch("mcp.list", {}, ctx))[0]?.state).toBe("ready");
  });
});

/** Process ids of this process's children that run the fixture server (from ps). */
function fixtureChildren(): number[] {
  const out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes("mcp-fixture-server.ts"))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}
