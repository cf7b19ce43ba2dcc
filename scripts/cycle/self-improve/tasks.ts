/**
 * The prompts a self-improvement cycle samples answers for, with the checks that judge them.
 *
 * They are generated from the seed generator's *training* pools (scripts/training/seed: subjects
 * and wordings that share nothing with the held-out pools the default contract is built from),
 * with seeds of their own (`SELF_IMPROVE_SEED`), and each gets the contract's own checks for its
 * domain (task-contract.ts `checksFor`): coding answers run unit tests in the sandbox (the table
 * below, one per training task), chat answers mention the subject, tool calls carry the task's
 * argument values, plans cover two of the reference's steps, UI documents hold the component,
 * labels and numbers asked for. `assertDisjoint` refuses any prompt of the contract's held-out
 * cases (and any held-out subject or wording): training on the test would prove nothing.
 */
import { parseContract, type Contract } from "../../../electron/core/contract/contract-schema";
import type { SandboxCall } from "../../../electron/core/contract/sandbox/protocol";
import { checksFor, type TaskDomain } from "../../../electron/core/contract/task-contract";
import { AGENT_PLANS, AGENT_TOOL_CALLS } from "../../training/seed/agent";
import { CHAT_FEELINGS, CHAT_TOPICS } from "../../training/seed/chat";
import { CODING } from "../../training/seed/coding";
import { pairs, type SplitFamily } from "../../training/seed/types";
import { UI } from "../../training/seed/ui";

/** Part of every PRNG seed here: bump it to draw other prompts on purpose. */
export const SELF_IMPROVE_SEED = "self-improve-v1";

// Families are of different subject types; only their halves' common surface is used here.
type AnyFamily = SplitFamily<unknown>;
const fam = <S>(f: SplitFamily<S>): AnyFamily => f as unknown as AnyFamily;

/** Each domain's task families (the seed generator's), by the name of their training half. */
export const SELF_IMPROVE_FAMILIES: Readonly<Record<TaskDomain, readonly AnyFamily[]>> = {
  chat: [fam(CHAT_TOPICS), fam(CHAT_FEELINGS)],
  coding: [fam(CODING)],
  agent: [fam(AGENT_PLANS), fam(AGENT_TOOL_CALLS)],
  ui: [fam(UI)],
};

const c = (args: unknown[], expect: unknown): SandboxCall => ({ args, expect });

/**
 * Unit tests of the training pool's coding tasks, by function name (JavaScript and Python
 * names). A test runs every task's reference answer against them in the sandbox.
 */
