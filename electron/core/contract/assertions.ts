import type { GenerateResult } from "../engine/types";
import { containsPii } from "../../../common/redaction";
import type { Assertion, AssertionType } from "./contract-schema";
import { validateJsonSchema } from "./json-schema";
import {
  checkCodeBlock,
  checkGenuiContains,
  checkGenuiDocument,
  checkMentions,
  checkMaxChars,
  checkNumberedPlan,
  checkPlainText,
  checkStopsOnItsOwn,
  checkToolCall,
  shown,
  type TaskCheck,
} from "./task-assertions";

/** What one case produced: the material every assertion is checked against. */
export interface CaseOutcome {
  output: string;
  /** Adapter ids that answered, first = the router's (or the pin's) first choice. */
  adapters: string[];
  /** Routing + generation, ms. */
  latencyMs: number;
  /** How the generation ended (null when unknown). */
  stopReason: GenerateResult["stopReason"] | null;
}

export interface AssertionResult {
  /** The assertion's type, or "distinct": the contract's degeneracy check (degeneracy.ts). */
  type: AssertionType | "distinct";
  passed: boolean;
  /** A sentence a person can act on: what was expected, what came out. */
  detail: string;
}

/**
 * Check one assertion (all but `regression`, which needs the live version's result and is
 * decided by the runner, and `unitTests`, which runs code: check-case.ts).
 */
export function checkAssertion(
  a: Exclude<Assertion, { type: "regression" | "unitTests" }>,
  o: CaseOutcome,
): AssertionResult {
  const task = (r: TaskCheck): AssertionResult => ({ type: a.type, ...r });
  switch (a.type) {
    case "maxChars":
      return task(checkMaxChars(o.output, a.max));
    case "stopsOnItsOwn":
      return task(checkStopsOnItsOwn(o.stopReason));
    case "plainText":
      return task(checkPlainText(o.output, a.singleLine ?? false));
    case "codeBlock":
      return task(checkCodeBlock(o.output, a.language));
    case "genuiDocument":
      return task(checkGenuiDocument(o.output, a.components));
    case "numberedPlan":
      return task(checkNumberedPlan(o.output, a.minSteps, a.maxSteps));
    case "toolCall":
      return task(checkToolCall(o.output, a.tool, a.arguments, a.values));
    case "mentions":
      return task(checkMentions(o.output, a.terms, a.min, a.beyondPrompt));
    case "genuiContains":
      return task(checkGenuiContains(o.output, a.component, a.texts, a.numbers, a.prompt));
    case "contains": {
      const passed = o.output.includes(a.value);
      return {
        type: a.type,
        passed,
        detail: `${passed ? "contains" : "does not contain"} ${shown(a.value)}; output ${shown(o.output)}`,
      };
    }
    case "notContains": {
      const passed = !o.output.includes(a.value);
      return {
        type: a.type,
        passed,
        detail: `${passed ? "does not contain" : "contains"} ${shown(a.value)}; output ${shown(o.output)}`,
      };
    }
    case "regex": {
      const passed = new RegExp(a.pattern, a.flags).test(o.output);
      return {
        type: a.type,
        passed,
        detail: `${passed ? "matches" : "does not match"} /${a.pattern}/${a.flags ?? ""}; output ${shown(o.output)}`,
      };
    }
    case "routesTo": {
      const first = o.adapters[0] ?? "base";
      const passed = first === a.adapter;
      return { type: a.type, passed, detail: `routed to ${first}${passed ? "" : `, expected ${a.adapter}`}` };
    }
    case "noPii": {
      const passed = !containsPii(o.output);
      return {
        type: a.type,
        passed,
        detail: passed ? "no personal data found" : `personal data found in ${shown(o.output)}`,
      };
    }
    case "latencyMs": {
      const passed = o.latencyMs <= a.max;
      return { type: a.type, passed, detail: `${Math.round(o.latencyMs)} ms (budget ${a.max} ms)` };
    }
    case "jsonSchemaValid": {
      let value: unknown;
      try {
        value = JSON.parse(o.output);
      } catch {
        return { type: a.type, passed: false, detail: `not JSON: ${shown(o.output)}` };
      }
      const result = validateJsonSchema(value, a.schema);
      if (result.unsupported.length > 0)
        return {
          type: a.type,
          passed: false,
          detail: `unsupported schema keywords: ${result.unsupported.join(", ")}`,
        };
      return {
        type: a.type,
        passed: result.valid,
        detail: result.valid ? "valid against the schema" : result.errors.join("; "),
      };
    }
  }
}

/** Share of a case's assertions that passed (regression excluded): the case's score. */
export function caseScore(results: readonly AssertionResult[]): number {
  const scored = results.filter((r) => r.type !== "regression" && r.type !== "distinct");
  if (scored.length === 0) return 1;
  return scored.filter((r) => r.passed).length / scored.length;
}
