/**
 * The default contract is the task contract of the held-out seed files (committed in sync),
 * its thresholds are the stated ones, and the held-out reference answers pass it: the checks
 * measure the formats the specialists are trained on, not something else.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseContract } from "./contract-schema";
import { type ContractTarget, runContract } from "./contract-runner";
import { defaultContract } from "./default-contract";
import { buildTaskContract, type HeldoutExample, TASK_DOMAINS, type TaskDomain } from "./task-contract";

const ROOT = resolve(import.meta.dirname, "../../..");
const heldout = Object.fromEntries(
  TASK_DOMAINS.map((d) => [
    d,
    readFileSync(join(ROOT, "resources/training", `${d}.heldout.jsonl`), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as HeldoutExample),
  ]),
) as Record<TaskDomain, HeldoutExample[]>;

/** Answers every held-out prompt with its reference answer; the router knows each prompt's domain. */
function referenceTarget(): ContractTarget {
  const byPrompt = new Map<string, { domain: TaskDomain; answer: string }>();
  for (const domain of TASK_DOMAINS)
    for (const e of heldout[domain])
      byPrompt.set(e.messages[0]!.content, { domain, answer: e.messages[1]!.content });
  return {
    resolve: (selection, text) => {
      const id =
        typeof selection === "object" && "pinned" in selection
          ? selection.pinned
          : byPrompt.get(text)!.domain;
      return Promise.resolve({
        routing: {
          mode: "pinned",
          adapters: [{ id, version: "1.0.0", scale: 1 }],
          confidence: 1,
          reason: "",
          latencyMs: 0,
        },
        adapters: [{ path: `${id}.gguf`, scale: 1 }],
      });
    },
    generate: (history) => {
      const text = byPrompt.get(history.at(-1)!.text)!.answer;
      return Promise.resolve({
        text,
        stopReason: "eos",
        tokens: text.length,
        ttftMs: 1,
        durationMs: 1,
        promptTokensEvaluated: 1,
        contextTokens: 1,
        contextSize: 4096,
      });
    },
  };
}

describe("the default contract", () => {
  it("is generated from the held-out seed files (npm run seed-data) and valid", () => {
    const committed = JSON.parse(
      readFileSync(join(ROOT, "resources/contracts/default.json"), "utf8"),
    ) as unknown;
    expect(committed, "resources/contracts/default.json is stale: npm run seed-data").toEqual(
      buildTaskContract(heldout),
    );
    expect(parseContract(committed)).toEqual(defaultContract());
  });

  it("has dozens of held-out cases per domain pinned to its adapter, router cases and the stated thresholds", () => {
    const c = defaultContract();
    expect(c).toMatchObject({ contract: "macaron-default", version: "3.0.0" });
    expect(c.thresholds).toEqual({
      minPassRate: 0,
      byTag: { chat: 0, coding: 0, agent: 0, ui: 0, router: 0.2 },
      maxRegression: 0.05,
      maxDegenerate: 0.5,
    });
    for (const domain of TASK_DOMAINS) {
      const cases = c.cases.filter((k) => k.tags.includes(domain));
      expect(cases.length).toBe(heldout[domain].length);
      expect(cases.length).toBeGreaterThanOrEqual(30);
      for (const k of cases) {
        expect(k.mode).toBe(domain);
        expect(k.tags).toEqual([domain]);
        expect(k.assertions.map((a) => a.type)).toEqual(expect.arrayContaining(["stopsOnItsOwn", "noPii"]));
        // UI cases answer in UI mode, like the app's UI specialist turns.
        expect(k.format).toBe(domain === "ui" ? "ui" : undefined);
      }
    }
    const agentChecks = c.cases.filter((k) => k.mode === "agent").map((k) => k.assertions[0]!.type);
    expect(new Set(agentChecks)).toEqual(new Set(["numberedPlan", "toolCall"]));
    const router = c.cases.filter((k) => k.tags.includes("router"));
    expect(router.length).toBe(16);
    for (const k of router) expect(k.mode).toBe("auto");
    expect(router.map((k) => k.assertions[0])).toEqual(
      expect.arrayContaining(TASK_DOMAINS.map((adapter) => ({ type: "routesTo", adapter }))),
    );
  });

  it("is passed by the held-out reference answers (and failed by answers in another domain's format)", async () => {
    const contract = defaultContract();
    const report = await runContract(contract, { target: referenceTarget(), baseline: referenceTarget() });
    expect(report.failing).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.comparison?.overall).toMatchObject({ cases: contract.cases.length, delta: 0 });

    // Every domain's reference answers fail every other domain's format checks.
    for (const domain of TASK_DOMAINS) {
      const other = TASK_DOMAINS[(TASK_DOMAINS.indexOf(domain) + 1) % TASK_DOMAINS.length]!;
      const swapped = {
        ...heldout,
        [domain]: heldout[domain].map((e, i) => {
          const from = heldout[other][i % heldout[other].length]!;
          return { messages: [e.messages[0]!, from.messages[1]!] };
        }),
      };
      const byPrompt = new Map(swapped[domain].map((e) => [e.messages[0]!.content, e.messages[1]!.content]));
      const target = referenceTarget();
      const wrong: ContractTarget = {
        resolve: (selection, text) => target.resolve(selection, text),
        generate: async (history, options) => {
          const r = await target.generate(history, options);
          return { ...r, text: byPrompt.get(history.at(-1)!.text) ?? r.text };
        },
      };
      const r = await runContract(contract, { target: wrong });
      expect(r.byTag[domain], `${other} answers to ${domain} prompts`).toMatchObject({ passed: 0 });
    }
    // Six contract runs, the coding cases' tests in the sandbox (Python loads once).
  }, 300_000);
});
