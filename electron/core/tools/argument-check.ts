/**
 * Tool arguments against the tool's JSON Schema (ajv), before any call: grammar-constrained
 * generation makes them parse, but a model, an API client or a server's odd schema can still
 * produce arguments the tool must not see.
 */
import Ajv, { type ValidateFunction } from "ajv";
import Ajv2019 from "ajv/dist/2019.js";
import Ajv2020 from "ajv/dist/2020.js";
import { grammarSchemaProblem, schemaSizeProblem } from "../../../common/grammar-schema";

const options = { allErrors: false, strict: false, validateFormats: false } as const;
const ajv = new Ajv(options);
/**
 * Schemas declare their draft in `$schema`; zod 4's toJSONSchema (the Vercel AI SDK, MCP servers
 * written in TypeScript) writes 2020-12, Claude Code and most Python tools draft-07. Each draft
 * compiles with the ajv instance that knows its meta-schema.
 */
const ajv2019 = new Ajv2019(options);
const ajv2020 = new Ajv2020(options);

function draftOf(schema: object): "07" | "2019" | "2020" {
  const declared = (schema as { $schema?: unknown }).$schema;
  if (typeof declared !== "string") return "07";
  if (declared.includes("2020-12")) return "2020";
  if (declared.includes("2019-09")) return "2019";
  return "07";
}

function ajvFor(schema: object): Ajv {
  return { "07": ajv, "2019": ajv2019, "2020": ajv2020 }[draftOf(schema)];
}

/**
 * A fresh instance for each compile. An Ajv instance keeps every schema it compiled, and the
 * generated code's values, in its own scope for its whole life (a removed MCP server's schemas
 * stayed in memory for good, and a schema with an $id could not be compiled twice); a fresh one
 * goes with its validator. Without meta-schema validation (done once by the shared instances
 * above) it costs about what a compile on a shared instance does (~2 ms, bench measured).
 */
function freshAjvFor(schema: object): Ajv {
  // allErrors: with it off, ajv nests the check of each property inside the previous one's
  // `if`, and rendering that code recurses once per property: a 2,000-property schema (under
  // the size limit) overflowed the stack. With it on the generated code is flat; the message
  // still names the first error.
  const fresh = { ...options, allErrors: true, validateSchema: false, addUsedSchema: false } as const;
  const draft = draftOf(schema);
  return draft === "2020" ? new Ajv2020(fresh) : draft === "2019" ? new Ajv2019(fresh) : new Ajv(fresh);
}
const compiled = new WeakMap<object, ValidateFunction | Error>();

export type ArgumentCheck = { ok: true } | { ok: false; message: string };

/**
 * Whether `schema` is a usable JSON Schema for arguments: an object schema that ajv compiles
 * and that constrained generation can express (common/grammar-schema.ts), so that one odd
 * tool is left out with its reason instead of failing every turn that offers it.
 */
export function schemaProblem(schema: unknown, where = "The tool's input schema"): string | null {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    return "The tool's input schema is not a JSON object.";
  const type = (schema as { type?: unknown }).type;
  if (type !== undefined && type !== "object")
    return `The tool's input schema has type ${JSON.stringify(type)}, not "object".`;
  // Before ajv: its compile time grows with the schema (seconds at 20,000 properties).
  const size = schemaSizeProblem(schema, where);
  if (size) return size;
  const validator = compile(schema);
  if (validator instanceof Error) return `The tool's input schema is invalid: ${validator.message}`;
  const grammar = grammarSchemaProblem(schema as Record<string, unknown>, where);
  return grammar;
}

/** Check `args` against `schema`; the message names the first problem and where it is. */
export function checkArguments(schema: Record<string, unknown>, args: unknown): ArgumentCheck {
  const validator = compile(schema);
  if (validator instanceof Error)
    return { ok: false, message: `The tool's input schema is invalid: ${validator.message}` };
  if (validator(args)) return { ok: true };
  const error = validator.errors?.[0];
  const where = error?.instancePath ? `arguments${error.instancePath.replaceAll("/", ".")}` : "arguments";
  return { ok: false, message: `${where} ${error?.message ?? "do not match the tool's schema"}` };
}

function compile(schema: object): ValidateFunction | Error {
  let entry = compiled.get(schema);
  if (!entry) {
    const size = schemaSizeProblem(schema);
    if (size) entry = new Error(size);
    else {
      try {
        // Throws "schema is invalid: …" as compile would; the meta-schema's validator is compiled once.
        void ajvFor(schema).validateSchema(schema, true);
        entry = freshAjvFor(schema).compile(schema);
      } catch (error) {
        entry = error instanceof Error ? error : new Error(String(error));
      }
    }
    compiled.set(schema, entry);
  }
  return entry;
}