const TESTS: ReadonlyArray<[string, string, readonly SandboxCall[]]> = [
  ["reverseString", "reverse_string", [c(["abc"], "cba"), c([""], ""), c(["ab c"], "c ba")]],
  ["add", "add", [c([2, 3], 5), c([-1, 1], 0), c([0, 0], 0)]],
  ["isEven", "is_even", [c([4], true), c([3], false), c([0], true)]],
  ["maxOf", "max_of", [c([[1, 5, 3]], 5), c([[-2, -7]], -2)]],
  ["sumList", "sum_list", [c([[1, 2, 3]], 6), c([[]], 0)]],
  ["countWords", "count_words", [c(["the quick fox"], 3), c(["one"], 1)]],
  ["capitalize", "capitalize", [c(["hello"], "Hello"), c(["a"], "A")]],
  ["isPalindrome", "is_palindrome", [c(["level"], true), c(["abc"], false)]],
  ["factorial", "factorial", [c([5], 120), c([0], 1), c([1], 1)]],
  ["unique", "unique", [c([[1, 2, 1, 3]], [1, 2, 3]), c([[]], [])]],
  ["celsiusToFahrenheit", "celsius_to_fahrenheit", [c([0], 32), c([100], 212), c([-40], -40)]],
  ["countVowels", "count_vowels", [c(["hello"], 2), c(["sky"], 0)]],
  ["lastItem", "last_item", [c([[1, 2, 3]], 3), c([["x"]], "x")]],
  ["squareAll", "square_all", [c([[1, 2, 3]], [1, 4, 9]), c([[]], [])]],
  ["evensOnly", "evens_only", [c([[1, 2, 3, 4]], [2, 4]), c([[1]], [])]],
  ["joinWithCommas", "join_with_commas", [c([["a", "b"]], "a, b"), c([["x"]], "x")]],
  ["isEmpty", "is_empty", [c([[]], true), c([[1]], false)]],
  ["average", "average", [c([[1, 2, 3]], 2), c([[4]], 4)]],
  ["toUpper", "to_upper", [c(["abc"], "ABC"), c(["a1"], "A1")]],
  ["repeatText", "repeat_text", [c(["ab", 3], "ababab"), c(["x", 0], "")]],
  ["minOf", "min_of", [c([[3, 1, 2]], 1), c([[-5, 0]], -5)]],
  ["hasWord", "has_word", [c(["the cat sat", "cat"], true), c(["the cat", "dog"], false)]],
  ["countOf", "count_of", [c([[1, 2, 1], 1], 2), c([["a"], "b"], 0)]],
  ["clamp", "clamp", [c([5, 0, 3], 3), c([-1, 0, 3], 0), c([2, 0, 3], 2)]],
  ["isPositive", "is_positive", [c([3], true), c([0], false), c([-2], false)]],
  ["doubleAll", "double_all", [c([[1, 2]], [2, 4]), c([[]], [])]],
  ["firstN", "first_n", [c([[1, 2, 3], 2], [1, 2]), c([[1], 0], [])]],
  ["countLines", "count_lines", [c(["a\nb"], 2), c(["one"], 1)]],
  ["trimSpaces", "trim_spaces", [c(["  hi  "], "hi"), c(["x"], "x")]],
  ["isLeapYear", "is_leap_year", [c([2024], true), c([1900], false), c([2000], true), c([2023], false)]],
  ["minutesToHours", "minutes_to_hours", [c([120], 2), c([90], 1.5)]],
  ["isBlank", "is_blank", [c([""], true), c(["a"], false)]],
];

/** Function name → its tests (both languages' names). */
export const SELF_IMPROVE_CODING_TESTS: Readonly<Record<string, readonly SandboxCall[]>> = Object.fromEntries(
  TESTS.flatMap(([js, py, calls]) => [
    [js, calls],
    [py, calls],
  ]),
);

/** One generated task: the prompt, the reference answer its checks come from, its family. */
export interface SelfImproveTask {
  domain: TaskDomain;
  family: string;
  prompt: string;
  reference: string;
}

/**
 * Every (subject, wording) pair of the domain's training pools, as prompts with references, in
 * an order seeded by `seed`, one task per prompt. `families` keeps only those (by name: "agent-tools",
 * "agent-plans", "chat-topics", "chat-feelings", "coding", "ui").
 */
export function selfImproveTasks(
  domain: TaskDomain,
  o: { seed?: string; families?: readonly string[] } = {},
): SelfImproveTask[] {
  const seed = `${SELF_IMPROVE_SEED}/${domain}/${o.seed ?? "0"}`;
  const families = SELF_IMPROVE_FAMILIES[domain]
    .map((f) => f.train)
    .filter((f) => !o.families || o.families.includes(f.name));
  if (families.length === 0) throw new Error(`no ${domain} task family named ${o.families?.join(", ")}`);
  const lists = families.map((f) =>
    pairs(f, f.subjects.length * f.wordings.length, seed).map(({ s, w }) => ({
      domain,
      family: f.name,
      prompt: f.prompt(w, s),
      reference: f.answer(s),
    })),
  );
  // Interleave the families (each in its seeded order), so a prefix takes from all of them.
  const out: SelfImproveTask[] = [];
  const seen = new Set<string>();
  for (let i = 0; lists.some((l) => i < l.length); i++)
    for (const l of lists) {
      const t = l[i];
      if (!t || seen.has(promptKey(t.prompt))) continue;
      seen.add(promptKey(t.prompt));
      out.push(t);
    }
  return out;
}

