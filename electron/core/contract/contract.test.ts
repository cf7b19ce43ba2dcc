import { describe, expect, it } from "vitest";
import { checkAssertion } from "./assertions";
import { parseContract } from "./contract-schema";
import { runContract, type ContractTarget } from "./contract-runner";
import { defaultContract, gateContract, smokeContract } from "./default-contract";
import { validateJsonSchema } from "./json-schema";

const outcome = (output: string, adapters: string[] = ["coding"], latencyMs = 5) => ({
  output,
  adapters,
  latencyMs,
  stopReason: "eos" as const,
});

describe("contract files", () => {
  it("loads the bundled contracts, and refuses malformed ones with a reason", () => {
    expect(defaultContract()).toMatchObject({ contract: "macaron-default", version: "3.0.0" });
    expect(defaultContract().thresholds).toMatchObject({
      minPassRate: 0,
      maxRegression: 0.05,
      maxDegenerate: 0.5,
    });
    expect(smokeContract()).toMatchObject({ contract: "macaron-smoke", version: "1.0.0" });
    // The smoke contract keeps the 1.x format: per-case regression, no paired comparison.
    expect(smokeContract().thresholds.maxRegression).toBeUndefined();
    const base = {
      contract: "team",
      version: "1.0.0",
      cases: [
        {
          id: "a",
          conversation: [{ role: "user", content: "hi" }],
          mode: "auto",
          assertions: [{ type: "noPii" }],
        },
      ],
    };
    expect(parseContract(base).cases[0]!.tags).toEqual([]);
    expect(() => parseContract({ ...base, cases: [...base.cases, ...base.cases] })).toThrow(
      /duplicate case id "a"/,
    );
    expect(() =>
      parseContract({
        ...base,
        cases: [{ ...base.cases[0], assertions: [{ type: "regex", pattern: "(" }] }],
      }),
    ).toThrow(/bad regex/);
    expect(() =>
      parseContract({ ...base, cases: [{ ...base.cases[0], assertions: [{ type: "sounds-good" }] }] }),
    ).toThrow(/invalid/);
    expect(() =>
      parseContract({
        ...base,
        cases: [{ ...base.cases[0], conversation: [{ role: "assistant", content: "x" }] }],
      }),
    ).toThrow(/end with a user message/);
    expect(() =>
      parseContract({
        ...base,
        cases: [{ ...base.cases[0], assertions: [{ type: "numberedPlan", minSteps: 4, maxSteps: 3 }] }],
      }),
    ).toThrow(/maxSteps is below minSteps/);
    expect(() => parseContract({ ...base, thresholds: { maxRegression: 2 } })).toThrow(/maxRegression/);
  });

  it("lets MACARON_CONTRACT pick the gate's contract: a bundled name or a file", () => {
    expect(gateContract({}).contract).toBe("macaron-default");
    expect(gateContract({ MACARON_CONTRACT: "smoke" }).contract).toBe("macaron-smoke");
    expect(gateContract({ MACARON_CONTRACT: "resources/contracts/smoke.json" }).contract).toBe(
      "macaron-smoke",
    );
    expect(() => gateContract({ MACARON_CONTRACT: "/nowhere/contract.json" })).toThrow(
      /MACARON_CONTRACT: cannot read the contract/,
    );
  });
});

