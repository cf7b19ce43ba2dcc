/**
 * Contract v3 judges right answers, not only their format: the bundled default contract run on
 * fake answer sets (a target that answers each prompt from a table). The reference answers
 * pass every task case (each case is answerable); a constant answer, and answers swapped
 * between topics in the right format, are rejected, naming the failing cases. Coding cases run
 * their unit tests in the real sandbox (Python through Pyodide).
 */
import { afterAll, describe, expect, it } from "vitest";
import type { GenerateResult } from "../engine/types";
import { checkCase } from "./check-case";
import type { Contract, ContractCase } from "./contract-schema";
import { type ContractTarget, runContract } from "./contract-runner";
import { defaultContract } from "./default-contract";
import { formatReport } from "./report-table";
import { CodeSandbox } from "./sandbox/sandbox";

const sandbox = new CodeSandbox({ timeoutMs: 5_000 });
afterAll(() => sandbox.close());

const full = defaultContract();
/** The task cases (router cases need the real router; contract-command.test.ts runs those). */
const tasks: Contract = { ...full, cases: full.cases.filter((c) => !c.tags.includes("router")) };
const promptOf = (c: ContractCase): string => c.conversation[c.conversation.length - 1]!.content;
const ref = (c: ContractCase): string => c.reference!;

/** A target that answers a prompt from `answers` (pinned to the case's adapter). */
function answering(answers: Map<string, string>, version = "1"): ContractTarget {
  return {
    resolve: (selection) => {
      const id = typeof selection === "object" && "pinned" in selection ? selection.pinned : "chat";
      return Promise.resolve({
        routing: {
          mode: "pinned",
          adapters: [{ id, version, scale: 1 }],
          confidence: 1,
          reason: "",
          latencyMs: 0,
        },
        adapters: [{ path: `/adapters/${id}-${version}.gguf`, scale: 1 }],
      });
    },
    generate: (history) => {
      const text = answers.get(history.at(-1)!.text) ?? "";
      const result: GenerateResult = {
        text,
        stopReason: "eos",
        tokens: text.length,
        ttftMs: 1,
        durationMs: 1,
        promptTokensEvaluated: 1,
        contextTokens: 1,
        contextSize: 4096,
      };
      return Promise.resolve(result);
    },
  };
}

const byDomain = (domain: string): ContractCase[] => tasks.cases.filter((c) => c.tags.includes(domain));
const referenceAnswers = (): Map<string, string> => new Map(tasks.cases.map((c) => [promptOf(c), ref(c)]));

/** Answers of the same format: a plan or a tool call, a UI component, a code language. */
const formatOf = (c: ContractCase): string =>
  JSON.stringify(
    c.assertions[0]!.type === "toolCall"
      ? "toolCall"
      : c.assertions[0]!.type === "mentions"
        ? ""
        : c.assertions[0],
  );

/**
 * Each case answered with the reference of the next case of its domain, in the same format,
 * that asks something else: answers swapped between topics.
 */
function swapped(domain: string): Map<string, string> {
  const answers = referenceAnswers();
  const list = byDomain(domain);
  list.forEach((c, i) => {
    for (let k = 1; k < list.length; k++) {
      const other = list[(i + k) % list.length]!;
      if (ref(other) !== ref(c) && formatOf(other) === formatOf(c)) {
        answers.set(promptOf(c), ref(other));
        break;
      }
    }
  });
  return answers;
}

