import { describe, expect, it } from "vitest";
import { checkArguments, schemaProblem } from "./argument-check";

const timer = {
  type: "object",
  properties: { minutes: { type: "integer", minimum: 1 } },
  required: ["minutes"],
  additionalProperties: false,
};

describe("tool arguments", () => {
  it("accepts arguments that match and names the first problem of those that do not", () => {
    expect(checkArguments(timer, { minutes: 15 })).toEqual({ ok: true });
    expect(checkArguments(timer, { minutes: "15" })).toEqual({
      ok: false,
      message: "arguments.minutes must be integer",
    });
    expect(checkArguments(timer, {})).toEqual({
      ok: false,
      message: "arguments must have required property 'minutes'",
    });
    expect(checkArguments(timer, { minutes: 1, extra: true })).toMatchObject({ ok: false });
    expect(checkArguments(timer, "minutes=15")).toMatchObject({
      ok: false,
      message: "arguments must be object",
    });
  });

  it("refuses schemas that are not object schemas or do not compile", () => {
    expect(schemaProblem(timer)).toBeNull();
    expect(schemaProblem("yes")).toMatch(/not a JSON object/);
    expect(schemaProblem({ type: "string" })).toMatch(/not "object"/);
    expect(schemaProblem({ type: "object", properties: { a: { type: "no-such-type" } } })).toMatch(/invalid/);
    // Valid JSON Schema, but constrained generation cannot express it: left out, with the reason.
    expect(schemaProblem({ type: "object", properties: { a: { not: { type: "string" } } } })).toMatch(
      /uses "not"/,
    );
    expect(checkArguments({ type: "object", properties: { a: { type: 12 } } }, {})).toMatchObject({
      ok: false,
    });
  });

  it("compiles schemas of every draft they declare (zod 4 writes 2020-12, Claude Code draft-07)", () => {
    const body = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    for (const $schema of [
      "https://json-schema.org/draft/2020-12/schema",
      "https://json-schema.org/draft/2019-09/schema",
      "http://json-schema.org/draft-07/schema#",
    ]) {
      const schema = { $schema, ...body };
      expect(schemaProblem(schema)).toBeNull();
      expect(checkArguments(schema, { a: "x" })).toEqual({ ok: true });
      expect(checkArguments(schema, {})).toMatchObject({ ok: false });
    }
  });

  it("compiles the widest schema the size limit lets through (ajv once recursed per property)", () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 3000; i++) properties[`p${i}`] = { type: "string" };
    const wide = { type: "object", properties };
    expect(schemaProblem(wide)).toBeNull();
    expect(checkArguments(wide, { p0: "a", p2999: "z" })).toEqual({ ok: true });
    expect(checkArguments(wide, { p0: "a", p2999: 3 })).toEqual({
      ok: false,
      message: "arguments.p2999 must be string",
    });
  });
});
