/**
 * JSON Schema for the contract's `jsonSchemaValid` assertion, validated by ajv (as tool
 * arguments are, electron/core/tools/argument-check.ts). Draft-07 by default; a schema that
 * declares 2019-09 or 2020-12 in `$schema` gets that draft. ajv's errors are said the contract's
 * way, each with its JSON path (`$.rows[2]: below 0`), in the order of the value's fields. A
 * keyword ajv does not know, a format it cannot check or a `$ref` that resolves to nothing is
 * reported as unsupported, never silently ignored.
 */
import Ajv, { type ErrorObject, type Options, type ValidateFunction } from "ajv";
import Ajv2019 from "ajv/dist/2019.js";
import Ajv2020 from "ajv/dist/2020.js";

type Schema = Record<string, unknown>;

export interface SchemaCheck {
  valid: boolean;
  /** The first problems found, with their JSON path (`$.rows[2].label`). */
  errors: string[];
  /** Keywords the validator does not implement (the result is then not trustworthy). */
  unsupported: string[];
}

// strictSchema: an unknown keyword is a compile error (reported as unsupported), not ignored.
const options: Options = {
  allErrors: true,
  strictSchema: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
};
const draft07 = new Ajv(options);
const byDraft: [string, Ajv][] = [
  ["2020-12", new Ajv2020(options)],
  ["2019-09", new Ajv2019(options)],
];
const compiled = new WeakMap<object, ValidateFunction | { unsupported: string[]; error: string | null }>();

function compile(schema: Schema): ValidateFunction | { unsupported: string[]; error: string | null } {
  let entry = compiled.get(schema);
  if (entry) return entry;
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  const ajv = byDraft.find(([draft]) => declared.includes(draft))?.[1] ?? draft07;
  try {
    entry = ajv.compile(schema);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const keyword = /unknown keyword: "([^"]+)"/.exec(message)?.[1];
    if (keyword) entry = { unsupported: [keyword], error: null };
    else if (/unknown format/.test(message)) entry = { unsupported: ["format"], error: null };
    else if (err instanceof Error && "missingRef" in err) entry = { unsupported: ["$ref"], error: null };
    else entry = { unsupported: [], error: `the schema is invalid: ${message}` };
  }
  compiled.set(schema, entry);
  return entry;
}

/** Validate `value` against `schema`. */
export function validateJsonSchema(value: unknown, schema: Schema): SchemaCheck {
  const validator = compile(schema);
  if (typeof validator !== "function") {
    const errors = validator.error ? [validator.error] : [];
    return { valid: false, errors, unsupported: validator.unsupported };
  }
  if (validator(value)) return { valid: true, errors: [], unsupported: [] };
  const order = documentOrder(value);
  const errors = (validator.errors ?? [])
    // A failing branch of anyOf/oneOf is said once, by the anyOf/oneOf itself.
    .filter((e) => !/\/(anyOf|oneOf)\/\d+\//.test(e.schemaPath))
    .map((e) => ({
      at: order.get(sortPath(e)) ?? order.size,
      text: `${jsonPath(e.instancePath)}: ${said(e, value)}`,
    }))
    .sort((a, b) => a.at - b.at)
    .map((e) => e.text);
  return { valid: false, errors: errors.slice(0, 10), unsupported: [] };
}

/** Each JSON pointer of `value`, numbered in document order (a node before its children). */
function documentOrder(value: unknown): Map<string, number> {
  const order = new Map<string, number>();
  const visit = (v: unknown, pointer: string): void => {
    order.set(pointer, order.size);
    if (typeof v !== "object" || v === null) return;
    for (const [key, child] of Object.entries(v)) visit(child, `${pointer}/${escapePointer(key)}`);
  };
  visit(value, "");
  return order;
}

function escapePointer(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** Where an error sorts: an unexpected property at that property, the rest where ajv says. */
function sortPath(e: ErrorObject): string {
  if (e.keyword === "additionalProperties") {
    const name = (e.params as { additionalProperty: string }).additionalProperty;
    return `${e.instancePath}/${escapePointer(name)}`;
  }
  return e.instancePath;
}

/** `/props/rows/1` → `$.props.rows[1]`. */
function jsonPath(pointer: string): string {
  if (pointer === "") return "$";
  return `$${pointer
    .slice(1)
    .split("/")
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join("")}`;
}

function at(value: unknown, pointer: string): unknown {
  if (pointer === "") return value;
  let v = value;
  for (const part of pointer.slice(1).split("/")) {
    const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
    v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined;
  }
  return v;
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** ajv's error in the contract's words. */
function said(e: ErrorObject, value: unknown): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "type": {
      const types = Array.isArray(p.type) ? (p.type as string[]) : String(p.type).split(",");
      return `expected ${types.join(" or ")}, got ${typeOf(at(value, e.instancePath))}`;
    }
    case "enum":
      return `must be one of ${JSON.stringify(p.allowedValues)}`;
    case "const":
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case "minLength":
      return `shorter than ${String(p.limit)}`;
    case "maxLength":
      return `longer than ${String(p.limit)}`;
    case "pattern":
      return `does not match ${String(p.pattern)}`;
    case "minimum":
      return `below ${String(p.limit)}`;
    case "maximum":
      return `above ${String(p.limit)}`;
    case "minItems":
      return `fewer than ${String(p.limit)} items`;
    case "maxItems":
      return `more than ${String(p.limit)} items`;
    case "required":
      return `missing required property "${String(p.missingProperty)}"`;
    case "additionalProperties":
      return `unexpected property "${String(p.additionalProperty)}"`;
    case "anyOf":
      return "matches none of anyOf";
    case "oneOf": {
      const passing = Array.isArray(p.passingSchemas) ? p.passingSchemas.length : 0;
      return `matches ${passing} of oneOf (exactly 1 required)`;
    }
    default:
      return e.message ?? `fails ${e.keyword}`;
  }
}
