/**
 * The catalog as JSON Schema: the full schema (z.toJSONSchema, for documentation and other
 * tools), and the subset node-llama-cpp's JSON-schema grammar understands, for generation.
 *
 * node-llama-cpp 3.21.1's grammar (GbnfJsonSchema) takes const/enum/oneOf/object/array/$defs/
 * $ref, including the recursive $ref of UiNode, but no anyOf, pattern, minimum/maximum, and it
 * makes every listed property required. So the grammar schema differs on purpose:
 * - anyOf becomes oneOf;
 * - an optional property becomes `oneOf [its schema, null]` (validate.ts reads null as absent);
 * - numeric bounds, patterns and long length/item caps are dropped (validation checks them;
 *   caps in the grammar expand into very large rules), except the YYYY-MM-DD pattern, which
 *   becomes the grammar's `format: "date"`.
 * The grammar guarantees syntax only; every answer is validated afterwards (validate.ts).
 */
import { z } from "zod";
import { CatalogDocument } from "./catalog";

type Json = Record<string, unknown>;

/** The catalog document as draft 2020-12 JSON Schema (UiNode under $defs). */
export function catalogJsonSchema(): Json {
  return z.toJSONSchema(CatalogDocument);
}

/** Length/item caps at or under this stay in the grammar; larger ones are checked afterwards. */
const GRAMMAR_CAP = 64;
const DROP = new Set([
  "$schema",
  "$id",
  "id",
  "description",
  "default",
  "title",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "propertyNames",
  "required",
]);
const DATE_PATTERN = "^\\d{4}-\\d{2}-\\d{2}$";

function isJson(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function convert(schema: unknown): unknown {
  // The catalog schema is ours and a few levels deep: recursion is fine here.
  if (Array.isArray(schema)) return schema.map(convert);
  if (!isJson(schema)) return schema;
  const out: Json = {};
  if ("const" in schema) return { const: schema.const };
  for (const [key, value] of Object.entries(schema)) {
    if (key === "anyOf") out.oneOf = convert(value);
    else if (key === "pattern" && value === DATE_PATTERN) out.format = "date";
    else if ((key === "maxLength" || key === "maxItems") && typeof value === "number" && value > GRAMMAR_CAP)
      continue;
    else if (key === "properties" && isJson(value)) {
      const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
      const props: Json = {};
      for (const [name, prop] of Object.entries(value)) {
        const converted = convert(prop);
        props[name] = required.has(name) ? converted : { oneOf: [converted, { type: "null" }] };
      }
      out.properties = props;
    } else if (key === "$defs" && isJson(value)) {
      out.$defs = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convert(v)]));
    } else if (!DROP.has(key)) out[key] = convert(value);
  }
  if (out.format === "date") {
    delete out.minLength;
    delete out.maxLength;
  }
  return out;
}

/** The catalog document schema in the form node-llama-cpp's createGrammarForJsonSchema takes. */
export function grammarJsonSchema(): Json {
  return convert(catalogJsonSchema()) as Json;
}
