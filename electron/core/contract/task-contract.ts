/**
 * The default contract (`macaron-default`) as a function of the held-out seed datasets
 * (resources/training/D.heldout.jsonl): one case per held-out example, pinned to its domain's
 * adapter, whose checks come from the reference answer's format (the code block's language,
 * the plan or the tool call, the UI component), plus router cases. scripts/training/seed-data.ts
 * writes the result to resources/contracts/default.json; a test keeps the two in sync.
 */
import type { z } from "zod";
import type { Assertion, ContractFile } from "./contract-schema";
import { BUILTIN_DOMAINS, type BuiltinDomain } from "../../../common/domains";
import { sharedTerms, stepTerms, uiRequirements } from "./key-terms";
import type { SandboxCall } from "./sandbox/protocol";
import { HELDOUT_CODING_TESTS } from "./task-tests";

type ContractJson = z.input<typeof ContractFile>;
type CaseJson = ContractJson["cases"][number];

/** The default contract covers the built-in domains; a team's own are tagged in its own contract. */
export const TASK_DOMAINS = BUILTIN_DOMAINS;
export type TaskDomain = BuiltinDomain;

/** A held-out line: the user turn and the reference answer. */
export interface HeldoutExample {
  messages: ReadonlyArray<{ role: string; content: string }>;
}

export const TASK_CONTRACT_NAME = "macaron-default";
export const TASK_CONTRACT_VERSION = "3.0.0";

/**
 * Minimum pass rates per tag, how far below the live version a candidate may fall (per tag and
 * overall, over the same cases), and how many of a tag's answers may be degenerate.
 *
 * Since v3 a case passes only when its answer is right (unit tests, key content, argument
 * values, the UI's labels). The shipped demo specialists (a 0.7M-parameter base) write their
 * formats but not right answers: they pass 0 of 36 task cases per specialist under v3 (format
 * alone: chat 34, coding 27, agent 24, ui 11; bench/README.md), so the floors are 0 — a floor
 * above what live measures would reject every candidate, better ones included. What stops a
 * worse version is the paired comparison with live (maxRegression), and what stops a
 * constant-answer version whatever live scores is maxDegenerate: more than half of a tag's
 * answers the same as another question's is a rejection (the demo's ui specialist itself is at
 * 26 of 36). A team with a real base model raises the floors in its own contract file.
 */
export const TASK_THRESHOLDS = {
  minPassRate: 0,
  byTag: { chat: 0, coding: 0, agent: 0, ui: 0, router: 0.2 },
  maxRegression: 0.05,
  maxDegenerate: 0.5,
} as const;

/** Answer budgets (tokens; the demo base has one token per byte) and length limits (characters). */
const LIMITS = {
  chat: { maxTokens: 160, maxChars: 100 },
  coding: { maxTokens: 320, maxChars: 260 },
  plan: { maxTokens: 320, maxChars: 240 },
  tool: { maxTokens: 320, maxChars: 200 },
  ui: { maxTokens: 448, maxChars: 420 },
} as const;
const ROUTER_CASES_PER_DOMAIN = 4;
const ROUTER_MAX_TOKENS = 24;

const FUNCTION_DEFINITION: Readonly<Record<string, string>> = {
  js: "function [A-Za-z_$][\\w$]*\\s*\\(",
  python: "def [A-Za-z_]\\w*\\s*\\(",
};

function parts(e: HeldoutExample, where: string): { user: string; reference: string } {
  const user = e.messages.find((m) => m.role === "user")?.content;
  const reference = e.messages.find((m) => m.role === "assistant")?.content;
  if (!user || !reference) throw new Error(`${where}: a held-out example needs a user and an assistant turn`);
  return { user, reference };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A plan must cover at least this many of its reference's steps (each: one of the step's words). */
const PLAN_STEPS_COVERED = 2;

/**
 * Content words (key-terms.ts: not stopwords) an answer must add to its prompt, so that an echo
 * of the prompt or its bare subject ("hot chocolate.") fails. Measured on the references: chat
 * (chat.train/heldout.jsonl, the default contract's, the self-improvement tasks') add 2 to 8,
 * the fewest 2 ("You should be proud! Well done, enjoy the moment." for "Today I'm proud.":
 * well, enjoy); plans add 5 to 13.
 */
