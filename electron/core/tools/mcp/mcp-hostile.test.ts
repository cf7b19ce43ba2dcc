/**
 * McpHub against hostile servers (testing/mcp/hostile-mcp-server.mjs, plain JSON-RPC over stdio):
 * huge and deep schemas are refused per tool with a sentence while the server's other tools
 * work, a notification flood is dropped past a rate and costs a bounded number of tools/list, a
 * 30 MB result is cut to TOOL_RESULT_MAX_CHARS instead of ending the connection, and a removed
 * server's schemas are not kept. Timings under these servers: bench/mcp-hostile.ts.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TOOL_RESULT_MAX_CHARS, type McpServerSpec } from "../../../api/tools";
import { testDir } from "../../../../testing/core/temp-dir";
import { REPO_ROOT } from "../../../../testing/mcp/mcp-test-servers";
import { ToolSwitches } from "../tool-switches";
import type { CallableTool, ToolOutcome } from "../tool-types";
import { McpHub } from "./mcp-hub";

const HOSTILE = join(REPO_ROOT, "testing/mcp/hostile-mcp-server.mjs");

function hostile(mode: string, size?: number): McpServerSpec {
  return {
    command: process.execPath,
    args: [HOSTILE, "--mode", mode, ...(size === undefined ? [] : ["--size", String(size)])],
    env: {},
    cwd: REPO_ROOT,
  };
}

let dir: string;
let hubs: McpHub[] = [];

beforeEach(() => {
  dir = testDir("macaron-mcp-hostile-");
});

afterEach(async () => {
  await Promise.all(hubs.map((hub) => hub.close()));
  hubs = [];
});

/** A hub whose events are not kept (a test of memory must not hold the statuses). */
function makeHub() {
  const hub = new McpHub({
    dataDir: dir,
    switches: new ToolSwitches(dir),
    emit: () => undefined,
    log: () => undefined,
  });
  hub.start();
  hubs.push(hub);
  return hub;
}

const never = new AbortController().signal;
const tool = (server: string, name: string): CallableTool => ({
  server,
  name,
  description: "",
  inputSchema: { type: "object" },
});

function text(outcome: ToolOutcome): string {
  if (!outcome.ok) throw new Error(`the call failed: ${outcome.error}`);
  return outcome.text;
}

describe("hostile MCP servers", () => {
  it("refuses a 30,000-property schema for that tool only, with the limit in words", async () => {
    const hub = makeHub();
    const status = await hub.add("h", hostile("huge-schema"));
    expect(status.state).toBe("ready");
    const huge = hub.listTools().find((t) => t.name === "huge")!;
    expect(huge.enabled).toBe(false);
    expect(huge.problem).toMatch(/too large: it has more than 10000 values/);
    // Not kept: the status (sent with every change) stays small.
    expect(huge.inputSchema).toEqual({});
    expect(JSON.stringify(status).length).toBeLessThan(10_000);
    expect(text(await hub.call(tool("h", "echo"), { text: "still here" }, never))).toBe("still here");
    expect((await hub.call(tool("h", "huge"), {}, never)).ok).toBe(false);
  });

  it("refuses a 2,000-level schema for that tool only", async () => {
    const hub = makeHub();
    await hub.add("h", hostile("deep-schema"));
    const deep = hub.listTools().find((t) => t.name === "deep")!;
    expect(deep.problem).toMatch(/nested too deeply: more than 64 levels/);
    expect(deep.inputSchema).toEqual({});
    expect(text(await hub.call(tool("h", "echo"), { text: "ok" }, never))).toBe("ok");
  });

  it("cuts a 1 MB description and keeps the tool usable", async () => {
    const hub = makeHub();
    await hub.add("h", hostile("huge-description"));
    const wordy = hub.listTools().find((t) => t.name === "wordy")!;
    expect(wordy.problem).toBeNull();
    expect(wordy.description.length).toBeLessThanOrEqual(4000);
    expect(text(await hub.call(tool("h", "echo"), { text: "ok" }, never))).toBe("ok");
  });

  it("drops a notification flood past the rate: a bounded number of tools/list, the server still answers", async () => {
    const hub = makeHub();
    const notes = 100_000;
    await hub.add("h", hostile("flood", notes));
    // `stats` answers after the server has written every notification.
    const { toolsList } = JSON.parse(text(await hub.call(tool("h", "stats"), {}, never))) as {
      toolsList: number;
    };
    // 50,000 list_changed: without a bound, one tools/list each.
    expect(toolsList).toBeLessThan(notes / 2 / 50);
    // The count is reported once a second (one log line per burst, not one per drop): on a fast
    // machine `stats` answers before the first report is due.
    await expect
      .poll(
        () =>
          hub.logs("h").some((line) => /^dropped \d+ notifications \(more than 100 a second\)/.test(line)),
        { timeout: 30_000 },
      )
      .toBe(true);
    expect(text(await hub.call(tool("h", "echo"), { text: "after" }, never))).toBe("after");
    expect(hub.status("h").state).toBe("ready");
  });

  it("cuts a 30 MB result to TOOL_RESULT_MAX_CHARS instead of losing the server", async () => {
    const hub = makeHub();
    await hub.add("h", hostile("big-result", 30_000_000));
    const outcome = await hub.call(tool("h", "big"), {}, never);
    expect(outcome.ok, outcome.ok ? "" : outcome.error).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.truncated).toBe(true);
    expect(outcome.text.length).toBeLessThanOrEqual(TOOL_RESULT_MAX_CHARS);
    expect(outcome.text).toMatch(/^y{1000}/);
    expect(outcome.text).toContain(
      "[truncated: the result has 30000000 characters; only its start is shown]",
    );
    expect(hub.status("h").state).toBe("ready");
    expect(text(await hub.call(tool("h", "echo"), { text: "next" }, never))).toBe("next");
  });

  it("adds a server again after removing it: a schema with an $id compiles a second time", async () => {
    const hub = makeHub();
    const spec: McpServerSpec = hostile("normal");
    for (let cycle = 0; cycle < 3; cycle++) {
      await hub.add("h", spec);
      expect(hub.listTools().map((t) => [t.name, t.problem])).toEqual([
        ["echo", null],
        ["stats", null],
      ]);
      await hub.remove("h");
    }
  });
});

describe("memory of a removed server", () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;

  it("keeps none of its tool schemas once it is removed", async () => {
    const hub = makeHub();
    await hub.add("h", hostile("huge-schema", 2000));
    const schemas = hub.listTools().map((t) => new WeakRef(t.inputSchema));
    expect(hub.listTools().find((t) => t.name === "huge")?.problem).toBeNull();
    await hub.remove("h");
    for (let i = 0; i < 5 && schemas.some((s) => s.deref() !== undefined); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(schemas.filter((s) => s.deref() !== undefined).length).toBe(0);
  });
});