describe("contract v3 on answer sets", () => {
  it("is version 3 and every task case checks correctness, not only format", () => {
    expect(full.version).toBe("3.0.0");
    expect(full.distinctAnswers).toBe(true);
    const correctness: Record<string, string[]> = {
      chat: ["mentions"],
      coding: ["unitTests"],
      agent: ["mentions", "toolCall"],
      ui: ["genuiContains"],
    };
    for (const c of tasks.cases) {
      const types = c.assertions.map((a) => a.type);
      const domain = c.tags[0]!;
      expect(
        correctness[domain]!.some((t) => types.includes(t as never)),
        `${c.id} has no correctness check`,
      ).toBe(true);
      if (domain === "agent" && types.includes("toolCall")) {
        const call = c.assertions.find((a) => a.type === "toolCall");
        expect(call && "values" in call && call.values, `${c.id} checks no argument values`).toBeTruthy();
      }
    }
  });

  it("passes the reference answers: every case is answerable", async () => {
    const report = await runContract(tasks, { target: answering(referenceAnswers()), sandbox });
    expect(report.failing, formatReport(report)).toEqual([]);
    expect(report.passed).toBe(true);
    // Python loads once per sandbox (~3 s on a quiet machine, far more on a busy one).
  }, 300_000);

  it("rejects an adapter that answers every chat prompt with one fixed sentence", async () => {
    const answers = referenceAnswers();
    for (const c of byDomain("chat")) answers.set(promptOf(c), "Hello! It is lovely to chat with you today.");
    const report = await runContract(tasks, { target: answering(answers), sandbox });
    expect(report.passed).toBe(false);
    const chat = report.cases.filter((c) => c.tags.includes("chat"));
    for (const c of chat) {
      expect(c.passed, c.id).toBe(false);
      // Degeneracy fails it whatever else; the key content check fails it too.
      expect(c.assertions.find((a) => a.type === "distinct")).toMatchObject({ passed: false });
      expect(c.assertions.find((a) => a.type === "mentions")).toMatchObject({ passed: false });
    }
    expect(report.byTag.chat).toMatchObject({ passed: 0 });
    // Rejected even with no floor and nothing live to compare with: the answers are degenerate.
    expect(report.reasons.join("\n")).toMatch(
      /tag chat: 36 of 36 answers are the same, or nearly, as the answer to a different question \(degenerate\), at most 50% allowed/,
    );
  });

  it("rejects one fixed, well-formed function given for every coding prompt", async () => {
    const answers = referenceAnswers();
    const fixed = ref(byDomain("coding").find((c) => ref(c).includes("def square"))!);
    for (const c of byDomain("coding")) answers.set(promptOf(c), fixed);
    const report = await runContract(tasks, { target: answering(answers), sandbox });
    const coding = report.cases.filter((c) => c.tags.includes("coding"));
    // The square cases in Python pass their tests, but give the same answer as every other case.
    for (const c of coding) expect(c.passed, c.id).toBe(false);
    expect(report.passed).toBe(false);
  });

  it.each(["chat", "coding", "agent", "ui"])(
    "rejects %s answers swapped between topics in the right format, naming the failing cases",
    async (domain) => {
      const live = answering(referenceAnswers(), "live");
      const report = await runContract(tasks, {
        target: answering(swapped(domain), "candidate"),
        baseline: live,
        candidate: { adapterId: domain, version: "candidate" },
        sandbox,
      });
      const cases = report.cases.filter((c) => c.tags.includes(domain));
      const failing = cases.filter((c) => !c.passed).map((c) => c.id);
      // Every swapped answer is wrong (the format checks alone would pass them).
      expect(failing).toEqual(cases.map((c) => c.id));
      for (const c of cases) {
        const format = c.assertions.filter((a) =>
          ["plainText", "codeBlock", "numberedPlan", "genuiDocument", "maxChars", "stopsOnItsOwn"].includes(
            a.type,
          ),
        );
        expect(
          format.every((a) => a.passed),
          `${c.id}: ${JSON.stringify(format)}`,
        ).toBe(true);
        expect(c.live?.passed).toBe(true);
        expect(c.live?.reason).toMatch(/^passed/);
        expect(c.change).toBe("broken");
        expect(c.reason).toMatch(/^(mentions|unitTests|toolCall|genuiContains|distinct): /);
      }
      expect(report.passed).toBe(false);
      const why = report.reasons.join("\n");
      expect(why).toContain(`tag ${domain} regressed`);
      for (const id of failing) expect(why).toContain(id);
      // The table shows each case's live and candidate verdict with its reason.
      const table = formatReport(report);
      expect(table).toMatch(new RegExp(`${failing[0]}\\s+FAIL\\s+pass\\s+▼ broken`));
      expect(table).toContain(cases[0]!.reason);
    },
  );
});

