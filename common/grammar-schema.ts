import type { GbnfJsonObjectSchema, GbnfJsonSchema } from "node-llama-cpp";

/**
 * A tool request the engine cannot serve as asked (a schema the grammar cannot express, a
 * toolChoice naming no given tool, tools together with jsonSchema). The runtime answers it
 * with "invalid_request"; the engine keeps working.
 */
export class ToolRequestError extends Error {
  override name = "ToolRequestError";
}

/**
 * JSON Schema keywords that constrain a value's *shape* in ways node-llama-cpp's JSON grammar
 * cannot express. node-llama-cpp would silently ignore them (a schema it does not understand
 * becomes `null` or "any JSON"), so arguments could parse yet never match: refused up front.
 */
const UNSUPPORTED = [
  "not",
  "if",
  "then",
  "else",
  "patternProperties",
  "dependentSchemas",
  "dependentRequired",
  "dependencies",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "$dynamicRef",
  "$recursiveRef",
];

/**
 * Keywords on values the grammar does not enforce (bounds, patterns, formats other than
 * date/time): they are kept out of the grammar and left to the check of the arguments against
 * the tool's own schema afterwards (electron/core/tools/argument-check.ts) — except integer
 * ranges small enough to list, which become an enum and so are enforced.
 */
const MAX_ENUMERATED_RANGE = 256;

const BASIC_TYPES = new Set(["string", "number", "integer", "boolean", "null", "object", "array"]);
const GRAMMAR_FORMATS = new Set(["date-time", "time", "date"]);

type Schema = Record<string, unknown>;
type Defs = Record<string, GbnfJsonSchema>;

/** Any JSON value, spelled in the grammar's terms ("{}" or `true` in JSON Schema). */
const ANY_JSON: GbnfJsonSchema = {
  oneOf: [
    { type: ["string", "number", "boolean", "null"] },
    { type: "array" },
    { type: "object", additionalProperties: true },
  ],
};

/**
 * Bounds on a tool's (or response format's) schema, checked before anything that costs time in
 * proportion to it (ajv's compile, the grammar, the prompt): ajv's generated validator for a
 * 20,000-property schema took seconds of blocking CPU and a 2,000-level one overflowed the
 * stack. Real tools stay far below: the largest schemas of common MCP servers are a few hundred
 * values and under 10 levels deep.
 */
export const SCHEMA_LIMITS = {
  /** Nesting of JSON objects and arrays (a property of a property is two levels further down). */
  depth: 64,
  /** Values of any kind (objects, arrays, strings, numbers, …), keys not counted. */
  values: 10_000,
  /** Characters of all strings and keys together. */
  chars: 256 * 1024,
} as const;

/**
 * Why `schema` is too large or too deep to be used, or null. Iterative, and it stops at the
 * first limit passed, so the work is bounded by the limits whatever the input's size.
 */
export function schemaSizeProblem(schema: unknown, where = "The schema"): string | null {
  const stack: [value: unknown, depth: number][] = [[schema, 1]];
  let values = 0;
  let chars = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (++values > SCHEMA_LIMITS.values)
      return `${where} is too large: it has more than ${SCHEMA_LIMITS.values} values (the limit).`;
    if (typeof value === "string") chars += value.length;
    else if (typeof value === "object" && value !== null) {
      if (depth > SCHEMA_LIMITS.depth)
        return `${where} is nested too deeply: more than ${SCHEMA_LIMITS.depth} levels (the limit).`;
      if (Array.isArray(value)) {
        if (values + value.length > SCHEMA_LIMITS.values)
          return `${where} is too large: it has more than ${SCHEMA_LIMITS.values} values (the limit).`;
        for (const item of value) stack.push([item, depth + 1]);
      } else {
        const keys = Object.keys(value);
        if (values + keys.length > SCHEMA_LIMITS.values)
          return `${where} is too large: it has more than ${SCHEMA_LIMITS.values} values (the limit).`;
        for (const key of keys) {
          chars += key.length;
          stack.push([(value as Record<string, unknown>)[key], depth + 1]);
        }
      }
    }
    if (chars > SCHEMA_LIMITS.chars)
      return `${where} is too large: its text is longer than ${SCHEMA_LIMITS.chars} characters (the limit).`;
  }
  return null;
}

/**
 * A tool's `parameters` (JSON Schema of an object) as node-llama-cpp's GBNF JSON schema, so
 * that the arguments the model writes are grammar-constrained to it. Throws ToolRequestError
 * naming where a shape cannot be expressed. `$ref`s must point into the root's `$defs` or
 * `definitions`.
 */
