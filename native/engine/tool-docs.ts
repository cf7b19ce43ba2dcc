/**
 * The compact documentation of the offered tools that a tool-call format with
 * `documented: "compact"` puts in the system prompt (the demo Agent's): one line per tool,
 * `name(arg: type, …) description`, under a "Tools:" line. Short on purpose: the demo model reads
 * bytes, so every character is a token of its small context and of its prompt time
 * (node-llama-cpp's own documentation of the same tools is several times longer).
 *
 * One module for both sides: the engine's tool wrapper (tool-calls.ts) renders it at inference
 * and the trainer lays its examples out through that same wrapper (cloud/training/format-examples.ts),
 * so an adapter is trained on exactly the text the app shows it.
 */
/** What a line needs of a function (node-llama-cpp's ChatModelFunctions entries are these). */
export interface DocumentedFunction {
  description?: string;
  params?: unknown;
}

/** A description is cut at its first sentence and at this many characters. */
export const MAX_DESCRIPTION_CHARS = 80;

export const TOOL_DOCS_HEADER = "Tools:";

type Schema = Record<string, unknown>;

const isRecord = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** The type of one parameter in a few characters: string, number, boolean, "a"|"b", list, … */
export function paramType(schema: unknown): string {
  if (!isRecord(schema)) return "any";
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    // Integer ranges become enums in the grammar schema (common/grammar-schema.ts): still a number.
    if (schema.enum.every((v) => typeof v === "number")) return "number";
    return schema.enum.map((v) => JSON.stringify(v)).join("|");
  }
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== "null");
  switch (type) {
    case "string":
    case "boolean":
      return type;
    case "number":
    case "integer":
      return "number";
    case "array":
      return "list";
    case "object":
      return "object";
  }
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives)) {
    const types = [...new Set(alternatives.map(paramType))].filter((t) => t !== "null");
    return types.length > 0 ? types.join("|") : "any";
  }
  return "any";
}

/** A description's first sentence, at most MAX_DESCRIPTION_CHARS characters, on one line. */
export function shortDescription(description: string | undefined): string {
  const flat = (description ?? "").replace(/\s+/g, " ").trim();
  const sentence = /^(.+?[.!?])(?:\s|$)/.exec(flat)?.[1] ?? flat;
  if (sentence.length <= MAX_DESCRIPTION_CHARS) return sentence;
  const cut = sentence.slice(0, MAX_DESCRIPTION_CHARS);
  const space = cut.lastIndexOf(" ");
  return `${(space > MAX_DESCRIPTION_CHARS / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, "")}…`;
}

/** One tool's line: `name(a: string, b: number) Description.` */
export function toolLine(name: string, fn: DocumentedFunction): string {
  const params = isRecord(fn.params) && isRecord(fn.params.properties) ? fn.params.properties : {};
  const args = Object.entries(params)
    .map(([key, schema]) => `${key}: ${paramType(schema)}`)
    .join(", ");
  const description = shortDescription(fn.description);
  return `${name}(${args})${description ? ` ${description}` : ""}`;
}

/** The documentation of `functions` (empty text for none), in their order. */
export function renderToolDocs(functions: Readonly<Record<string, DocumentedFunction>> | undefined): string {
  const entries = Object.entries(functions ?? {});
  if (entries.length === 0) return "";
  return [TOOL_DOCS_HEADER, ...entries.map(([name, fn]) => toolLine(name, fn))].join("\n");
}
