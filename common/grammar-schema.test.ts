import { describe, expect, it } from "vitest";
import { finiteNumbers, toFunctions, toolChatWrapper, isForced } from "../native/engine/tool-calls";
import { grammarSchemaProblem, toGrammarSchema, ToolRequestError } from "./grammar-schema";
import { ChatMLChatWrapper, LlamaText } from "node-llama-cpp";

const refused = (schema: Record<string, unknown>): string => {
  try {
    toGrammarSchema(schema, "p");
  } catch (error) {
    expect(error).toBeInstanceOf(ToolRequestError);
    return (error as Error).message;
  }
  throw new Error("expected a refusal");
};

describe("toGrammarSchema", () => {
  it("keeps the shapes the grammar expresses: objects, arrays, tuples, strings, enums, unions, refs", () => {
    expect(
      toGrammarSchema(
        {
          type: "object",
          title: "ignored",
          properties: {
            name: { type: "string", maxLength: 5, description: "who" },
            when: { type: "string", format: "date" },
            tags: { type: "array", items: { type: "string" }, maxItems: 2 },
            pair: { type: "array", items: [{ type: "number" }, { type: "boolean" }], additionalItems: false },
            unit: { enum: ["c", "f"] },
            maybe: { type: ["number", "null"] },
            either: { anyOf: [{ type: "string" }, { type: "integer" }] },
            at: { $ref: "#/definitions/point" },
          },
          definitions: { point: { type: "object", properties: { x: { type: "number" } } } },
        },
        "p",
      ),
    ).toEqual({
      type: "object",
      properties: {
        name: { type: "string", maxLength: 5, description: "who" },
        when: { type: "string", format: "date" },
        tags: { type: "array", items: { type: "string" }, maxItems: 2 },
        pair: { type: "array", prefixItems: [{ type: "number" }, { type: "boolean" }], maxItems: 2 },
        unit: { enum: ["c", "f"] },
        maybe: { type: ["number", "null"] },
        either: { oneOf: [{ type: "string" }, { type: "integer" }] },
        at: { $ref: "#/$defs/point" },
      },
      $defs: { point: { type: "object", properties: { x: { type: "number" } } } },
    });
  });

  it("lists a small integer range as an enum (so it is enforced) and leaves a wide one to validation", () => {
    const props = (schema: Record<string, unknown>) =>
      (
        toGrammarSchema({ type: "object", properties: { n: schema } }, "p") as {
          properties: Record<string, unknown>;
        }
      ).properties.n;
    expect(props({ type: "integer", minimum: 1, exclusiveMaximum: 4 })).toEqual({ enum: [1, 2, 3] });
    expect(props({ type: "integer", minimum: 0 })).toEqual({ type: "integer" });
    expect(props({ type: "integer", minimum: 0, maximum: 100_000 })).toEqual({ type: "integer" });
  });

  it("gives a free map for an object of any keys, and any JSON for an empty schema", () => {
    const out = toGrammarSchema(
      {
        type: "object",
        properties: { meta: { type: "object", additionalProperties: { type: "string" } }, any: {} },
      },
      "p",
    ) as { properties: Record<string, { oneOf?: unknown[]; additionalProperties?: unknown }> };
    expect(out.properties.meta).toEqual({
      type: "object",
      properties: {},
      additionalProperties: { type: "string" },
    });
    expect(out.properties.any?.oneOf).toHaveLength(3);
  });

  it("refuses what the grammar cannot express, saying where", () => {
    expect(refused({ type: "array" })).toMatch(/p must be an object schema/);
    expect(refused({ type: "object", properties: { a: { not: {} } } })).toMatch(
      /p\.properties\.a uses "not"/,
    );
    expect(refused({ type: "object", patternProperties: { "^x": {} } })).toMatch(/"patternProperties"/);
    expect(refused({ type: "object", properties: { a: { $ref: "#/$defs/missing" } } })).toMatch(
      /p\.properties\.a refers to "#\/\$defs\/missing"/,
    );
    expect(refused({ type: "object", properties: { a: { $ref: "https://example.com/s.json" } } })).toMatch(
      /refers to/,
    );
    expect(refused({ type: "object", properties: { a: { allOf: [{}, {}] } } })).toMatch(/allOf/);
    expect(refused({ type: "object", properties: { a: { type: "date" } } })).toMatch(
      /not a JSON Schema type/,
    );
    expect(refused({ type: "object", properties: { a: { enum: [{ x: 1 }] } } })).toMatch(
      /p\.properties\.a\.enum\[0\]/,
    );
    expect(refused({ type: "object", properties: { a: false } })).toMatch(/no value allowed/);
  });
});

