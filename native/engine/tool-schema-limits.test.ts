/**
 * SCHEMA_LIMITS: a schema over them is refused with a sentence before anything costly runs
 * (ajv's compile, the grammar), in work bounded by the limits whatever the input's size.
 */
import { describe, expect, it } from "vitest";
import {
  grammarSchemaProblem,
  SCHEMA_LIMITS,
  schemaSizeProblem,
  toGrammarSchema,
  ToolRequestError,
} from "../../common/grammar-schema";
import { checkArguments, schemaProblem } from "../../electron/core/tools/argument-check";

function wide(count: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) properties[`p${i}`] = { type: "string" };
  return { type: "object", properties };
}

function deep(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: "object", properties: { a: schema } };
  return schema;
}

describe("schema size limits", () => {
  it("takes ordinary schemas", () => {
    expect(schemaSizeProblem(wide(300), "parameters")).toBeNull();
    expect(schemaSizeProblem(deep(20), "parameters")).toBeNull();
  });

  it("refuses too many values, too deep a nesting and too much text, naming where", () => {
    expect(schemaSizeProblem(wide(20_000), "tools[0].function.parameters")).toBe(
      `tools[0].function.parameters is too large: it has more than ${SCHEMA_LIMITS.values} values (the limit).`,
    );
    expect(schemaSizeProblem(deep(2_000), "parameters")).toBe(
      `parameters is nested too deeply: more than ${SCHEMA_LIMITS.depth} levels (the limit).`,
    );
    expect(schemaSizeProblem({ type: "object", description: "x".repeat(300_000) }, "parameters")).toMatch(
      /its text is longer than 262144 characters/,
    );
    // One flat array of a million values is refused before it is walked.
    expect(schemaSizeProblem({ enum: new Array(1_000_000).fill(1) }, "parameters")).toMatch(/too large/);
  });

  it("ends on a cyclic object (not JSON, but a caller may pass one)", () => {
    const cyclic: Record<string, unknown> = { type: "object" };
    cyclic.properties = { self: cyclic };
    expect(schemaSizeProblem(cyclic, "parameters")).toMatch(/too large|nested too deeply/);
  });

  it("is checked first by the grammar, the tool check and the argument check", () => {
    expect(() => toGrammarSchema(deep(2_000), "parameters")).toThrow(ToolRequestError);
    expect(grammarSchemaProblem(wide(20_000), "parameters")).toMatch(/too large/);
    expect(schemaProblem(wide(20_000))).toMatch(/^The tool's input schema is too large/);
    expect(schemaProblem(deep(2_000))).toMatch(/nested too deeply/);
    const check = checkArguments(wide(20_000), {});
    expect(check.ok).toBe(false);
  });

  it("compiles a schema with an $id again after its first copy is gone", () => {
    const schema = () => ({ $id: "urn:test:same", type: "object", properties: { a: { type: "string" } } });
    expect(schemaProblem(schema())).toBeNull();
    expect(schemaProblem(schema())).toBeNull();
    expect(checkArguments(schema(), { a: 1 }).ok).toBe(false);
  });
});
