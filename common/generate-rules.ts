/**
 * What GenerateOptions' fields mean together. Each field alone is checked where it enters (the
 * engine's request schema, the API routes' body schemas); the rules on combinations live here
 * only, and the engine's request schema, ModelSession (for callers inside the engine process),
 * the tool functions and every API route (in their own field names) read them.
 */
import type { GenerateOptions } from "./engine-protocol";

/** The options that each put a grammar on the answer. A generation has one grammar. */
export type GrammarOption = "tools" | "json" | "jsonSchema";

/** One broken rule: the field it is reported at and a sentence saying what to do. */
export interface OptionConflict {
  field: keyof GenerateOptions;
  message: string;
}

type Combined = Pick<GenerateOptions, "tools" | "toolChoice" | "json" | "jsonSchema">;

/** The grammar options `options` sets, in GrammarOption's order. */
function grammarOptions(options: Combined): GrammarOption[] {
  const set: GrammarOption[] = [];
  if (options.tools && options.tools.length > 0) set.push("tools");
  if (options.json === true) set.push("json");
  if (options.jsonSchema !== undefined && options.jsonSchema !== null) set.push("jsonSchema");
  return set;
}

/** The first two grammar options `options` sets together, or null when it sets at most one. */
export function grammarConflict(options: Combined): [GrammarOption, GrammarOption] | null {
  const [first, second] = grammarOptions(options);
  return first !== undefined && second !== undefined ? [first, second] : null;
}

/** The grammar rule alone (see optionConflicts): two of tools, json and jsonSchema. */
export function grammarProblem(options: Combined): OptionConflict | null {
  const grammar = grammarConflict(options);
  if (!grammar) return null;
  return {
    field: grammar[0],
    message: `${grammar[0]} and ${grammar[1]} cannot be used together (an answer follows one grammar): pass one.`,
  };
}

/** Every rule `options` breaks, in a fixed order (the first is the one to report). */
export function optionConflicts(options: Combined): OptionConflict[] {
  const conflicts: OptionConflict[] = [];
  const tools = options.tools ?? [];
  const names = tools.map((t) => t.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined)
    conflicts.push({ field: "tools", message: `two tools are named "${duplicate}": rename one.` });
  const grammar = grammarProblem(options);
  if (grammar) conflicts.push(grammar);
  const choice = options.toolChoice;
  if (choice !== undefined && choice !== "auto" && tools.length === 0)
    conflicts.push({ field: "toolChoice", message: "a required or named tool choice needs tools." });
  if (typeof choice === "object" && tools.length > 0 && !names.includes(choice.name))
    conflicts.push({
      field: "toolChoice",
      message: `toolChoice names "${choice.name}", which is not among the tools.`,
    });
  return conflicts;
}

/**
 * An API route's 400 for two grammar options, in the names its clients send (`fields` maps each
 * engine option to the request field that sets it), or null when there is no conflict. The
 * answer's format is the field reported, tools the one it clashes with.
 */
export function grammarConflictMessage(
  options: Combined,
  fields: Record<GrammarOption, string>,
): { field: string; message: string } | null {
  const conflict = grammarConflict(options);
  if (!conflict) return null;
  const [b, a] = conflict.map((option) => fields[option]);
  return {
    field: a!,
    message: `'${a}' cannot be used together with '${b}' on a local model: send one or the other.`,
  };
}
