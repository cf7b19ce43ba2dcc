import { describe, expect, it } from "vitest";
import { AgentToolset } from "./agent-toolset";
import type { CallableTool } from "./tool-types";

const tool = (
  server: string,
  name: string,
  inputSchema: Record<string, unknown> = { type: "object" },
): CallableTool => ({
  server,
  name,
  description: `${server} ${name}`,
  inputSchema,
});

describe("AgentToolset", () => {
  it("keeps unique names, prefixes shared ones with their server, and cleans names the engine refuses", () => {
    const echoA = tool("files", "echo");
    const echoB = tool("web.search", "echo");
    const timer = tool("fx", "set_timer");
    const dotted = tool("fx", "notes.read/all");
    const set = new AgentToolset([echoA, echoB, timer, dotted]);
    expect(set.definitions.map((d) => d.name)).toEqual([
      "files_echo",
      "web_search_echo",
      "set_timer",
      "notes_read_all",
    ]);
    expect(set.resolve("files_echo")).toBe(echoA);
    expect(set.resolve("web_search_echo")).toBe(echoB);
    expect(set.resolve("set_timer")).toBe(timer);
    expect(set.resolve("notes_read_all")).toBe(dotted);
    expect(set.resolve("echo")).toBeUndefined();
    for (const d of set.definitions) expect(d.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(set.definitions[2]).toEqual({
      name: "set_timer",
      description: "fx set_timer",
      parameters: { type: "object" },
    });
  });

  it("numbers names that still collide after cleaning, and leaves out tools whose schema is unusable", () => {
    const log: string[] = [];
    const set = new AgentToolset(
      [
        tool("a", "x.y"),
        tool("a", "x_y"),
        tool("b", "bad", { type: "string" }),
        tool("b", "worse", { type: "object", properties: { n: { type: "number", minimum: "five" } } }),
        tool("c", "z".repeat(80)),
      ],
      (m) => log.push(m),
    );
    expect(set.definitions.map((d) => d.name)).toEqual(["a_x_y", "a_x_y_2", "z".repeat(64)]);
    expect(set.size).toBe(3);
    expect(log).toHaveLength(2);
    expect(log[0]).toMatch(/b\/bad left out/);
  });
});
