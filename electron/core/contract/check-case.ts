/**
 * One case's checks on one answer: the API every suite of cases shares (the contract runner,
 * and suites built elsewhere from the same case format, such as a cycle's taught suite).
 *
 *   const { pass, reason } = await checkCase(contractCase, "the answer text");
 *
 * Runs every assertion but `regression` (which needs the live version's result; the runner
 * decides it). Degeneracy is a property of a set of answers, not of one: see degeneracy.ts.
 */
import { type AssertionResult, type CaseOutcome, checkAssertion } from "./assertions";
import { checkUnitTests } from "./code-tests";
import type { Assertion, ContractCase } from "./contract-schema";
import type { CodeSandbox } from "./sandbox/sandbox";

export interface CaseCheck {
  pass: boolean;
  /** Why: the first failed check ("unitTests: failed: square(3) returned 6, expected 9 …"), or "passed: …". */
  reason: string;
  assertions: AssertionResult[];
}

export interface CheckOptions {
  /** Where code runs; default the process-wide sandbox (code-tests.ts sharedSandbox). */
  sandbox?: CodeSandbox;
}

/** Check one assertion, `unitTests` included (it runs the answer's code in the sandbox). */
export async function checkOne(
  a: Exclude<Assertion, { type: "regression" }>,
  o: CaseOutcome,
  options: CheckOptions = {},
): Promise<AssertionResult> {
  if (a.type === "unitTests")
    return { type: a.type, ...(await checkUnitTests(o.output, a, options.sandbox)) };
  return checkAssertion(a, o);
}

/**
 * Every assertion of `c` (but `regression`) on `answer`: a text (taken as an answer that ended
 * on its own, routed to the case's mode, at no latency) or a full outcome.
 */
export async function checkCase(
  c: Pick<ContractCase, "assertions" | "mode">,
  answer: string | CaseOutcome,
  options: CheckOptions = {},
): Promise<CaseCheck> {
  const o: CaseOutcome =
    typeof answer === "string"
      ? {
          output: answer,
          adapters: c.mode === "auto" || c.mode === "base" ? [] : [c.mode],
          latencyMs: 0,
          stopReason: "eos",
        }
      : answer;
  const assertions: AssertionResult[] = [];
  for (const a of c.assertions) if (a.type !== "regression") assertions.push(await checkOne(a, o, options));
  return verdictOf(assertions);
}

/** The checks whose detail says why a passing answer is right (not just well formed). */
const CORRECTNESS = ["unitTests", "mentions", "genuiContains", "toolCall", "contains", "regex", "routesTo"];

/**
 * The reason of a verdict: the first failed check ("unitTests: failed: square(3) returned 6,
 * expected 9 (0/3 tests)"), or for a pass what made it right ("passed: unitTests: 3 of 3 tests
 * pass").
 */
export function reasonOf(assertions: readonly AssertionResult[]): string {
  const failed = assertions.find((r) => !r.passed);
  if (failed) return `${failed.type}: ${failed.detail}`;
  const why = assertions.find((r) => CORRECTNESS.includes(r.type));
  return why ? `passed: ${why.type}: ${why.detail}` : "passed";
}

/** pass and reason of a list of results. */
export function verdictOf(assertions: AssertionResult[]): CaseCheck {
  return { pass: assertions.every((r) => r.passed), reason: reasonOf(assertions), assertions };
}
