/**
 * What GenerateOptions' fields mean together. Each field alone is checked where it enters (the
 * engine's request schema, the API routes' body schemas); the rules on combinations live here
 * only, each with one wording, and the engine's request schema, ModelSession (for callers inside
 * the engine process), the tool functions and every API route (in their own field names, their
 * own error shapes around the message) read them: one grammar per answer; tool names unique; a
 * tool choice the tools can meet.
 */

/** The options that each put a grammar on the answer. A generation has one grammar. */
export type GrammarOption = "tools" | "json" | "jsonSchema";

/**
 * What the rules read of GenerateOptions, by shape: the request schema that defines those
 * options (common/engine-request-schema.ts) applies these rules, so this module imports nothing
 * of it (no import cycle), and the schema checks at compile time that its options and tool
 * choice are what these types say.
 */
export interface RuleOptions {
  tools?: readonly { name: string }[];
  /** "auto", "required" or one tool by name (GenerateOptions' ToolChoice). */
  toolChoice?: "auto" | "required" | { name: string };
  json?: boolean;
  jsonSchema?: unknown;
}

/** One broken rule: the field it is reported at and a sentence saying what to do. */
export interface OptionConflict {
  field: keyof RuleOptions;
  message: string;
}

/** The grammar options `options` sets, in GrammarOption's order. */
function grammarOptions(options: RuleOptions): GrammarOption[] {
  const set: GrammarOption[] = [];
  if (options.tools && options.tools.length > 0) set.push("tools");
  if (options.json === true) set.push("json");
  if (options.jsonSchema !== undefined && options.jsonSchema !== null) set.push("jsonSchema");
  return set;
}

/** The first two grammar options `options` sets together, or null when it sets at most one. */
export function grammarConflict(options: RuleOptions): [GrammarOption, GrammarOption] | null {
  const [first, second] = grammarOptions(options);
  return first !== undefined && second !== undefined ? [first, second] : null;
}

/** The grammar rule's one wording, in the caller's names for the two fields. */
function grammarMessage(first: string, second: string): string {
  return `${first} and ${second} cannot be used together (an answer follows one grammar): send one.`;
}

/** The grammar rule alone (see optionConflicts): two of tools, json and jsonSchema. */
export function grammarProblem(options: RuleOptions): OptionConflict | null {
  const grammar = grammarConflict(options);
  if (!grammar) return null;
  return { field: grammar[0], message: grammarMessage(grammar[0], grammar[1]) };
}

/** The tool rules, each with one wording (toolProblems). */
export type ToolRule = "duplicateName" | "choiceNotAmongTools" | "choiceNeedsTools";

/** One broken tool rule, in the caller's terms (ToolTerms); `index`: the tool it is about. */
export interface ToolProblem {
  rule: ToolRule;
  message: string;
  index?: number;
}

/**
 * How a caller names the tool fields, so that the one wording of each rule reads in the names its
 * clients send: the engine's `toolChoice`, an API's `tool_choice`. `choiceWord` is the choice as
 * the client wrote it ("required", Anthropic's "any"); absent: the engine's word.
 */
export interface ToolTerms {
  tools: string;
  toolChoice: string;
  choiceWord?: string;
}

const ENGINE_TERMS: ToolTerms = { tools: "tools", toolChoice: "toolChoice" };

/**
 * Which choices need at least one tool: "calling" (the engine, OpenAI: "required" and a named
 * choice; "auto" with no tools is plain text) or "any" (Anthropic's API, which refuses any
 * `tool_choice` but "none" without tools).
 */
export type ChoiceWithoutTools = "calling" | "any";

/**
 * The tool rules `names` (the tools' names, in order) and `choice` (absent = "auto") break, in a
 * fixed order (the first is the one to report): a name used twice (reported at the second); a
 * named choice that is not among the tools; a choice that needs tools with none given.
 */
export function toolProblems(
  names: readonly string[],
  choice: RuleOptions["toolChoice"],
  terms: ToolTerms = ENGINE_TERMS,
  withoutTools: ChoiceWithoutTools = "calling",
): ToolProblem[] {
  const problems: ToolProblem[] = [];
  const index = names.findIndex((name, i) => names.indexOf(name) !== i);
  if (index >= 0)
    problems.push({
      rule: "duplicateName",
      index,
      message: `two tools are named "${names[index]}": rename one.`,
    });
  if (typeof choice === "object" && !names.includes(choice.name))
    problems.push({
      rule: "choiceNotAmongTools",
      message: `${terms.toolChoice} names "${choice.name}", which is not among the tools.`,
    });
  else if (choice !== undefined && names.length === 0 && (choice !== "auto" || withoutTools === "any")) {
    const word = terms.choiceWord ?? (typeof choice === "object" ? choice.name : choice);
    problems.push({
      rule: "choiceNeedsTools",
      message: `${terms.toolChoice} "${word}" needs at least one tool in ${terms.tools}.`,
    });
  }
  return problems;
}

/** Every rule `options` breaks, in a fixed order (the first is the one to report). */
export function optionConflicts(options: RuleOptions): OptionConflict[] {
  const problems = toolProblems(
    (options.tools ?? []).map((t) => t.name),
    options.toolChoice,
  );
  const conflict = (problem: ToolProblem): OptionConflict => ({
    field: problem.rule === "duplicateName" ? "tools" : "toolChoice",
    message: problem.message,
  });
  const grammar = grammarProblem(options);
  return [
    ...problems.filter((p) => p.rule === "duplicateName").map(conflict),
    ...(grammar ? [grammar] : []),
    ...problems.filter((p) => p.rule !== "duplicateName").map(conflict),
  ];
}

/**
 * An API route's 400 for two grammar options, in the names its clients send (`fields` maps each
 * engine option to the request field that sets it), or null when there is no conflict. The
 * answer's format is the field reported, tools the one it clashes with.
 */
export function grammarConflictMessage(
  options: RuleOptions,
  fields: Record<GrammarOption, string>,
): { field: string; message: string } | null {
  const conflict = grammarConflict(options);
  if (!conflict) return null;
  const [b, a] = conflict.map((option) => fields[option]);
  return { field: a!, message: grammarMessage(a!, b!) };
}