describe("checkCase (the case check API suites share)", () => {
  it("gives pass and a reason for one answer", async () => {
    const tool = tasks.cases.find((c) => ref(c).startsWith('{"tool":"get_weather"'))!;
    const right = await checkCase(tool, ref(tool), { sandbox });
    expect(right.pass).toBe(true);
    expect(right.reason).toMatch(/^passed: toolCall: calls get_weather with the expected city/);
    const wrongCity = ref(tool).replace(/"city":"[^"]+"/, '"city":"Atlantis"');
    const wrong = await checkCase(tool, wrongCity, { sandbox });
    expect(wrong.pass).toBe(false);
    expect(wrong.reason).toMatch(/^toolCall: get_weather with city "Atlantis", expected "(Oslo|Lisbon)"$/);
    const code = tasks.cases.find((c) => c.tags.includes("coding") && ref(c).includes("def subtract"))!;
    expect(await checkCase(code, ref(code).replace("a - b", "b - a"), { sandbox })).toMatchObject({
      pass: false,
      reason: "unitTests: failed: subtract(10, 4) returned -6, expected 6 (0/3 tests)",
    });
  });
});

describe("an answer that echoes its prompt", () => {
  // 21 of the 36 UI cases passed with every label the prompt; chat-01 with its prompt or "hot chocolate.".
  const chat = ["chat-01", "chat-02", "chat-03"].map((id) => tasks.cases.find((c) => c.id === id)!);

  it("fails a chat case: the prompt echoed, or its bare subject", async () => {
    expect(promptOf(chat[0]!)).toBe("Share your view on hot chocolate, please.");
    for (const c of chat) {
      const echo = await checkCase(c, promptOf(c), { sandbox });
      expect(echo.pass, c.id).toBe(false);
      expect(echo.reason, c.id).toMatch(
        /^mentions: restates the prompt \(100% of its words are the prompt's\)/,
      );
    }
    const bare = await checkCase(chat[0]!, "hot chocolate.", { sandbox });
    expect(bare).toMatchObject({ pass: false });
    expect(bare.reason).toMatch(/^mentions: restates the prompt/);
    // The subject with a word of its own is still not an answer: it adds 1 content word, needs 2.
    expect((await checkCase(chat[0]!, "Hot chocolate, yum.", { sandbox })).reason).toMatch(
      /^mentions: adds 1 content word to the prompt \(yum\), needs 2/,
    );
  });

  it("fails a plan that numbers its prompt", async () => {
    for (const c of tasks.cases.filter((x) => x.tags.includes("agent") && /^1\./.test(ref(x)))) {
      const p = promptOf(c);
      const echo = await checkCase(c, `1. ${p}\n2. ${p}\n3. ${p}`, { sandbox });
      expect(echo.pass, c.id).toBe(false);
    }
  });

  it("fails a UI document that copies the prompt into its labels", async () => {
    const ui = tasks.cases.filter((c) => c.tags.includes("ui"));
    expect(ui.length).toBeGreaterThan(30);
    const TEXT = new Set(["label", "title", "submitLabel", "caption", "text", "placeholder"]);
    for (const c of ui) {
      // The reference document with each label replaced by the whole prompt.
      const copy = (v: unknown): unknown =>
        Array.isArray(v)
          ? v.map(copy)
          : v && typeof v === "object"
            ? Object.fromEntries(
                Object.entries(v).map(([k, x]) => [
                  k,
                  typeof x === "string" && TEXT.has(k) ? promptOf(c) : copy(x),
                ]),
              )
            : v;
      const echo = await checkCase(c, JSON.stringify(copy(JSON.parse(ref(c)))), { sandbox });
      expect(echo.pass, c.id).toBe(false);
      // (A long prompt copied into every label may fail maxChars first.)
      expect(echo.assertions.find((a) => a.type === "genuiContains")?.detail, c.id).toMatch(
        /^restates the prompt in a text of the document: /,
      );
      expect((await checkCase(c, ref(c), { sandbox })).pass, c.id).toBe(true);
    }
  });

  it("every chat and plan reference passes while adding to its prompt", async () => {
    const texts = tasks.cases.filter((c) => c.tags.includes("chat") || /^1\./.test(ref(c)));
    expect(texts.length).toBeGreaterThan(50);
    for (const c of texts) {
      const check = await checkCase(c, ref(c), { sandbox });
      expect(check.reason, c.id).toMatch(/^passed: mentions: .* adds \d+ content words to the prompt$/);
    }
  });
});