describe("toFunctions", () => {
  const tools = [
    {
      name: "a",
      description: "first",
      parameters: { type: "object", properties: { x: { type: "string" } } },
    },
    { name: "b" },
  ];

  it("offers every tool for auto/required and only the named one for a named choice", () => {
    expect(Object.keys(toFunctions(tools, "auto"))).toEqual(["a", "b"]);
    expect(Object.keys(toFunctions(tools, "required"))).toEqual(["a", "b"]);
    expect(toFunctions(tools, { name: "b" })).toEqual({ b: {} });
    expect(toFunctions(tools).a).toEqual({
      description: "first",
      params: { type: "object", properties: { x: { type: "string" } } },
    });
  });

  it("refuses duplicate names and a choice naming no tool", () => {
    expect(() => toFunctions([...tools, { name: "a" }])).toThrow(/two tools are named "a"/);
    expect(() => toFunctions(tools, { name: "c" })).toThrow(/"c", which is not among the tools/);
  });
});

describe("toolChatWrapper", () => {
  const base = new ChatMLChatWrapper();
  const format = {
    callPrefix: '{"tool":"',
    paramsPrefix: '","arguments":',
    callSuffix: "}",
    resultPrefix: "\n",
    resultSuffix: "\n",
    documented: false,
  };
  const history = [
    { type: "user" as const, text: "hi" },
    {
      type: "model" as const,
      response: [{ type: "functionCall" as const, name: "t", params: { m: 1 }, result: "ok" }],
    },
  ];
  const functions = { t: { description: "a tool" } };

  it("is the base itself when nothing changes", () => {
    expect(toolChatWrapper(base, { forced: false })).toBe(base);
    expect(isForced("auto")).toBe(false);
    expect(isForced("required") && isForced({ name: "t" })).toBe(true);
  });

  it("lays calls out in the adapter's format, without documentation when it is undocumented", () => {
    const wrapper = toolChatWrapper(base, { format, forced: false });
    const text = wrapper
      .generateContextState({ chatHistory: history, availableFunctions: functions })
      .contextText.toString();
    // node-llama-cpp writes the arguments of past calls with a space after each colon.
    expect(text).toContain('{"tool":"t","arguments":{"m": 1}}\n"ok"\n');
    expect(text).not.toContain("a tool");
    expect(wrapper.wrapperName).toBe(base.wrapperName);
    // The base keeps its own syntax and documents the functions.
    const own = base.generateContextState({
      chatHistory: history,
      availableFunctions: functions,
    }).contextText;
    expect(own.toString()).toContain("||call: t");
    expect(own.toString()).toContain("a tool");
    expect(LlamaText.isLlamaText(own)).toBe(true);
  });

  it("engages function calling from the first token when forced, over the same prompt", () => {
    const forced = toolChatWrapper(base, { forced: true });
    const state = forced.generateContextState({ chatHistory: history, availableFunctions: functions });
    expect(state.functionCall).toEqual({ initiallyEngaged: true, disengageInitiallyEngaged: [] });
    expect(state.contextText.toString()).toBe(
      base
        .generateContextState({ chatHistory: history, availableFunctions: functions })
        .contextText.toString(),
    );
  });

  it("documents every tool for a named choice while offering one, so the prompt matches auto's", () => {
    const all = { t: { description: "a tool" }, u: { description: "another tool" } };
    const named = toolChatWrapper(base, { forced: true, documentedFunctions: all });
    const prompt = named
      .generateContextState({ chatHistory: history, availableFunctions: { t: all.t } })
      .contextText.toString();
    expect(prompt).toBe(
      base.generateContextState({ chatHistory: history, availableFunctions: all }).contextText.toString(),
    );
    expect(prompt).toContain("another tool");
  });
});

describe("finiteNumbers", () => {
  it("turns Infinity and NaN into text, deep, and leaves everything else", () => {
    expect(finiteNumbers({ a: Infinity, b: [1, -Infinity, { c: NaN }], d: "x", e: null, f: 2.5 })).toEqual({
      a: "Infinity",
      b: [1, "-Infinity", { c: "NaN" }],
      d: "x",
      e: null,
      f: 2.5,
    });
  });
});

describe("grammarSchemaProblem", () => {
  it("says why a schema would be refused, or null", () => {
    expect(grammarSchemaProblem({ type: "object", properties: { a: { type: "string" } } })).toBeNull();
    expect(grammarSchemaProblem({ type: "object", properties: { a: { not: {} } } }, "tools.x")).toBe(
      'tools.x.properties.a uses "not", which constrained generation cannot express.',
    );
  });
});
