/**
 * Self-improvement's prompts and rewards without an engine (the code sandbox is a child process,
 * hence "real"): the generated tasks are answerable
 * (each reference passes its own checks) and disjoint from the default contract's held-out
 * cases; gamed answers — empty, one sentence for every prompt, code that does not run, a tool
 * call with the wrong values — are never rewarded: they fail and are never an SFT target or a
 * DPO chosen side.
 */
import { afterAll, describe, expect, it } from "vitest";
import { checkCase } from "../../../electron/core/contract/check-case";
import type { Contract } from "../../../electron/core/contract/contract-schema";
import { defaultContract } from "../../../electron/core/contract/default-contract";
import { CodeSandbox } from "../../../electron/core/contract/sandbox/sandbox";
import { TASK_DOMAINS } from "../../../electron/core/contract/task-contract";
import { rewardOf } from "./groups";
import { type Sample, scoreSamples, selectTraining } from "./score";
import { assertDisjoint, selfImproveContract, selfImproveTasks } from "./tasks";

const sandbox = new CodeSandbox();
afterAll(() => sandbox.close());

const sample = (caseId: string, k: number, output: string): Sample => ({
  caseId,
  k,
  seed: k,
  output,
  adapterIds: [],
  latencyMs: 0,
  stopReason: "eos",
  error: null,
});

const lastUser = (c: Contract["cases"][number]): string => c.conversation[c.conversation.length - 1]!.content;

describe("self-improvement tasks", () => {
  it("are answerable: every domain's tasks get checks, and each reference passes them", async () => {
    for (const domain of TASK_DOMAINS) {
      const tasks = selfImproveTasks(domain);
      const contract = selfImproveContract(domain, tasks);
      // Nearly every generated task has a check (a chat reply that shares no word with its
      // prompt gives none: left out).
      expect(contract.cases.length, domain).toBeGreaterThan(0.9 * tasks.length);
      expect(new Set(contract.cases.map(lastUser)).size).toBe(contract.cases.length);
      // One wording per subject is enough to show the tests, the values and the terms fit.
      const one = new Map<string, (typeof contract.cases)[number]>();
      for (const c of contract.cases) one.set(c.reference!, c);
      const failed: string[] = [];
      for (const c of one.values()) {
        const r = await checkCase(c, c.reference!, { sandbox });
        if (!r.pass) failed.push(`${c.id} ${lastUser(c)}: ${r.reason}`);
      }
      // Only the redactor's false alarms (a table of book authors holds person names): such a
      // task can never be passed, so it never teaches anything; it costs its samples only.
      expect(failed.filter((f) => !f.includes(": noPii:"))).toEqual([]);
      expect(failed.length, failed.join("\n")).toBeLessThanOrEqual(one.size * 0.05);
    }
  }, 180_000);

  it("never ask a held-out case of the default contract, and a contract that does is refused", () => {
    const heldout = defaultContract();
    for (const domain of TASK_DOMAINS) {
      const contract = selfImproveContract(domain, selfImproveTasks(domain));
      expect(() => assertDisjoint(contract, heldout)).not.toThrow();
    }
    // A task that asks a held-out prompt, and one that holds a held-out subject in a new wording.
    const asked = heldout.cases.find((c) => c.tags.includes("agent") && lastUser(c).includes("budget.csv"))!;
    const leaking = selfImproveContract("agent", [
      { domain: "agent", family: "x", prompt: lastUser(asked), reference: asked.reference! },
    ]);
    expect(() => assertDisjoint(leaking, heldout)).toThrow(/held-out contract case/);
    const subject = selfImproveContract("agent", [
      {
        domain: "agent",
        family: "x",
        prompt: "Use a tool to open the file budget.csv.",
        reference: '{"tool":"open_file","arguments":{"path":"budget.csv"}}',
      },
    ]);
    expect(() => assertDisjoint(subject, heldout)).toThrow(/holds the held-out "budget.csv"/);
  });

  it("differ with the prompt seed and keep to the families asked for", () => {
    const a = selfImproveTasks("agent", { seed: "0", families: ["agent-tools"] });
    const b = selfImproveTasks("agent", { seed: "1", families: ["agent-tools"] });
    expect(a.every((t) => t.family === "agent-tools")).toBe(true);
    expect(a.map((t) => t.prompt)).not.toEqual(b.map((t) => t.prompt));
    expect(new Set(a.map((t) => t.prompt))).toEqual(new Set(b.map((t) => t.prompt)));
  });
});

