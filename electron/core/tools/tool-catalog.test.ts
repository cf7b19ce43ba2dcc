import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { testDir } from "../../../testing/core/temp-dir";
import { ToolCatalog } from "./tool-catalog";
import { TOOL_SWITCHES_FILE, ToolSwitches } from "./tool-switches";
import { BUILTIN_SERVER, type CallableTool, type ToolSource } from "./tool-types";

/** A source of two tools that records what it ran (the shape of the built-in tools). */
class RecordingSource implements ToolSource {
  readonly ran: { name: string; args: unknown }[] = [];
  tools(): CallableTool[] {
    return [
      {
        server: BUILTIN_SERVER,
        name: "remember",
        description: "Remember a fact.",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      },
      {
        server: BUILTIN_SERVER,
        name: "broken",
        description: "Schema is not an object.",
        inputSchema: { type: "string" },
      },
    ];
  }
  call(tool: CallableTool, args: unknown): Promise<{ ok: true; text: string; truncated: boolean }> {
    this.ran.push({ name: tool.name, args });
    if (tool.name === "remember" && (args as { text: string }).text === "throw") throw new Error("boom");
    return Promise.resolve({ ok: true, text: `ran ${tool.name}`, truncated: false });
  }
}

describe("ToolCatalog", () => {
  let dir: string;
  beforeEach(() => {
    dir = testDir("macaron-tools-");
  });

  it("lists built-in tools on by default, refuses unusable ones, and remembers switches across restarts", async () => {
    const switches = new ToolSwitches(dir);
    const source = new RecordingSource();
    const catalog = new ToolCatalog(switches, [source]);
    expect(catalog.list().map((t) => [t.server, t.name, t.enabled])).toEqual([
      ["builtin", "remember", true],
      ["builtin", "broken", false],
    ]);
    expect(catalog.tools().map((t) => t.name)).toEqual(["remember"]);
    expect(() => catalog.setEnabled("builtin", "broken", true)).toThrow(
      /cannot be turned on: .*not "object"/,
    );
    expect(() => catalog.setEnabled("builtin", "nope", false)).toThrow(/There is no tool "nope"/);

    expect(catalog.setEnabled("builtin", "remember", false)).toMatchObject({
      name: "remember",
      enabled: false,
    });
    expect(catalog.tools()).toEqual([]);
    const off = await catalog.call(
      source.tools()[0] as CallableTool,
      { text: "x" },
      new AbortController().signal,
    );
    expect(off).toEqual({ ok: false, error: 'The tool "remember" cannot be called: it is turned off.' });
    expect(source.ran).toEqual([]);
    await switches.saved();
    expect(JSON.parse(readFileSync(join(dir, TOOL_SWITCHES_FILE), "utf8"))).toEqual({
      disabled: { builtin: ["remember"] },
    });
    const reopened = new ToolSwitches(dir);
    const again = new ToolCatalog(reopened, [source]);
    expect(again.list()[0]?.enabled).toBe(false);
    expect(again.setEnabled("builtin", "remember", true).enabled).toBe(true);
    await reopened.saved();
    expect(JSON.parse(readFileSync(join(dir, TOOL_SWITCHES_FILE), "utf8"))).toEqual({ disabled: {} });
  });

  it("checks arguments before the source sees them, and turns a throwing source into an error", async () => {
    const source = new RecordingSource();
    const catalog = new ToolCatalog(new ToolSwitches(dir), [source]);
    const remember = catalog.find("builtin", "remember");
    if (!remember) throw new Error("remember is missing");
    const signal = new AbortController().signal;
    expect(await catalog.call(remember, { text: 5 }, signal)).toEqual({
      ok: false,
      error: "The arguments do not match the tool's schema: arguments.text must be string.",
    });
    expect(await catalog.call(remember, "not an object", signal)).toMatchObject({ ok: false });
    expect(source.ran).toEqual([]);
    expect(await catalog.call(remember, { text: "milk" }, signal)).toEqual({
      ok: true,
      text: "ran remember",
      truncated: false,
    });
    expect(await catalog.call(remember, { text: "throw" }, signal)).toEqual({
      ok: false,
      error: "The tool failed: boom",
    });
    const unknown = await catalog.call({ ...remember, server: "gone" }, {}, signal);
    expect(unknown).toEqual({
      ok: false,
      error:
        'The tool "remember" cannot be called: it is not available (its server is not ready, or it does not exist).',
    });
  });
});
