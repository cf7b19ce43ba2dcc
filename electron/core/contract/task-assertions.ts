/**
 * The task checks of a contract: did a specialist answer in its format? Each takes the answer
 * text (and, for stopsOnItsOwn, how the generation ended) and returns pass/fail with a detail a
 * person can act on. The formats are the ones the seed datasets teach (resources/training/).
 */
import { parseDocument, walkNodes } from "../../api/genui";
import type { GenerateResult } from "../engine/types";

export interface TaskCheck {
  passed: boolean;
  detail: string;
}

const MAX_SHOWN = 80;

/** The first characters of `text` as a JSON string, for details. */
export function shown(text: string): string {
  const t = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
  return JSON.stringify(t);
}

const ok = (detail: string): TaskCheck => ({ passed: true, detail });
const fail = (detail: string): TaskCheck => ({ passed: false, detail });

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `max` characters at most (code points, so an emoji counts once). */
export function checkMaxChars(output: string, max: number): TaskCheck {
  const n = [...output].length;
  return n <= max ? ok(`${n} characters (at most ${max})`) : fail(`${n} characters, more than ${max}`);
}

/** The answer ended at the end of its turn: a specialist that rambles to maxTokens fails. */
export function checkStopsOnItsOwn(stopReason: GenerateResult["stopReason"] | null): TaskCheck {
  if (stopReason === "eos") return ok("ended on its own");
  if (stopReason === "maxTokens") return fail("cut off at maxTokens: it did not end on its own");
  return fail(`ended by ${stopReason ?? "nothing known"}, not on its own`);
}

/** Parses as a JSON object or array (what a prose answer must not be). */
function looksLikeJson(text: string): boolean {
  if (!/^[[{]/.test(text)) return false;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null;
  } catch {
    return false;
  }
}

/** Prose: something written, no code fence, no JSON; with `singleLine`, one line. */
export function checkPlainText(output: string, singleLine: boolean): TaskCheck {
  const text = output.trim();
  if (text === "") return fail("empty answer");
  if (text.includes("```")) return fail(`has a code block: ${shown(text)}`);
  if (looksLikeJson(text)) return fail(`is JSON, not prose: ${shown(text)}`);
  if (singleLine && /[\r\n]/.test(text)) return fail(`more than one line: ${shown(text)}`);
  return ok(singleLine ? "one line of prose" : "prose");
}

const LANGUAGE_ALIASES: Readonly<Record<string, string>> = {
  javascript: "js",
  typescript: "ts",
  py: "python",
  sh: "bash",
  shell: "bash",
};

const canonicalLanguage = (tag: string): string => {
  const t = tag.toLowerCase();
  return LANGUAGE_ALIASES[t] ?? t;
};

const FENCE = /```([^\s`]*)[^\n]*\n([\s\S]*?)```/;

/** A fenced block with a language tag (and a non-empty body); with `language`, that language. */
export function checkCodeBlock(output: string, language: string | undefined): TaskCheck {
  const m = FENCE.exec(output);
  if (!m) return fail(`no fenced code block: ${shown(output)}`);
  const tag = m[1] ?? "";
  if ((m[2] ?? "").trim() === "") return fail("the code block is empty");
  if (tag === "") return fail("the code block has no language tag");
  if (language !== undefined && canonicalLanguage(tag) !== canonicalLanguage(language))
    return fail(`a ${tag} code block, expected ${language}`);
  return ok(`a ${tag} code block`);
}

/**
 * A GenUI document the renderer shows as is: parsed and validated by the app's own validator
 * (electron/api/genui), no node replaced by an Invalid stand-in, at least one component.
 */
export function checkGenuiDocument(output: string, components: readonly string[] | undefined): TaskCheck {
  const checked = parseDocument(output.trim());
  if (!checked.ok) return fail(`${checked.reason} Output ${shown(output)}`);
  const first = checked.issues[0];
  if (first) return fail(`not valid for the catalog: ${first.id}: ${first.reason}`);
  const types: string[] = [];
  for (const node of walkNodes(checked.document)) types.push(node.type);
  if (types.length === 0) return fail("a UI document without any component");
  if (components && !types.some((t) => components.includes(t)))
    return fail(`shows ${[...new Set(types)].join(", ")}, expected ${components.join(" or ")}`);
  return ok(`a valid UI document: ${[...new Set(types)].join(", ")}`);
}

const STEP = /^(\d{1,3})\.\s+\S/;

/** Only numbered steps "1. …" counting up from 1, between `min` and `max` of them. */
export function checkNumberedPlan(output: string, min: number, max: number | undefined): TaskCheck {
  const lines = output
    .trim()
    .split(/\r?\n/)
    .filter((l) => l.trim() !== "");
  for (const [i, line] of lines.entries()) {
    const m = STEP.exec(line.trim());
    if (!m) return fail(`line ${i + 1} is not a numbered step: ${shown(line)}`);
    if (Number(m[1]) !== i + 1) return fail(`step ${i + 1} is numbered ${m[1]}`);
  }
  const n = lines.length;
  if (n < min) return fail(`${n} step(s), expected at least ${min}`);
  if (max !== undefined && n > max) return fail(`${n} steps, expected at most ${max}`);
  return ok(`a plan of ${n} steps`);
}

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * One tool call and nothing else: `{"tool":"<name>","arguments":{…}}` with exactly those two
 * keys; with `tool`, that tool; with `args`, at least those argument names.
 */
export function checkToolCall(
  output: string,
  tool: string | undefined,
  args: readonly string[] | undefined,
): TaskCheck {
  let value: unknown;
  try {
    value = JSON.parse(output.trim());
  } catch {
    return fail(`not a JSON tool call: ${shown(output)}`);
  }
  if (!isPlainObject(value)) return fail(`not a JSON object: ${shown(output)}`);
  const keys = Object.keys(value).sort();
  if (keys.join(",") !== "arguments,tool")
    return fail(`a tool call has exactly "tool" and "arguments", got ${keys.join(", ") || "no keys"}`);
  const name = value.tool;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) return fail(`bad tool name ${shown(String(name))}`);
  if (!isPlainObject(value.arguments)) return fail('"arguments" must be an object');
  if (tool !== undefined && name !== tool) return fail(`calls ${name}, expected ${tool}`);
  const missing = (args ?? []).filter((a) => !(a in (value.arguments as Record<string, unknown>)));
  if (missing.length > 0) return fail(`${name} without argument(s) ${missing.join(", ")}`);
  return ok(`calls ${name}`);
}
