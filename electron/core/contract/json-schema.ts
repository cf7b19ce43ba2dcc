/**
 * A small JSON Schema validator for the contract's `jsonSchemaValid` assertion. No JSON Schema
 * package is installed (zod does not read JSON Schema), so this covers the subset GenUI
 * component schemas need: type, enum, const, properties, required, additionalProperties,
 * items, min/maxItems, min/maxLength, pattern, minimum/maximum, anyOf/oneOf/allOf.
 * A keyword outside the subset (e.g. $ref) is reported as unsupported, never silently ignored.
 */

type Schema = Record<string, unknown>;

const SUPPORTED = new Set([
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "anyOf",
  "oneOf",
  "allOf",
  "$schema",
  "$id",
  "title",
  "description",
  "default",
  "examples",
]);

export interface SchemaCheck {
  valid: boolean;
  /** The first problems found, with their JSON path (`$.rows[2].label`). */
  errors: string[];
  /** Keywords the validator does not implement (the result is then not trustworthy). */
  unsupported: string[];
}

/** Validate `value` against `schema`. */
export function validateJsonSchema(value: unknown, schema: Schema): SchemaCheck {
  const errors: string[] = [];
  const unsupported = new Set<string>();
  check(value, schema, "$", errors, unsupported);
  return {
    valid: errors.length === 0 && unsupported.size === 0,
    errors: errors.slice(0, 10),
    unsupported: [...unsupported],
  };
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function matchesType(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  return actual === t || (t === "number" && actual === "integer");
}

function isSchema(v: unknown): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function check(v: unknown, s: Schema, path: string, errors: string[], unsupported: Set<string>): void {
  for (const key of Object.keys(s)) if (!SUPPORTED.has(key)) unsupported.add(key);
  const fail = (message: string): void => void errors.push(`${path}: ${message}`);

  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => matchesType(v, t)))
      return fail(`expected ${types.join(" or ")}, got ${typeOf(v)}`);
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    fail(`must be one of ${JSON.stringify(s.enum)}`);
  if ("const" in s && JSON.stringify(s.const) !== JSON.stringify(v))
    fail(`must be ${JSON.stringify(s.const)}`);

  if (typeof v === "string") {
    if (typeof s.minLength === "number" && [...v].length < s.minLength) fail(`shorter than ${s.minLength}`);
    if (typeof s.maxLength === "number" && [...v].length > s.maxLength) fail(`longer than ${s.maxLength}`);
    if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(v))
      fail(`does not match ${s.pattern}`);
  }
  if (typeof v === "number") {
    if (typeof s.minimum === "number" && v < s.minimum) fail(`below ${s.minimum}`);
    if (typeof s.maximum === "number" && v > s.maximum) fail(`above ${s.maximum}`);
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === "number" && v.length < s.minItems) fail(`fewer than ${s.minItems} items`);
    if (typeof s.maxItems === "number" && v.length > s.maxItems) fail(`more than ${s.maxItems} items`);
    if (isSchema(s.items))
      v.forEach((item, i) => check(item, s.items as Schema, `${path}[${i}]`, errors, unsupported));
  }
  if (isSchema(v) && typeOf(v) === "object") {
    const props = isSchema(s.properties) ? s.properties : {};
    for (const name of Array.isArray(s.required) ? (s.required as string[]) : [])
      if (!(name in v)) fail(`missing required property "${name}"`);
    for (const [name, child] of Object.entries(v)) {
      const sub = props[name];
      if (isSchema(sub)) check(child, sub, `${path}.${name}`, errors, unsupported);
      else if (s.additionalProperties === false) fail(`unexpected property "${name}"`);
      else if (isSchema(s.additionalProperties))
        check(child, s.additionalProperties, `${path}.${name}`, errors, unsupported);
    }
  }
  const branches = (key: "anyOf" | "oneOf" | "allOf"): number | null => {
    const list = s[key];
    if (!Array.isArray(list)) return null;
    return list.filter((b) => {
      const sub: string[] = [];
      if (isSchema(b)) check(v, b, path, sub, unsupported);
      return isSchema(b) && sub.length === 0;
    }).length;
  };
  const any = branches("anyOf");
  if (any !== null && any === 0) fail("matches none of anyOf");
  const one = branches("oneOf");
  if (one !== null && one !== 1) fail(`matches ${one} of oneOf (exactly 1 required)`);
  const all = branches("allOf");
  if (all !== null && Array.isArray(s.allOf) && all !== s.allOf.length) fail("does not match allOf");
}
