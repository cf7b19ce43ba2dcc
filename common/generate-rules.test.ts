import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "./engine-protocol";
import {
  grammarConflict,
  grammarConflictMessage,
  grammarProblem,
  optionConflicts,
  toolProblems,
} from "./generate-rules";

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
    expect(optionConflicts({ toolChoice: "required" })[0]!.message).toBe(
      'toolChoice "required" needs at least one tool in tools.',
    );
    expect(optionConflicts({ toolChoice: { name: "search" } })[0]!.message).toBe(
      'toolChoice names "search", which is not among the tools.',
    );
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

  it("words each tool rule once, in the caller's field names, with the choice as its client wrote it", () => {
    const openAi = { tools: "tools", toolChoice: "tool_choice" };
    expect(toolProblems(["a", "b", "a"], undefined, openAi)).toEqual([
      { rule: "duplicateName", index: 2, message: 'two tools are named "a": rename one.' },
    ]);
    expect(toolProblems(["a"], { name: "b" }, openAi)).toEqual([
      { rule: "choiceNotAmongTools", message: 'tool_choice names "b", which is not among the tools.' },
    ]);
    expect(toolProblems([], "required", { ...openAi, choiceWord: "any" })).toEqual([
      { rule: "choiceNeedsTools", message: 'tool_choice "any" needs at least one tool in tools.' },
    ]);
    // The engine's rule and OpenAI's: "auto" without tools is plain text. Anthropic's API refuses
    // any choice but "none" without tools: the same rule in its "any" form.
    expect(toolProblems([], "auto", openAi)).toEqual([]);
    expect(toolProblems([], undefined, openAi, "any")).toEqual([]);
    expect(toolProblems([], "auto", { ...openAi, choiceWord: "auto" }, "any")).toEqual([
      { rule: "choiceNeedsTools", message: 'tool_choice "auto" needs at least one tool in tools.' },
    ]);
    // The engine's wording is the same sentence in its own field names.
    expect(optionConflicts({ tools: [timer], toolChoice: { name: "b" } })[0]!.message).toBe(
      toolProblems(["set_timer"], { name: "b" })[0]!.message,
    );
  });

  it("words an API's 400 in the fields its clients send, the answer format reported", () => {
    expect(grammarConflictMessage({ tools: [timer], jsonSchema: {} }, OPENAI)).toEqual({
      field: "response_format",
      message: "response_format and tools cannot be used together (an answer follows one grammar): send one.",
    });
    expect(grammarConflictMessage({ tools: [timer] }, OPENAI)).toBeNull();
    expect(grammarConflictMessage({ json: true }, OPENAI)).toBeNull();
  });
});
