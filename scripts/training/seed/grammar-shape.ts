/**
 * A UI answer in the exact shape UI mode's grammar makes the model write: node-llama-cpp's JSON
 * grammar (electron/api/genui/json-schema.ts) lists every property of an object, in schema
 * order, and the catalog's optional props become `oneOf [schema, null]`, so an answer writes
 * each one, null when unused. Training the UI specialist on that shape means the grammar never
 * has to force a token the adapter did not expect. `grammarShape` reorders the keys and fills
 * the nulls; it throws when the value does not fit the schema at all.
 */
import { grammarJsonSchema } from "../../../electron/api/genui";

type Json = Record<string, unknown>;

const isJson = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function typeMatches(v: unknown, type: unknown): boolean {
  switch (type) {
    case "null":
      return v === null;
    case "object":
      return isJson(v);
    case "array":
      return Array.isArray(v);
    case "string":
      return typeof v === "string";
    case "boolean":
      return typeof v === "boolean";
    case "integer":
      return Number.isInteger(v);
    case "number":
      return typeof v === "number";
    default:
      return type === undefined;
  }
}

class Shaper {
  constructor(private readonly defs: Json) {}

  private resolve(schema: Json): Json {
    const ref = schema.$ref;
    if (typeof ref !== "string") return schema;
    const name = ref.replace(/^#\/\$defs\//, "");
    const target = this.defs[name];
    if (!isJson(target)) throw new Error(`unknown $ref ${ref}`);
    return target;
  }

  /** Whether `v` could be of `schema` (shallow: types and the constant discriminators). */
  fits(v: unknown, raw: Json): boolean {
    const schema = this.resolve(raw);
    if (Array.isArray(schema.oneOf)) return schema.oneOf.some((b) => isJson(b) && this.fits(v, b));
    if ("const" in schema) return v === schema.const;
    if (!typeMatches(v, schema.type)) return false;
    if (isJson(v) && isJson(schema.properties)) {
      for (const [key, prop] of Object.entries(schema.properties))
        if (isJson(prop) && "const" in prop && v[key] !== prop.const) return false;
      return Object.keys(v).every((k) => k in (schema.properties as Json));
    }
    return true;
  }

  shape(v: unknown, raw: Json, path: string): unknown {
    const schema = this.resolve(raw);
    if (Array.isArray(schema.oneOf)) {
      const branch: unknown = (schema.oneOf as unknown[]).find((b) => isJson(b) && this.fits(v, b));
      if (!isJson(branch)) throw new Error(`${path}: ${JSON.stringify(v)} fits no branch`);
      return this.shape(v, branch, path);
    }
    if ("const" in schema) {
      if (v !== schema.const) throw new Error(`${path}: must be ${JSON.stringify(schema.const)}`);
      return v;
    }
    if (!typeMatches(v, schema.type)) throw new Error(`${path}: not of type ${String(schema.type)}`);
    if (Array.isArray(v) && isJson(schema.items)) {
      const items = schema.items;
      return v.map((item, i) => this.shape(item, items, `${path}[${i}]`));
    }
    if (isJson(v) && isJson(schema.properties)) {
      const props = schema.properties;
      const extra = Object.keys(v).find((k) => !(k in props));
      if (extra !== undefined) throw new Error(`${path}: unexpected property "${extra}"`);
      const out: Json = {};
      for (const [key, prop] of Object.entries(props)) {
        if (!isJson(prop)) continue;
        if (v[key] === undefined) {
          if (!this.fits(null, prop)) throw new Error(`${path}: missing property "${key}"`);
          out[key] = null;
        } else out[key] = this.shape(v[key], prop, `${path}.${key}`);
      }
      return out;
    }
    return v;
  }
}

let cached: { schema: Json; shaper: Shaper } | null = null;

/** `doc` (a UI document) with keys in grammar order and every unused optional prop null. */
export function grammarShape(doc: unknown): unknown {
  if (!cached) {
    const schema = grammarJsonSchema();
    cached = { schema, shaper: new Shaper(isJson(schema.$defs) ? schema.$defs : {}) };
  }
  return cached.shaper.shape(doc, cached.schema, "$");
}