export function toGrammarSchema(parameters: Schema, where: string): GbnfJsonObjectSchema {
  const size = schemaSizeProblem(parameters, where);
  if (size) throw new ToolRequestError(size);
  if (parameters.type !== undefined && parameters.type !== "object")
    throw new ToolRequestError(
      `${where} must be an object schema (type "object"), not ${JSON.stringify(parameters.type)}.`,
    );
  const rawDefs = { ...asRecord(parameters.definitions), ...asRecord(parameters.$defs) };
  const converter = new Converter(Object.keys(rawDefs));
  const defs: Defs = {};
  for (const [name, def] of Object.entries(rawDefs))
    defs[name] = converter.convert(def, `${where}.$defs.${name}`);
  const root = converter.convert({ ...parameters, type: "object" }, where) as GbnfJsonObjectSchema;
  return Object.keys(defs).length > 0 ? { ...root, $defs: defs } : root;
}

/**
 * Why the engine would refuse `parameters` as a tool's schema (the grammar cannot express it),
 * or null: for callers that offer many tools (the agent loop) to leave one out instead of
 * having the whole request refused.
 */
export function grammarSchemaProblem(
  parameters: Record<string, unknown>,
  where = "parameters",
): string | null {
  try {
    toGrammarSchema(parameters, where);
    return null;
  } catch (error) {
    if (error instanceof ToolRequestError) return error.message;
    throw error;
  }
}

class Converter {
  constructor(private readonly defNames: readonly string[]) {}

  convert(schema: unknown, where: string): GbnfJsonSchema {
    if (schema === true) return ANY_JSON;
    if (schema === false) throw new ToolRequestError(`${where} is \`false\` (no value allowed).`);
    if (typeof schema !== "object" || schema === null || Array.isArray(schema))
      throw new ToolRequestError(`${where} is not a JSON Schema object.`);
    const s = schema as Schema;
    for (const keyword of UNSUPPORTED)
      if (s[keyword] !== undefined)
        throw new ToolRequestError(
          `${where} uses "${keyword}", which constrained generation cannot express.`,
        );
    const description = typeof s.description === "string" ? { description: s.description } : {};

    if (typeof s.$ref === "string") return { ...this.ref(s.$ref, where), ...description };
    if (Array.isArray(s.allOf)) {
      if (s.allOf.length !== 1)
        throw new ToolRequestError(
          `${where} uses "allOf" with ${s.allOf.length} schemas; only one can be expressed.`,
        );
      const { allOf, ...rest } = s;
      return this.convert({ ...rest, ...(allOf[0] as Schema) }, where);
    }
    const alternatives = Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : null;
    if (alternatives) {
      if (alternatives.length === 0) throw new ToolRequestError(`${where} has an empty "oneOf"/"anyOf".`);
      const { oneOf: _o, anyOf: _a, ...rest } = s;
      const shared = Object.keys(rest).some((k) => k !== "description" && k !== "title" && k !== "default");
      return {
        oneOf: alternatives.map((alt, i) =>
          // Sibling keywords (e.g. `type` beside `anyOf`) apply to every alternative.
          this.convert(
            shared ? { ...rest, ...(alt as Schema) } : alt,
            `${where}.${alternatives === s.oneOf ? "oneOf" : "anyOf"}[${i}]`,
          ),
        ),
        ...description,
      };
    }
    if (s.const !== undefined) return { const: literal(s.const, `${where}.const`), ...description };
    if (s.enum !== undefined) {
      if (!Array.isArray(s.enum) || s.enum.length === 0)
        throw new ToolRequestError(`${where}.enum must be a non-empty array.`);
      return { enum: s.enum.map((v, i) => literal(v, `${where}.enum[${i}]`)), ...description };
    }

    const type = s.type ?? inferType(s);
    if (type === undefined) return { ...ANY_JSON, ...description };
    if (Array.isArray(type)) {
      if (type.length === 0) throw new ToolRequestError(`${where}.type is an empty array.`);
      for (const t of type) checkType(t, where);
      if (type.every((t) => t !== "object" && t !== "array" && t !== "string" && t !== "integer"))
        return { type: type as ("number" | "boolean" | "null")[], ...description };
      return { oneOf: type.map((t: unknown) => this.convert({ ...s, type: t }, where)), ...description };
    }
    checkType(type, where);
    switch (type) {
      case "object":
        return { ...this.object(s, where), ...description };
      case "array":
        return { ...this.array(s, where), ...description };
      case "string":
        return { ...stringSchema(s), ...description };
      case "integer":
        return { ...integerSchema(s), ...description };
      default:
        return { type: type as "number" | "boolean" | "null", ...description };
    }
  }