describe("assertions", () => {
  it("checks contains, notContains, regex, routesTo, latency and PII with readable details", () => {
    expect(checkAssertion({ type: "contains", value: "{{{" }, outcome("{{{{")).passed).toBe(true);
    expect(checkAssertion({ type: "contains", value: "{{{" }, outcome("uuuu"))).toMatchObject({
      passed: false,
      detail: 'does not contain "{{{"; output "uuuu"',
    });
    expect(checkAssertion({ type: "notContains", value: "u" }, outcome("uuuu")).passed).toBe(false);
    expect(checkAssertion({ type: "regex", pattern: "^\\{" }, outcome("{x")).passed).toBe(true);
    expect(checkAssertion({ type: "routesTo", adapter: "ui" }, outcome("x"))).toMatchObject({
      passed: false,
      detail: "routed to coding, expected ui",
    });
    expect(checkAssertion({ type: "routesTo", adapter: "ui" }, outcome("x", []))).toMatchObject({
      detail: "routed to base, expected ui",
    });
    expect(checkAssertion({ type: "latencyMs", max: 4 }, outcome("x")).passed).toBe(false);
    expect(checkAssertion({ type: "noPii" }, outcome("write to jane.doe@example.com")).passed).toBe(false);
    expect(checkAssertion({ type: "noPii" }, outcome("{{{{")).passed).toBe(true);
  });

  it("validates JSON answers against an inline JSON Schema and reports unsupported keywords", () => {
    const schema = {
      type: "object",
      required: ["component", "props"],
      additionalProperties: false,
      properties: {
        component: { enum: ["form", "table"] },
        props: {
          type: "object",
          properties: { rows: { type: "array", items: { type: "integer", minimum: 0 }, maxItems: 3 } },
        },
      },
    };
    const ok = checkAssertion(
      { type: "jsonSchemaValid", schema },
      outcome('{"component":"table","props":{"rows":[1,2]}}'),
    );
    expect(ok.passed).toBe(true);
    const bad = validateJsonSchema({ component: "chart", props: { rows: [1, -2, 3, 4] }, extra: 1 }, schema);
    expect(bad.errors).toEqual([
      '$.component: must be one of ["form","table"]',
      "$.props.rows: more than 3 items",
      "$.props.rows[1]: below 0",
      '$: unexpected property "extra"',
    ]);
    expect(checkAssertion({ type: "jsonSchemaValid", schema }, outcome("uuuu")).detail).toMatch(/not JSON/);
    expect(checkAssertion({ type: "jsonSchemaValid", schema: { $ref: "#/x" } }, outcome("{}")).detail).toBe(
      "unsupported schema keywords: $ref",
    );
  });
});

describe("runContract", () => {
  const contract = parseContract({
    contract: "t",
    version: "1.0.0",
    thresholds: { minPassRate: 0.5, byTag: { coding: 1, chat: 0 } },
    cases: [
      {
        id: "c1",
        tags: ["coding"],
        conversation: [{ role: "user", content: "x" }],
        mode: "coding",
        assertions: [{ type: "contains", value: "{" }, { type: "regression" }],
      },
      {
        id: "c2",
        tags: ["chat"],
        conversation: [{ role: "user", content: "y" }],
        mode: "missing",
        assertions: [{ type: "contains", value: "c" }],
      },
    ],
  });
  const target = (text: string): ContractTarget => ({
    resolve: (selection) => {
      if (typeof selection === "object" && "pinned" in selection && selection.pinned === "missing")
        return Promise.reject(new Error('Adapter "missing" is not installed'));
      return Promise.resolve({
        routing: {
          mode: "pinned",
          adapters: [{ id: "coding", version: "9", scale: 1 }],
          confidence: 1,
          reason: "",
          latencyMs: 1,
        },
        adapters: [],
      });
    },
    generate: () =>
      Promise.resolve({
        text,
        stopReason: "maxTokens",
        tokens: 4,
        ttftMs: 1,
        durationMs: 2,
        promptTokensEvaluated: 1,
        contextTokens: 1,
        contextSize: 1,
      }),
  });

  it("judges per-tag thresholds, reports cases that cannot run, and compares with the live version", async () => {
    const pass = await runContract(contract, { target: target("{{{{"), baseline: target("{{{{") });
    expect(pass).toMatchObject({ passed: true, failing: ["c2"], passRate: 0.5 });
    expect(pass.cases[1]!.error).toMatch(/not installed/);
    expect(pass.byTag.coding).toMatchObject({ passed: 1, total: 1, ok: true });
    const regressed = await runContract(contract, { target: target("uuuu"), baseline: target("{{{{") });
    expect(regressed.passed).toBe(false);
    expect(regressed.cases[0]!.assertions.find((a) => a.type === "regression")).toMatchObject({
      passed: false,
      detail: "0% of assertions pass, live version 100% (regressed)",
    });
    // No maxRegression: only the per-case rule compares, no paired comparison.
    expect(regressed.comparison).toBeNull();
    expect(regressed.reasons).toEqual([
      "overall: 0% of 2 cases pass, needs 50%",
      "tag coding: 0% of 1 cases pass, needs 100%",
      "scores below the live version on case(s) c1",
    ]);
  });
});
