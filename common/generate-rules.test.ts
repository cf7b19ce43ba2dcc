import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "./engine-protocol";
import { grammarConflict, grammarConflictMessage, grammarProblem, optionConflicts } from "./generate-rules";

const timer: ToolDefinition = { name: "set_timer", parameters: { type: "object" } };
const search: ToolDefinition = { name: "search" };
const OPENAI = { tools: "tools", json: "response_format", jsonSchema: "response_format" };

describe("generate rules", () => {
  it("allows each grammar option alone, and none", () => {
    for (const options of [{}, { tools: [timer] }, { json: true }, { jsonSchema: { type: "object" } }]) {
      expect(optionConflicts(options)).toEqual([]);
      expect(grammarConflict(options)).toBeNull();
    }
    // Set to nothing is not set: an empty tool list or json false puts no grammar on the answer.
    expect(optionConflicts({ tools: [], json: false, jsonSchema: { type: "object" } })).toEqual([]);
  });

  it("refuses any two grammars, naming both, at the first in tools, json, jsonSchema order", () => {
    const cases: [object, string, RegExp][] = [
      [{ tools: [timer], json: true }, "tools", /^tools and json cannot be used together/],
      [{ tools: [timer], jsonSchema: {} }, "tools", /^tools and jsonSchema cannot be used together/],
      [{ json: true, jsonSchema: {} }, "json", /^json and jsonSchema cannot be used together/],
      [{ tools: [timer], json: true, jsonSchema: {} }, "tools", /^tools and json /],
    ];
    for (const [options, field, message] of cases) {
      const conflicts = optionConflicts(options);
      expect(conflicts).toHaveLength(1);
      expect(conflicts[0]!.field).toBe(field);
      expect(conflicts[0]!.message).toMatch(message);
      expect(grammarProblem(options)).toEqual(conflicts[0]);
    }
  });

  it("refuses duplicate tool names and tool choices the tools cannot meet", () => {
    expect(optionConflicts({ tools: [timer, search, timer] })[0]!.message).toMatch(
      /two tools are named "set_timer"/,
    );
    expect(optionConflicts({ toolChoice: "required" })[0]).toMatchObject({ field: "toolChoice" });
    expect(optionConflicts({ toolChoice: { name: "search" } })[0]!.message).toMatch(/needs tools/);
    expect(optionConflicts({ tools: [timer], toolChoice: { name: "search" } })[0]!.message).toMatch(
      /toolChoice names "search", which is not among the tools/,
    );
    expect(optionConflicts({ tools: [timer, search], toolChoice: { name: "search" } })).toEqual([]);
    expect(optionConflicts({ toolChoice: "auto" })).toEqual([]);
    // Every broken rule is listed, duplicates first.
    expect(optionConflicts({ tools: [timer, timer], json: true }).map((c) => c.field)).toEqual([
      "tools",
      "tools",
    ]);
  });

  it("words an API's 400 in the fields its clients send, the answer format reported", () => {
    expect(grammarConflictMessage({ tools: [timer], jsonSchema: {} }, OPENAI)).toEqual({
      field: "response_format",
      message:
        "'response_format' cannot be used together with 'tools' on a local model: send one or the other.",
    });
    expect(grammarConflictMessage({ tools: [timer] }, OPENAI)).toBeNull();
    expect(grammarConflictMessage({ json: true }, OPENAI)).toBeNull();
  });
});