/** What two prompts are compared by: lower case, spaces collapsed. */
export const promptKey = (text: string): string => text.toLowerCase().replace(/\s+/g, " ").trim();

/**
 * The tasks as a contract (cases pinned to the domain's adapter, the default contract's checks
 * per domain), validated. Tasks whose reference gives nothing to check are left out.
 */
export function selfImproveContract(
  domain: TaskDomain,
  tasks: readonly SelfImproveTask[],
  name = "macaron-self-improve",
): Contract {
  const cases = [];
  for (const [i, t] of tasks.entries()) {
    const id = `${domain}-self-${String(i + 1).padStart(3, "0")}`;
    let checks;
    try {
      checks = checksFor(domain, t.prompt, t.reference, id, SELF_IMPROVE_CODING_TESTS);
    } catch {
      continue;
    }
    cases.push({
      id,
      description: `Self-improvement ${t.family} task: ${t.prompt.slice(0, 150)}`,
      tags: [domain],
      conversation: [{ role: "user" as const, content: t.prompt }],
      mode: domain,
      reference: t.reference,
      ...checks,
    });
  }
  if (cases.length === 0) throw new Error(`no ${domain} task with a check to judge it by`);
  return parseContract(
    {
      contract: name,
      version: "1.0.0",
      description: `Generated ${domain} tasks for self-improvement (training pools, ${SELF_IMPROVE_SEED}).`,
      maxTokens: 320,
      distinctAnswers: true,
      // No floor; compared with the live version when run as a gate (a suite of these tasks).
      thresholds: { minPassRate: 0, maxRegression: 1 },
      cases,
    },
    name,
  );
}

/** The held-out subject phrases and wordings of a domain (none may occur in a task prompt). */
function heldoutMarks(domain: TaskDomain): string[] {
  return SELF_IMPROVE_FAMILIES[domain].flatMap((f) => {
    const h = f.heldout;
    return [
      ...h.subjects.flatMap((s) => h.keys(s)),
      // A wording's literal text around its slots ("Using one of your tools, ").
      ...h.wordings.flatMap((w) => w.split(/\{\w+\}/).filter((p) => p.trim().length >= 12)),
    ];
  });
}

/**
 * Throws when a case of `tasks` asks what a case of `heldout` asks (same last user turn), or
 * when one of its prompts holds a held-out subject or wording of its domain: self-improvement
 * must never train on the contract's held-out cases.
 */
export function assertDisjoint(tasks: Contract, heldout: Contract): void {
  const asked = new Set(
    heldout.cases.map((x) => promptKey(x.conversation[x.conversation.length - 1]!.content)),
  );
  const marks = new Map<string, string[]>();
  for (const x of tasks.cases) {
    const prompt = promptKey(x.conversation[x.conversation.length - 1]!.content);
    if (asked.has(prompt))
      throw new Error(
        `self-improvement task ${x.id} asks a held-out contract case: ${JSON.stringify(prompt)}`,
      );
    const domain = x.mode as TaskDomain;
    if (!(domain in SELF_IMPROVE_FAMILIES)) continue;
    if (!marks.has(domain)) marks.set(domain, heldoutMarks(domain).map(promptKey));
    const hit = marks.get(domain)!.find((m) => prompt.includes(m));
    if (hit)
      throw new Error(
        `self-improvement task ${x.id} holds the held-out ${JSON.stringify(hit)}: ${JSON.stringify(prompt)}`,
      );
  }
}

/**
 * A suite of `count` tasks of the domain that were not sampled (another draw, every prompt of
 * `sampled` left out): measures whether what was learned carries to other prompts of the pools.
 */
export function selfImproveSuite(
  domain: TaskDomain,
  sampled: readonly SelfImproveTask[],
  count: number,
  o: { families?: readonly string[] } = {},
): Contract {
  const taken = new Set(sampled.map((t) => promptKey(t.prompt)));
  const tasks = selfImproveTasks(domain, { seed: "suite", families: o.families })
    .filter((t) => !taken.has(promptKey(t.prompt)))
    .slice(0, count);
  return selfImproveContract(domain, tasks, `macaron-self-improve-suite-${domain}`);
}
