/**
 * The runner's paired comparison with the live version, on fake targets: each answers a case
 * as a fixed function of its prompt, so which cases pass on live and on the candidate is
 * chosen by the test. (The real engine runs the contract in contract-command.test.ts.)
 */
import { describe, expect, it } from "vitest";
import type { ChatTurn, GenerateOptions } from "../engine/types";
import { parseContract } from "./contract-schema";
import { type ContractTarget, runContract } from "./contract-runner";
import { formatReport } from "./report-table";

const CODE = "```js\nfunction f() {}\n```";
const PROSE = "Just some words.";

/** 20 coding cases and 10 chat cases, 5 points of regression allowed. */
const contract = parseContract({
  contract: "paired",
  version: "2.0.0",
  thresholds: { minPassRate: 0.5, byTag: { coding: 0.5, chat: 0.5 }, maxRegression: 0.05 },
  cases: [
    ...Array.from({ length: 20 }, (_, i) => ({
      id: `coding-${i + 1}`,
      tags: ["coding"],
      conversation: [{ role: "user", content: `code ${i + 1}` }],
      mode: "coding",
      assertions: [{ type: "codeBlock" }, { type: "stopsOnItsOwn" }],
    })),
    ...Array.from({ length: 10 }, (_, i) => ({
      id: `chat-${i + 1}`,
      tags: ["chat"],
      conversation: [{ role: "user", content: `chat ${i + 1}` }],
      mode: "chat",
      assertions: [{ type: "plainText", singleLine: true }],
    })),
  ],
});

interface Fake extends ContractTarget {
  calls: Array<{ history: ChatTurn[]; options: GenerateOptions }>;
}

/**
 * A target answering "code N" with a code block unless N is in `failCoding`, and "chat N" with
 * prose unless N is in `failChat`. `files` names the adapter files it resolves to, per adapter.
 */
