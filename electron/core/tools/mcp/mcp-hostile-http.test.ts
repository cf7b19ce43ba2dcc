/**
 * McpHub against hostile servers over Streamable HTTP (testing/mcp/hostile-mcp-http-server.mjs,
 * plain JSON-RPC over node:http on loopback), the bounds of http-transport.ts: a 30 MB result is
 * cut to TOOL_RESULT_MAX_CHARS without being parsed on this thread, a notification flood (on a
 * request's stream or an endless standalone stream) is dropped past the rate with the
 * once-a-second report, and an answer over MAX_MESSAGE_BYTES fails its call with a sentence
 * while the server stays usable. The stdio side: mcp-hostile.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TOOL_RESULT_MAX_CHARS } from "../../../api/tools";
import { testDir } from "../../../../testing/core/temp-dir";
import { type HttpServerProcess, startHostileHttp } from "../../../../testing/mcp/mcp-test-servers";
import { ToolSwitches } from "../tool-switches";
import type { CallableTool, ToolOutcome } from "../tool-types";
import { MAX_MESSAGE_BYTES, oversizeNotice } from "./message-bounds";
import { OFF_THREAD_BYTES } from "./message-worker";
import { McpHub } from "./mcp-hub";

let dir: string;
let hubs: McpHub[] = [];
let servers: HttpServerProcess[] = [];

beforeEach(() => {
  dir = testDir("macaron-mcp-hostile-http-");
});

afterEach(async () => {
  await Promise.all(hubs.map((hub) => hub.close()));
  await Promise.all(servers.map((server) => server.stop()));
  hubs = [];
  servers = [];
});

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

/** The hostile server in `mode`, added to a new hub as "h" (ready). */
async function hostile(mode: string, options: { size?: number; sse?: boolean } = {}) {
  const server = await startHostileHttp(mode, options);
  servers.push(server);
  const hub = makeHub();
  const status = await hub.add("h", { url: server.url, headers: {} });
  expect(status.state, status.error ?? "").toBe("ready");
  return hub;
}

const never = new AbortController().signal;
const tool = (name: string): CallableTool => ({
  server: "h",
  name,
  description: "",
  inputSchema: { type: "object" },
});

function text(outcome: ToolOutcome): string {
  if (!outcome.ok) throw new Error(`the call failed: ${outcome.error}`);
  return outcome.text;
}

/** `run`, and the length of the longest text JSON.parse'd on this thread meanwhile. */
async function watchingParse<T>(run: () => Promise<T>): Promise<{ value: T; longest: number }> {
  const parse = JSON.parse;
  let longest = 0;
  JSON.parse = function (text: unknown, reviver?: (this: unknown, key: string, value: unknown) => unknown) {
    if (typeof text === "string") longest = Math.max(longest, text.length);
    const value: unknown = parse(text as string, reviver);
    return value;
  } as typeof JSON.parse;
  try {
    return { value: await run(), longest };
  } finally {
    JSON.parse = parse;
  }
}

const dropReport = /^dropped \d+ notifications \(more than 100 a second\)/;

describe("hostile MCP servers over Streamable HTTP", () => {
  for (const sse of [false, true])
    it(`cuts a 30 MB result (${sse ? "an event stream" : "a JSON body"}) to TOOL_RESULT_MAX_CHARS, not parsed on this thread; the server stays usable`, async () => {
      const hub = await hostile("big-result", { size: 30_000_000, sse });
      const { value: outcome, longest } = await watchingParse(() => hub.call(tool("big"), {}, never));
      expect(outcome.ok, outcome.ok ? "" : outcome.error).toBe(true);
      if (!outcome.ok) return;
      expect(outcome.truncated).toBe(true);
      expect(outcome.text.length).toBeLessThanOrEqual(TOOL_RESULT_MAX_CHARS);
      expect(outcome.text).toMatch(/^y{1000}/);
      expect(outcome.text).toContain(
        "[truncated: the result has 30000000 characters; only its start is shown]",
      );
      // The 30 MB went to the worker; the SDK parsed only the cut message.
      expect(longest).toBeLessThan(OFF_THREAD_BYTES);
      expect(hub.status("h").state).toBe("ready");
      expect(text(await hub.call(tool("echo"), { text: "next" }, never))).toBe("next");
    });

  it("drops a notification flood on a request's stream past the rate: a bounded number of tools/list, the server still answers", async () => {
    const notes = 100_000;
    const hub = await hostile("flood", { size: notes });
    // `stats` answers after every notification on its stream.
    const { toolsList } = JSON.parse(text(await hub.call(tool("stats"), {}, never))) as { toolsList: number };
    // 50,000 list_changed: without a bound, one tools/list each.
    expect(toolsList).toBeLessThan(notes / 2 / 50);
    await expect
      .poll(() => hub.logs("h").some((line) => dropReport.test(line)), { timeout: 30_000 })
      .toBe(true);
    expect(text(await hub.call(tool("echo"), { text: "after" }, never))).toBe("after");
    expect(hub.status("h").state).toBe("ready");
  });

  it("drops an endless standalone stream's notifications past the rate, stays usable, and ends the stream on close", async () => {
    const hub = await hostile("endless");
    await expect
      .poll(() => hub.logs("h").some((line) => dropReport.test(line)), { timeout: 30_000 })
      .toBe(true);
    expect(text(await hub.call(tool("echo"), { text: "still here" }, never))).toBe("still here");
    expect(hub.status("h").state).toBe("ready");
    // afterEach closes the hub: the endless stream must not hold it up.
    await hub.remove("h");
  });

  for (const sse of [false, true])
    it(`refuses an answer over MAX_MESSAGE_BYTES (${sse ? "one event" : "a JSON body"}) as it streams, with a sentence; the server stays usable`, async () => {
      const hub = await hostile("huge-body", { size: MAX_MESSAGE_BYTES + 16 * 1024 * 1024, sse });
      const outcome = await hub.call(tool("huge"), {}, never);
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return;
      expect(outcome.error).toContain(oversizeNotice());
      expect(outcome.error).toMatch(/more than the 64 MB allowed; it was dropped/);
      expect(hub.logs("h")).toContain(oversizeNotice());
      expect(hub.status("h").state).toBe("ready");
      expect(text(await hub.call(tool("echo"), { text: "next" }, never))).toBe("next");
    });
});