export const CHAT_NEW_WORDS = 2;
export const PLAN_NEW_WORDS = 3;

/**
 * The checks of one held-out example: its format (from the domain and the reference's format)
 * and since v3 its correctness — coding: the task's unit tests run in the sandbox; chat: the
 * subject the prompt and the reference share; agent: the tool and its argument values, or
 * the reference plan's steps; ui: the component, labels and numbers the prompt asked for.
 * Other suites of the same tasks (the cycle's self-improvement prompts) pass their own table of
 * coding tests. Throws (naming `where`) when the reference gives nothing to check.
 */
export function checksFor(
  domain: TaskDomain,
  user: string,
  reference: string,
  where: string,
  codingTests: Readonly<Record<string, readonly SandboxCall[]>> = HELDOUT_CODING_TESTS,
): Pick<CaseJson, "assertions" | "maxTokens" | "format"> {
  const common: Assertion[] = [{ type: "stopsOnItsOwn" }, { type: "noPii" }];
  switch (domain) {
    case "chat": {
      const terms = sharedTerms(user, reference);
      if (terms.length === 0) throw new Error(`${where}: the reference shares no key word with the prompt`);
      return {
        maxTokens: LIMITS.chat.maxTokens,
        assertions: [
          { type: "plainText", singleLine: true },
          { type: "maxChars", max: LIMITS.chat.maxChars },
          ...common,
          {
            type: "mentions",
            terms: terms.map((t) => [t]),
            min: 1,
            beyondPrompt: { prompt: user, minNewWords: CHAT_NEW_WORDS },
          },
        ],
      };
    }
    case "coding": {
      const language = /```([^\s`]+)/.exec(reference)?.[1];
      const definition = language ? FUNCTION_DEFINITION[language] : undefined;
      if (!language || !definition) throw new Error(`${where}: the reference has no js or python code block`);
      const name = /(?:function|def)\s+([A-Za-z_$][\w$]*)\s*\(/.exec(reference)?.[1];
      const calls = name ? codingTests[name] : undefined;
      if (!calls)
        throw new Error(`${where}: no unit tests for the reference function ${name ?? "(none found)"}`);
      return {
        maxTokens: LIMITS.coding.maxTokens,
        assertions: [
          { type: "codeBlock", language },
          { type: "regex", pattern: definition },
          { type: "maxChars", max: LIMITS.coding.maxChars },
          ...common,
          { type: "unitTests", language: language === "python" ? "python" : "js", calls: [...calls] },
        ],
      };
    }
    case "agent": {
      const call = parseJson(reference) as { tool?: unknown; arguments?: unknown } | undefined;
      if (call && typeof call.tool === "string" && typeof call.arguments === "object" && call.arguments) {
        return {
          maxTokens: LIMITS.tool.maxTokens,
          assertions: [
            {
              type: "toolCall",
              tool: call.tool,
              arguments: Object.keys(call.arguments),
              values: { ...(call.arguments as Record<string, unknown>) },
            },
            { type: "maxChars", max: LIMITS.tool.maxChars },
            ...common,
          ],
        };
      }
      return {
        maxTokens: LIMITS.plan.maxTokens,
        assertions: [
          { type: "numberedPlan", minSteps: 3, maxSteps: 5 },
          { type: "maxChars", max: LIMITS.plan.maxChars },
          ...common,
          {
            type: "mentions",
            terms: reference
              .split("\n")
              .map(stepTerms)
              .filter((t) => t.length > 0),
            min: PLAN_STEPS_COVERED,
            beyondPrompt: { prompt: user, minNewWords: PLAN_NEW_WORDS },
          },
        ],
      };
    }
    case "ui": {
      const doc = parseJson(reference) as { blocks?: Array<{ root?: { type?: unknown } }> } | undefined;
      const component = doc?.blocks?.[0]?.root?.type;
      if (typeof component !== "string") throw new Error(`${where}: the reference is not a UI document`);
      const needs = uiRequirements(user, doc);
      if (needs.texts.length + needs.numbers.length === 0)
        throw new Error(`${where}: the reference holds nothing the prompt asked for`);
      return {
        maxTokens: LIMITS.ui.maxTokens,
        format: "ui",
        assertions: [
          { type: "genuiDocument", components: [component] },
          { type: "maxChars", max: LIMITS.ui.maxChars },
          ...common,
          { type: "genuiContains", component, texts: needs.texts, numbers: needs.numbers, prompt: user },
        ],
      };
    }
  }
}