function fake(opts: { failCoding?: number[]; failChat?: number[]; files: Record<string, string> }): Fake {
  const calls: Fake["calls"] = [];
  return {
    calls,
    resolve: (selection) => {
      const id = typeof selection === "object" && "pinned" in selection ? selection.pinned : "chat";
      const path = opts.files[id];
      if (!path) return Promise.reject(new Error(`Adapter "${id}" is not installed`));
      return Promise.resolve({
        routing: {
          mode: "pinned",
          adapters: [{ id, version: path, scale: 1 }],
          confidence: 1,
          reason: "",
          latencyMs: 0,
        },
        adapters: [{ path, scale: 1 }],
      });
    },
    generate: (history, options) => {
      calls.push({ history, options });
      const [kind, n] = history.at(-1)!.text.split(" ");
      const failing = (kind === "code" ? opts.failCoding : opts.failChat) ?? [];
      const good = kind === "code" ? CODE : PROSE;
      const text = failing.includes(Number(n)) ? "```\n{}\n```\n{}" : good;
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

const LIVE_FILES = { coding: "live/coding.gguf", chat: "chat.gguf" };
const CANDIDATE_FILES = { coding: "candidate/coding.gguf", chat: "chat.gguf" };

describe("runContract against the live version", () => {
  it("passes a candidate that does better, and reports the cases it fixed", async () => {
    const live = fake({ failCoding: [1, 2, 3, 4], files: LIVE_FILES });
    const candidate = fake({ failCoding: [4], files: CANDIDATE_FILES });
    const report = await runContract(contract, { target: candidate, baseline: live });
    expect(report.passed).toBe(true);
    expect(report.reasons).toEqual([]);
    expect(report.comparison?.byTag.coding).toMatchObject({
      cases: 20,
      livePassed: 16,
      candidatePassed: 19,
      broken: [],
      fixed: ["coding-1", "coding-2", "coding-3"],
      ok: true,
    });
    expect(report.comparison?.byTag.coding?.delta).toBeCloseTo(0.15);
    expect(report.cases.find((c) => c.id === "coding-1")).toMatchObject({
      passed: true,
      change: "fixed",
      live: { passed: false },
    });
    expect(report.cases.find((c) => c.id === "coding-4")).toMatchObject({
      change: "same",
      live: { passed: false },
    });
  });

  it("rejects a candidate worse than live beyond the margin on one tag, naming the tag and the cases", async () => {
    const live = fake({ failCoding: [20], files: LIVE_FILES });
    const candidate = fake({ failCoding: [3, 7, 20], files: CANDIDATE_FILES });
    const report = await runContract(contract, { target: candidate, baseline: live });
    // 85% still clears the 50% minimum: the rejection is the comparison's alone.
    expect(report.byTag.coding).toMatchObject({ passed: 17, total: 20, ok: true });
    expect(report.passed).toBe(false);
    expect(report.comparison?.byTag.coding).toMatchObject({ ok: false, broken: ["coding-3", "coding-7"] });
    expect(report.comparison?.byTag.chat).toMatchObject({ ok: true, delta: 0 });
    expect(report.reasons).toEqual([
      "tag coding regressed: 85% of 20 paired cases pass, live 95% (−10 points, at most 5 points below live allowed); failing now: coding-3, coding-7",
      "overall regressed: 90% of 30 paired cases pass, live 97% (−7 points, at most 5 points below live allowed); failing now: coding-3, coding-7",
    ]);
    expect(report.failing).toEqual(["coding-3", "coding-7", "coding-20"]);
    // The table shows both sides per case, what changed, the rates and the verdict's reasons.
    const table = formatReport(report);
    expect(table).toMatch(/coding-3\s+FAIL\s+pass\s+▼ broken/);
    expect(table).toMatch(/coding-20\s+FAIL\s+FAIL\s/);
    expect(table).toContain(
      "tag coding     17/20 pass (needs 50%); live 19/20 95% → candidate 85%  ✗ regressed",
    );
    expect(table).toContain("  - tag coding regressed: 85% of 20 paired cases pass, live 95%");
  });

  it("passes a candidate within the margin, still listing every case that changed", async () => {
    const live = fake({ failCoding: [5], files: LIVE_FILES });
    const candidate = fake({ failCoding: [9, 12], files: CANDIDATE_FILES });
    const report = await runContract(contract, { target: candidate, baseline: live });
    expect(report.passed).toBe(true);
    expect(report.comparison?.byTag.coding).toMatchObject({
      ok: true,
      broken: ["coding-9", "coding-12"],
      fixed: ["coding-5"],
    });
    expect(report.comparison?.byTag.coding?.delta).toBeCloseTo(-0.05);
    expect(report.comparison?.overall).toMatchObject({
      cases: 30,
      livePassed: 29,
      candidatePassed: 28,
      ok: true,
    });
    const changed = report.cases.filter((c) => c.change !== "same").map((c) => [c.id, c.change]);
    expect(changed).toEqual([
      ["coding-5", "fixed"],
      ["coding-9", "broken"],
      ["coding-12", "broken"],
    ]);
  });

  it("rejects on the overall rate too, and when the candidate breaks another tag", async () => {
    const live = fake({ files: LIVE_FILES });
    const candidate = fake({ failChat: [1], files: { ...CANDIDATE_FILES, chat: "candidate/chat.gguf" } });
    const report = await runContract(contract, { target: candidate, baseline: live });
    expect(report.passed).toBe(false);
    expect(report.reasons).toEqual([
      expect.stringMatching(
        /^tag chat regressed: 90% of 10 paired cases pass, live 100% .*failing now: chat-1$/,
      ),
    ]);
    // One broken case in 30 is 3 points overall: within the margin.
    expect(report.comparison?.overall.ok).toBe(true);
  });

  it("answers a case once when live and candidate resolve it to the same adapter files", async () => {
    const live = fake({ failCoding: [1], files: LIVE_FILES });
    const candidate = fake({ failCoding: [2], files: CANDIDATE_FILES });
    const shared = await runContract(contract, { target: candidate, baseline: live, shareAnswers: true });
    // Chat resolves to the same file on both: 10 live generations saved; coding differs.
    expect(candidate.calls.length).toBe(30);
    expect(live.calls.length).toBe(20);
    expect(shared.cases.find((c) => c.id === "chat-1")?.live).toMatchObject({ shared: true, passed: true });
    expect(shared.cases.find((c) => c.id === "coding-1")).toMatchObject({
      change: "fixed",
      live: { shared: false },
    });
  });

  it("counts a case the live version cannot run as failed there", async () => {
    const live = fake({ files: { chat: "chat.gguf" } });
    const candidate = fake({ files: CANDIDATE_FILES });
    const report = await runContract(contract, { target: candidate, baseline: live });
    expect(report.passed).toBe(true);
    expect(report.cases[0]!.live).toMatchObject({
      passed: false,
      error: 'Adapter "coding" is not installed',
    });
    expect(report.comparison?.byTag.coding).toMatchObject({ livePassed: 0, candidatePassed: 20 });
    expect(formatReport(report)).toContain('live ✗ error: Adapter "coding" is not installed');
  });

  it("runs UI cases in UI mode: the UI system prompt and the catalog grammar", async () => {
    const ui = parseContract({
      contract: "ui",
      version: "1.0.0",
      cases: [
        {
          id: "u",
          conversation: [{ role: "user", content: "code 1" }],
          mode: "coding",
          format: "ui",
          assertions: [{ type: "noPii" }],
        },
        {
          id: "t",
          conversation: [{ role: "user", content: "code 2" }],
          mode: "coding",
          assertions: [{ type: "noPii" }],
        },
      ],
    });
    const target = fake({ files: CANDIDATE_FILES });
    await runContract(ui, { target, systemPrompt: "You are Macaron." });
    const [uiCall, textCall] = target.calls;
    expect(uiCall!.options.jsonSchema).toMatchObject({ properties: { version: { const: 1 } } });
    expect(uiCall!.history[0]!.text).toMatch(/^You are Macaron\.\n\nAnswer with a JSON UI document/);
    expect(textCall!.options.jsonSchema).toBeUndefined();
    expect(textCall!.history[0]).toEqual({ role: "system", text: "You are Macaron." });
  });
});