describe("rewards that cannot be gamed", () => {
  const pick = (domain: (typeof TASK_DOMAINS)[number], n: number, families?: string[]): Contract =>
    selfImproveContract(domain, selfImproveTasks(domain, { families }).slice(0, n));

  it("an answer that echoes the chat prompt, or names its bare subject, fails: reward below a right answer's", async () => {
    const contract = defaultContract();
    const chat = ["chat-01", "chat-02", "chat-03"].map((id) => contract.cases.find((c) => c.id === id)!);
    expect(lastUser(chat[0]!)).toBe("Share your view on hot chocolate, please.");
    const samples = chat.flatMap((c) => [
      sample(c.id, 0, lastUser(c)),
      sample(c.id, 1, c.reference!),
      ...(c.id === "chat-01" ? [sample(c.id, 2, "hot chocolate.")] : []),
    ]);
    const scored = await scoreSamples(contract, samples, { sandbox });
    for (const s of scored) {
      const right = s.k === 1;
      expect(s.pass, `${s.caseId}#${s.k}`).toBe(right);
      if (right) expect(rewardOf(s), `${s.caseId}#${s.k}`).toBe(1);
      else {
        expect(rewardOf(s), `${s.caseId}#${s.k}`).toBeLessThan(1);
        expect(s.reason).toMatch(/^mentions: restates the prompt/);
      }
    }
  });

  it("an empty answer fails and is neither a target nor a chosen side", async () => {
    for (const domain of TASK_DOMAINS) {
      const contract = pick(domain, 2);
      const samples = contract.cases.flatMap((c) => [sample(c.id, 0, ""), sample(c.id, 1, "   \n")]);
      const scored = await scoreSamples(contract, samples, { sandbox });
      expect(
        scored.every((s) => !s.pass && s.reason === "empty answer"),
        domain,
      ).toBe(true);
      const chosen = selectTraining(contract, scored);
      expect(chosen.sft).toEqual([]);
      expect(chosen.dpo).toEqual([]);
      expect(chosen.stats[domain]).toMatchObject({ passed: 0, passShare: 0, sftLines: 0 });
    }
  });

  it("the same answer to every prompt fails, even where it would pass one prompt's checks", async () => {
    // Chat: a sentence naming two topics passes the key-term check of both; as the answer to
    // every prompt it is degenerate. Agent: one tool call answered to every tool prompt.
    const chat = selfImproveContract(
      "chat",
      selfImproveTasks("chat", { families: ["chat-topics"] })
        .filter((t, i, all) => all.findIndex((u) => u.reference === t.reference) === i)
        .slice(0, 3),
    );
    const terms = chat.cases.map((c) =>
      lastUser(c)
        .replace(/[?.!]$/, "")
        .split(" ")
        .slice(-2)
        .join(" "),
    );
    const sentence = `I love ${terms.join(" and ")}.`;
    const right = await checkCase(chat.cases[0]!, sentence, { sandbox });
    expect(right.pass, right.reason).toBe(true);
    const scored = await scoreSamples(
      chat,
      chat.cases.map((c) => sample(c.id, 0, sentence)),
      { sandbox },
    );
    expect(scored.map((s) => s.pass)).toEqual([false, false, false]);
    expect(scored[0]!.reason).toMatch(/^distinct: degenerate/);
    expect(selectTraining(chat, scored).sft).toEqual([]);

    const tools = pick("agent", 4, ["agent-tools"]);
    const call = tools.cases[0]!.reference!;
    const constant = await scoreSamples(
      tools,
      tools.cases.map((c) => sample(c.id, 0, call)),
      { sandbox },
    );
    // Rewarded only where it is the right call: the task it belongs to.
    expect(constant.map((s) => s.pass)).toEqual([true, false, false, false]);
  });

  it("a code block that does not run fails; the passing sample is the target and the pair's chosen side", async () => {
    const contract = pick("coding", 3);
    const samples: Sample[] = [];
    for (const c of contract.cases) {
      const lang = c.reference!.includes("```python") ? "python" : "js";
      const broken =
        lang === "python"
          ? "Here is a Python function:\n```python\ndef f(x:\n    return x\n```"
          : "Here is a JavaScript function:\n```js\nfunction f(x) {\n  return x +;\n}\n```";
      const wrong =
        lang === "python"
          ? "Here is a Python function:\n```python\ndef f(*a):\n    return None\n```"
          : "Here is a JavaScript function:\n```js\nfunction f() {\n  return null;\n}\n```";
      samples.push(sample(c.id, 0, broken), sample(c.id, 1, wrong), sample(c.id, 2, c.reference!));
    }
    const scored = await scoreSamples(contract, samples, { sandbox });
    for (const s of scored) expect(s.pass, `${s.caseId}#${s.k}: ${s.reason}`).toBe(s.k === 2);
    expect(scored.filter((s) => s.k === 0).every((s) => /unitTests/.test(s.reason))).toBe(true);
    const chosen = selectTraining(contract, scored);
    expect(chosen.sft.map((l) => l.messages[1]!.content)).toEqual(contract.cases.map((c) => c.reference));
    expect(chosen.dpo).toHaveLength(3);
    for (const [i, p] of chosen.dpo.entries()) {
      expect(p.chosen[0]!.content).toBe(contract.cases[i]!.reference);
      expect(samples.filter((s) => s.k !== 2).map((s) => s.output)).toContain(p.rejected[0]!.content);
    }
    expect(chosen.stats.coding).toMatchObject({
      prompts: 3,
      samples: 9,
      passed: 3,
      sftLines: 3,
      dpoPairs: 3,
    });
    expect(chosen.stats.coding!.passShare).toBeCloseTo(1 / 3);
  });

  it("a tool call with the wrong values or an invalid UI document fails", async () => {
    const tools = pick("agent", 1, ["agent-tools"]);
    const ref = JSON.parse(tools.cases[0]!.reference!) as {
      tool: string;
      arguments: Record<string, unknown>;
    };
    const wrongValues = JSON.stringify({
      tool: ref.tool,
      arguments: Object.fromEntries(Object.keys(ref.arguments).map((k) => [k, "somewhere else"])),
    });
    const t = await scoreSamples(tools, [sample(tools.cases[0]!.id, 0, wrongValues)], { sandbox });
    expect(t[0]!.pass).toBe(false);
    expect(t[0]!.reason).toMatch(/toolCall/);

    const ui = pick("ui", 1);
    const u = await scoreSamples(
      ui,
      [sample(ui.cases[0]!.id, 0, '{"version":1,"blocks":[{"kind":"ui","root":{"type":"Nope"}}]}')],
      { sandbox },
    );
    expect(u[0]!.pass).toBe(false);
    expect(selectTraining(ui, u).sft).toEqual([]);
  });
});