const shortened = (text: string, max = 160): string =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;
const two = (n: number): string => String(n).padStart(2, "0");

/** The default contract document for these held-out sets (plain JSON, validated by the caller). */
export function buildTaskContract(
  heldout: Readonly<Record<TaskDomain, readonly HeldoutExample[]>>,
): ContractJson {
  const cases: CaseJson[] = [];
  for (const domain of TASK_DOMAINS) {
    heldout[domain].forEach((e, i) => {
      const id = `${domain}-${two(i + 1)}`;
      const { user } = parts(e, `${domain}.heldout.jsonl line ${i + 1}`);
      const { reference } = parts(e, id);
      cases.push({
        id,
        description: `Held-out ${domain} task: ${shortened(user)}`,
        tags: [domain],
        conversation: [{ role: "user", content: user }],
        mode: domain,
        reference,
        ...checksFor(domain, user, reference, `${domain}.heldout.jsonl line ${i + 1}`),
      });
    });
  }
  for (const domain of TASK_DOMAINS) {
    heldout[domain].slice(0, ROUTER_CASES_PER_DOMAIN).forEach((e, i) => {
      const { user } = parts(e, `${domain}.heldout.jsonl line ${i + 1}`);
      cases.push({
        id: `router-${domain}-${i + 1}`,
        description: `In auto mode the router sends a held-out ${domain} request to ${domain}: ${shortened(user)}`,
        tags: ["router"],
        conversation: [{ role: "user", content: user }],
        mode: "auto",
        maxTokens: ROUTER_MAX_TOKENS,
        // Cut at a few tokens by design: the answer is not judged, only where it was routed.
        distinct: false,
        assertions: [{ type: "routesTo", adapter: domain }, { type: "noPii" }],
      });
    });
  }
  return {
    contract: TASK_CONTRACT_NAME,
    version: TASK_CONTRACT_VERSION,
    description:
      "The gate every adapter version passes before it goes live: held-out tasks per specialist " +
      "(subjects and wordings never seen in training, resources/training/*.heldout.jsonl), each pinned to " +
      "its domain's adapter. Each answer must be in its format (chat: one short line of prose; coding: a code " +
      "block in the language asked for, with a function; agent: a numbered plan or one JSON tool call; ui: a " +
      "GenUI document valid for the catalog, answered in UI mode), end on its own, leak no personal data, and " +
      "be right: coding answers pass the task's unit tests, run in a sandbox (Python in Pyodide, JavaScript in " +
      "an isolated context, no files or network, time and memory limits); chat answers mention the subject; " +
      "tool calls carry the expected argument values; plans cover the reference's steps; UI documents hold " +
      "the labels and numbers the prompt asked for. Answers to different questions that are identical or " +
      "near-identical fail (distinctAnswers). Plus router cases. Each tag needs its minimum pass rate, and a " +
      "candidate may not fall more than maxRegression below the live version's pass rate, per tag and " +
      "overall, over the same cases. Generated by npm run seed-data.",
    maxTokens: LIMITS.coding.maxTokens,
    distinctAnswers: true,
    thresholds: {
      minPassRate: TASK_THRESHOLDS.minPassRate,
      byTag: { ...TASK_THRESHOLDS.byTag },
      maxRegression: TASK_THRESHOLDS.maxRegression,
      maxDegenerate: TASK_THRESHOLDS.maxDegenerate,
    },
    cases,
  };
}
