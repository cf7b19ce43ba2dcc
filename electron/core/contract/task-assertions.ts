/**
 * The task checks of a contract: did a specialist answer in its format? Each takes the answer
 * text (and, for stopsOnItsOwn, how the generation ended) and returns pass/fail with a detail a
 * person can act on. The formats are the ones the seed datasets teach (resources/training/).
 */
import { parseDocument, walkNodes } from "../../api/genui";
import type { GenerateResult } from "../engine/types";
import { stem, wordsOf } from "./key-terms";

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
  values?: Readonly<Record<string, unknown>>,
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
  const given = value.arguments;
  for (const [key, want] of Object.entries(values ?? {})) {
    if (!(key in given)) return fail(`${name} without argument ${key}`);
    if (!sameArgument(given[key], want))
      return fail(`${name} with ${key} ${brief(given[key])}, expected ${brief(want)}`);
  }
  const checked = Object.keys(values ?? {});
  return ok(`calls ${name}${checked.length > 0 ? ` with the expected ${checked.join(", ")}` : ""}`);
}

const brief = (v: unknown): string => {
  const t = JSON.stringify(v) ?? String(v);
  return t.length > MAX_SHOWN ? `${t.slice(0, MAX_SHOWN)}…` : t;
};

/** Strings equal ignoring case and surrounding spaces; numbers (or numeric strings) equal; else as JSON. */
function sameArgument(got: unknown, want: unknown): boolean {
  if (typeof want === "string" && typeof got === "string")
    return got.trim().toLowerCase() === want.trim().toLowerCase();
  if (typeof want === "number")
    return (typeof got === "number" || typeof got === "string") && Number(got) === want;
  return JSON.stringify(got) === JSON.stringify(want);
}

/** Lower case, punctuation to spaces: what `mentions` matches terms against. */
export function normalizedWords(text: string): string {
  return ` ${text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()} `;
}

/** The term occurs at the start of a word of the (normalized) text: "ball" matches "balls". */
function hasTerm(words: string, term: string): boolean {
  const t = normalizedWords(term).trim();
  return t !== "" && words.includes(` ${t}`);
}

/** An answer whose words are at least this share the prompt's restates the prompt. */
export const RESTATES_PROMPT = 0.8;

const plainWords = (text: string): string[] => normalizedWords(text).trim().split(" ").filter(Boolean);

/** Share of the answer's words (all of them, normalized) that occur in the prompt. */
export function promptOverlap(prompt: string, answer: string): { share: number } {
  const said = new Set(plainWords(prompt));
  const words = plainWords(answer);
  if (words.length === 0) return { share: 1 };
  return { share: words.filter((w) => said.has(w)).length / words.length };
}

/**
 * A text that is a near-copy of the prompt: most of its words are the prompt's and it holds
 * most of the prompt's words (a UI label "Book a table" for "Make a form to book a table." holds
 * 4 of 7: not a copy; the references' labels hold at most 57%).
 */
export function copiesPrompt(prompt: string, text: string): boolean {
  const words = plainWords(text);
  const asked = plainWords(prompt);
  if (words.length === 0 || asked.length === 0) return false;
  const held = new Set(words);
  return (
    promptOverlap(prompt, text).share >= RESTATES_PROMPT &&
    asked.filter((w) => held.has(w)).length / asked.length >= RESTATES_PROMPT
  );
}

/**
 * The answer's content words (key-terms.ts: not stopwords, 3+ letters) whose stem the prompt
 * lacks, as stems without repeats: what the answer adds to what it was asked.
 */
export function newContentWords(prompt: string, answer: string): string[] {
  const said = wordsOf(prompt).map(stem);
  const out: string[] = [];
  for (const w of wordsOf(answer)) {
    const s = stem(w);
    if (said.some((p) => p.startsWith(s) || s.startsWith(p)) || out.includes(s)) continue;
    out.push(s);
  }
  return out;
}

/**
 * Key content: each group is alternatives; at least `min` groups (default all) must occur.
 * The detail names the groups found missing.
 */
export function checkMentions(
  output: string,
  terms: readonly (readonly string[])[],
  min?: number,
  beyondPrompt?: { prompt: string; minNewWords: number },
): TaskCheck {
  if (beyondPrompt) {
    const { share } = promptOverlap(beyondPrompt.prompt, output);
    if (share >= RESTATES_PROMPT)
      return fail(
        `restates the prompt (${Math.round(share * 100)}% of its words are the prompt's): ${shown(output)}`,
      );
  }
  const words = normalizedWords(output);
  const missing = terms.filter((group) => !group.some((t) => hasTerm(words, t)));
  const found = terms.length - missing.length;
  const need = Math.min(min ?? terms.length, terms.length);
  const names = (gs: readonly (readonly string[])[]): string => gs.map((g) => g.join("/")).join(", ");
  const present = terms.filter((g) => !missing.includes(g));
  if (found >= need && beyondPrompt) {
    const added = newContentWords(beyondPrompt.prompt, output);
    if (added.length < beyondPrompt.minNewWords)
      return fail(
        `adds ${added.length} content word${added.length === 1 ? "" : "s"} to the prompt${added.length ? ` (${added.join(", ")})` : ""}, needs ${beyondPrompt.minNewWords}: ${shown(output)}`,
      );
    return ok(
      `mentions ${names(present)} (${found} of ${terms.length} key terms, needs ${need}) and adds ${added.length} content words to the prompt`,
    );
  }
  if (found >= need)
    return ok(`mentions ${names(present)} (${found} of ${terms.length} key terms, needs ${need})`);
  return fail(
    `mentions ${found} of ${terms.length} key terms, needs ${need}; missing ${names(missing)}: ${shown(output)}`,
  );
}

/**
 * What a UI document must hold: a component of that type, each text in some string value
 * (case-insensitive substring), each number as a number value anywhere in the document.
 */
export function checkGenuiContains(
  output: string,
  component: string | undefined,
  texts: readonly string[],
  numbers: readonly number[],
  prompt?: string,
): TaskCheck {
  const checked = parseDocument(output.trim());
  if (!checked.ok) return fail(`${checked.reason} Output ${shown(output)}`);
  const types = new Set<string>();
  for (const node of walkNodes(checked.document)) types.add(node.type);
  if (component !== undefined && !types.has(component))
    return fail(`no ${component} (shows ${[...types].join(", ") || "nothing"})`);
  const strings: string[] = [];
  const nums: number[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") strings.push(v.toLowerCase());
    else if (typeof v === "number") nums.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (isPlainObject(v)) Object.values(v).forEach(walk);
  };
  walk(checked.document);
  const copy = prompt === undefined ? undefined : strings.find((t) => copiesPrompt(prompt, t));
  if (copy !== undefined) return fail(`restates the prompt in a text of the document: ${shown(copy)}`);
  const missingTexts = texts.filter((t) => !strings.some((s) => s.includes(t.toLowerCase())));
  const missingNumbers = numbers.filter((n) => !nums.includes(n));
  if (missingTexts.length > 0 || missingNumbers.length > 0)
    return fail(
      `the ${component ?? "document"} lacks ${[...missingTexts.map((t) => JSON.stringify(t)), ...missingNumbers.map(String)].join(", ")}`,
    );
  const what = [...texts.map((t) => JSON.stringify(t)), ...numbers.map(String)];
  return ok(`${component ? `a ${component}` : "a document"}${what.length ? ` with ${what.join(", ")}` : ""}`);
}
