/**
 * The reference MCP server from npm (`@modelcontextprotocol/server-everything`), unmodified,
 * over stdio and over Streamable HTTP: what other apps' users add is what this talks to.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testDir } from "../../../../testing/core/temp-dir";
import { ToolCatalog } from "../tool-catalog";
import { ToolSwitches } from "../tool-switches";
import type { ToolOutcome } from "../tool-types";
import { McpHub } from "./mcp-hub";
import {
  everythingSpec,
  startEverythingHttp,
  type HttpServerProcess,
} from "../../../../testing/mcp/mcp-test-servers";

let dir: string;
let hub: McpHub;
let catalog: ToolCatalog;
let server: HttpServerProcess | null = null;
const never = new AbortController().signal;

beforeEach(() => {
  dir = testDir("macaron-mcp-everything-");
  const switches = new ToolSwitches(dir);
  hub = new McpHub({ dataDir: dir, switches, emit: () => undefined, log: () => undefined });
  hub.start();
  catalog = new ToolCatalog(switches, [hub]);
});

afterEach(async () => {
  await hub.close();
  await server?.stop();
  server = null;
});

function text(outcome: ToolOutcome): string {
  if (!outcome.ok) throw new Error(`the call failed: ${outcome.error}`);
  return outcome.text;
}

function call(server: string, name: string, args: unknown): Promise<ToolOutcome> {
  const tool = catalog.find(server, name);
  if (!tool) throw new Error(`no tool ${server}/${name}`);
  return catalog.call(tool, args, never);
}

describe("server-everything from npm", () => {
  it("over stdio: lists its tools with usable schemas, calls echo, and sees only the config's env", async () => {
    const status = await hub.add("everything", everythingSpec({ GIVEN: "yes" }));
    expect(status.state).toBe("ready");
    const names = status.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "get-env", "get-sum", "get-tiny-image"]));
    // Every tool of the reference server has a schema the argument check compiles.
    expect(status.tools.filter((t) => !t.enabled)).toEqual([]);
    expect(text(await call("everything", "echo", { message: "hi from macaron" }))).toBe(
      "Echo: hi from macaron",
    );
    expect(text(await call("everything", "get-sum", { a: 2, b: 40 }))).toMatch(/42/);
    const env = JSON.parse(text(await call("everything", "get-env", {}))) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual(["GIVEN", "PATH"]);
    // Arguments that do not match the schema never reach the server.
    const bad = await call("everything", "get-sum", { a: "two", b: 40 });
    expect(bad).toEqual({
      ok: false,
      error: "The arguments do not match the tool's schema: arguments.a must be number.",
    });
  });

  it("over Streamable HTTP: lists, calls, and summarizes images and structured content", async () => {
    server = await startEverythingHttp();
    const status = await hub.add("web", { url: server.url, headers: {} });
    expect(status.state).toBe("ready");
    expect(status.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-tiny-image"]));
    expect(text(await call("web", "echo", { message: "over http" }))).toBe("Echo: over http");
    const image = text(await call("web", "get-tiny-image", {}));
    expect(image).toMatch(/\[image: image\/png, \d+ bytes, not shown\]/);
    expect(image).not.toMatch(/[A-Za-z0-9+/]{200}/);
    const weather = text(await call("web", "get-structured-content", { location: "Chicago" }));
    expect(JSON.parse(weather.split("\n")[0] ?? "")).toMatchObject({
      temperature: expect.any(Number) as unknown,
    });
  });
});