  private ref(ref: string, where: string): GbnfJsonSchema {
    const match = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref);
    if (!match || !this.defNames.includes(match[1]!))
      throw new ToolRequestError(
        `${where} refers to "${ref}", which is not a definition in the schema's root $defs.`,
      );
    return { $ref: `#/$defs/${match[1]}` } as unknown as GbnfJsonSchema;
  }

  private object(s: Schema, where: string): GbnfJsonSchema {
    const properties: Record<string, GbnfJsonSchema> = {};
    for (const [key, value] of Object.entries(asRecord(s.properties)))
      properties[key] = this.convert(value, `${where}.properties.${key}`);
    const extra = s.additionalProperties;
    // JSON Schema allows extra keys by default; the grammar writes only the declared ones then
    // (still valid), and "any keys" only for a map with no declared properties.
    const additionalProperties =
      extra === undefined || extra === false
        ? undefined
        : extra === true
          ? Object.keys(properties).length === 0
            ? true
            : undefined
          : this.convert(extra, `${where}.additionalProperties`);
    return {
      type: "object",
      properties,
      ...(additionalProperties === undefined ? {} : { additionalProperties }),
      ...(typeof s.minProperties === "number" && additionalProperties !== undefined
        ? { minProperties: s.minProperties }
        : {}),
      ...(typeof s.maxProperties === "number" && additionalProperties !== undefined
        ? { maxProperties: s.maxProperties }
        : {}),
    } as GbnfJsonSchema;
  }

  private array(s: Schema, where: string): GbnfJsonSchema {
    // Draft 2020-12 `prefixItems` + `items`; drafts 4–7 spelled tuples as an `items` array.
    const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : null;
    const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
    return {
      type: "array",
      ...(tuple
        ? { prefixItems: tuple.map((item, i) => this.convert(item, `${where}.prefixItems[${i}]`)) }
        : {}),
      ...(rest === undefined || rest === true || rest === false
        ? {}
        : { items: this.convert(rest, `${where}.items`) }),
      ...(typeof s.minItems === "number" ? { minItems: s.minItems } : {}),
      ...(typeof s.maxItems === "number"
        ? { maxItems: s.maxItems }
        : tuple && rest === false
          ? { maxItems: tuple.length }
          : {}),
    } as GbnfJsonSchema;
  }
}

function checkType(type: unknown, where: string): void {
  if (typeof type !== "string" || !BASIC_TYPES.has(type))
    throw new ToolRequestError(`${where}.type ${JSON.stringify(type)} is not a JSON Schema type.`);
}

/** `type` left out but implied by the keywords present. */
function inferType(s: Schema): string | undefined {
  if (s.properties !== undefined || s.additionalProperties !== undefined) return "object";
  if (s.items !== undefined || s.prefixItems !== undefined) return "array";
  if (s.minLength !== undefined || s.maxLength !== undefined) return "string";
  return undefined;
}

function stringSchema(s: Schema): GbnfJsonSchema {
  if (typeof s.format === "string" && GRAMMAR_FORMATS.has(s.format))
    return { type: "string", format: s.format as "date-time" | "time" | "date" };
  return {
    type: "string",
    ...(typeof s.minLength === "number" ? { minLength: s.minLength } : {}),
    ...(typeof s.maxLength === "number" ? { maxLength: s.maxLength } : {}),
  };
}

/** An integer range small enough to list is enforced as an enum; others are checked afterwards. */
function integerSchema(s: Schema): GbnfJsonSchema {
  const low = bound(s.minimum, s.exclusiveMinimum, 1);
  const high = bound(s.maximum, s.exclusiveMaximum, -1);
  if (low !== null && high !== null && high >= low && high - low < MAX_ENUMERATED_RANGE) {
    const values: number[] = [];
    for (let v = low; v <= high; v++) values.push(v);
    return { enum: values };
  }
  return { type: "integer" };
}

/** The smallest (step 1) or largest (step -1) integer a bound allows, or null. */
function bound(inclusive: unknown, exclusive: unknown, step: 1 | -1): number | null {
  const candidates: number[] = [];
  if (typeof inclusive === "number")
    candidates.push(step === 1 ? Math.ceil(inclusive) : Math.floor(inclusive));
  if (typeof exclusive === "number")
    candidates.push(step === 1 ? Math.floor(exclusive) + 1 : Math.ceil(exclusive) - 1);
  if (candidates.length === 0) return null;
  return step === 1 ? Math.max(...candidates) : Math.min(...candidates);
}

function literal(value: unknown, where: string): string | number | boolean | null {
  if (value === null || ["string", "number", "boolean"].includes(typeof value))
    return value as string | number | boolean | null;
  throw new ToolRequestError(
    `${where} is an object or array; only strings, numbers, booleans and null can be expressed.`,
  );
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
