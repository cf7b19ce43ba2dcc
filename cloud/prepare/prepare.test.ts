import { describe, expect, it } from "vitest";
import { DROP_REASONS, ExportReport } from "./report";
import { prepareExport, type PrepareOptions } from "./prepare";
import type { StoredItem } from "../store";
import { withCustomSystem, type FeedbackItem } from "../../common/feedback-protocol";
import { ask, atSignScan, bad, corrected, good, regenerated, row } from "../../testing/cloud/prepare";
import { TEST_VERSIONS } from "../../testing/cloud/items";

type Msg = { role: string; content: string };
type Sft = { messages: Msg[] };
type Pair = { prompt: Msg[]; chosen: Msg[]; rejected: Msg[] };

function run(items: StoredItem[], type: "sft" | "preference" = "sft", extra: Partial<PrepareOptions> = {}) {
  const out = prepareExport({ domain: "chat", items }, { type, scan: atSignScan, heldoutShare: 0, ...extra });
  const parse = <T>(lines: string[]) => lines.map((l) => JSON.parse(l) as T);
  return { ...out, train: out.lines.train, parse };
}
const targets = (lines: string[]) => lines.map((l) => (JSON.parse(l) as Sft).messages.at(-1)!.content);

describe("SFT targets", () => {
  it("come only from good ratings and corrections; the correction replaces the answer", () => {
    const r = run([
      good("Capital of France?", "Paris."),
      bad("Capital of Spain?", "Lisbon."),
      corrected("Capital of Italy?", "Milan.", "Rome."),
      row({ kind: "copy", rating: null, prompt: ask("Copy me"), response: "copied" }),
      row({
        kind: "genui",
        rating: null,
        prompt: ask("Form"),
        response: "form",
        interaction: { outcome: "completed" },
      }),
      row({
        kind: "router_override",
        rating: null,
        prompt: ask("Code"),
        response: "code",
        interaction: { chosen: "coding" },
      }),
      row({ consent: "ratings", prompt: null, response: null }),
    ]);
    expect(targets(r.train)).toEqual(["Paris.", "Rome."]);
    expect(r.report).toMatchObject({
      items: 7,
      candidates: 2,
      written: 2,
      byKind: { rating: 3, correction: 1, copy: 1, genui: 1, router_override: 1 },
    });
  });

  it("never use a thumbs-down answer: a corrected one gives the correction only", () => {
    const r = run([bad("2+2?", "5"), corrected("2+2?", "5", "4")]);
    expect(r.parse<Sft>(r.train)).toEqual([
      {
        messages: [
          { role: "user", content: "2+2?" },
          { role: "assistant", content: "4" },
        ],
      },
    ]);
  });

  it("drop an answer rated good that was also rated bad (on that prompt), in any domain", () => {
    const otherDomain = bad("Capital?", "Bonn", []);
    const r = prepareExport(
      {
        domain: "chat",
        items: [good("Capital?", "Berlin"), good("Capital?", "bonn!"), good("Other?", "Bonn")],
        ratings: [otherDomain],
      },
      { type: "sft", scan: atSignScan, heldoutShare: 0 },
    );
    // "bonn!" is "Bonn" after normalization; the same answer to another prompt is fine.
    expect(targets(r.lines.train)).toEqual(["Berlin", "Bonn"]);
    expect(r.report.dropped.thumbsDown).toBe(1);
  });

  it("drop a conversation whose history holds a thumbs-down answer (trainers learn every assistant turn)", () => {
    const history = [
      { role: "user" as const, text: "Hi" },
      { role: "assistant" as const, text: "Go away." },
    ];
    const r = run([bad("Hi", "Go away."), good("Why?", "Sorry, how can I help?", history)]);
    expect(r.train).toEqual([]);
    expect(r.report.dropped.thumbsDown).toBe(1);
  });
});

describe("preference pairs", () => {
  it("come from regenerations, corrections and good/bad ratings on one prompt", () => {
    const r = run(
      [
        regenerated("Hi", "Go away.", "Hello! How can I help?"),
        corrected("Capital of Italy?", "Milan.", "Rome."),
        good("2+2?", "4"),
        bad("2+2?", "5"),
        bad("3+3?", "7"),
      ],
      "preference",
    );
    const pairs = r
      .parse<Pair>(r.train)
      .map((p) => [p.prompt.at(-1)!.content, p.chosen[0]!.content, p.rejected[0]!.content]);
    expect(pairs).toEqual([
      ["Hi", "Hello! How can I help?", "Go away."],
      ["Capital of Italy?", "Rome.", "Milan."],
      ["2+2?", "4", "5"],
    ]);
  });

  it("never choose a thumbs-down answer, and skip pairs of one answer", () => {
    const r = run(
      [
        regenerated("Hi", "Go away.", "Leave."),
        bad("Hi", "Leave."),
        regenerated("Yo", "Hey.", "hey"),
        corrected("Q?", "", "A"),
        good("2+2?", "4"),
        bad("2+2?", "4."),
      ],
      "preference",
    );
    expect(r.train).toEqual([]);
    expect(r.report.dropped).toMatchObject({ thumbsDown: 1, sameAnswer: 2, malformed: 1 });
  });
});

describe("filters", () => {
  it("count malformed rows, consent, PII, exact and near-duplicates", () => {
    const r = run([
      { installId: "x", receivedAt: 0, json: "{oops" },
      row({ consent: "ratings", prompt: ask("leak"), response: "text without consent" }),
      good("mail a@b.example?", "ok"),
      good("Capital of France?", "Paris."),
      good("Capital of France?", "Paris."),
      good("capital of france", "PARIS"),
      good(
        "Sort a list in Python?",
        "Use sorted(items) for a new list, or items.sort() to sort the list in place.",
      ),
      good(
        "Sort a list in Python?",
        "Use sorted(items) for a new list or items.sort() to sort the list in place!",
      ),
    ]);
    expect(targets(r.train)).toEqual([
      "Paris.",
      "Use sorted(items) for a new list, or items.sort() to sort the list in place.",
    ]);
    expect(r.report.dropped).toEqual({
      malformed: 1,
      consent: 1,
      pii: 1,
      thumbsDown: 0,
      toolFailed: 0,
      followUpCorrected: 0,
      customSystem: 0,
      sameAnswer: 0,
      injection: 0,
      truncated: 0,
      tooLong: 0,
      duplicate: 1,
      nearDuplicate: 2,
      conflict: 0,
      installCap: 0,
    });
    expect(r.report.byKind).toEqual({ unknown: 1, rating: 7 });
  });

  it("drop an answer made under the conversation's own system prompt (lines carry the app's)", () => {
    const custom = row({
      prompt: ask("Capital of France?"),
      response: "Arr, Paris it be.",
      versions: { ...TEST_VERSIONS, harnessVersion: withCustomSystem("h1", true) },
    });
    const r = run([custom, good("Capital of Spain?", "Madrid.")]);
    expect(targets(r.train)).toEqual(["Madrid."]);
    expect(r.report.dropped.customSystem).toBe(1);
    // In a preference pair too: either side under a custom prompt drops the pair.
    const pair = regenerated("q", "worse", "better");
    const item = JSON.parse(pair.json) as FeedbackItem;
    item.versions.harnessVersion = withCustomSystem(item.versions.harnessVersion, true);
    const p = run([{ ...pair, json: JSON.stringify(item) }], "preference");
    expect(p.train).toEqual([]);
    expect(p.report.dropped.customSystem).toBe(1);
  });

  it("drop lines over maxTokens (3 bytes a token + 8 per message)", () => {
    // "q" = 1 token + 8, the answer ceil(30/3) = 10 + 8: 27 tokens.
    const items = [good("q", "a".repeat(30))];
    expect(run(items, "sft", { maxTokens: 27 }).train).toHaveLength(1);
    const over = run(items, "sft", { maxTokens: 26 });
    expect(over.train).toEqual([]);
    expect(over.report.dropped.tooLong).toBe(1);
    // A byte-level base (1 byte a token): the same line is 47 tokens.
    expect(run(items, "sft", { maxTokens: 46, bytesPerToken: 1 }).report.dropped.tooLong).toBe(1);
    // A preference line counts the prompt with the longer of its two answers.
    const pair = [regenerated("q", "b".repeat(60), "a".repeat(30))];
    expect(run(pair, "preference", { maxTokens: 36 }).report.dropped.tooLong).toBe(1);
    expect(run(pair, "preference", { maxTokens: 37 }).train).toHaveLength(1);
  });
});

describe("report", () => {
  it("accounts for every candidate and is valid against its schema", () => {
    const items = [
      good("a?", "1"),
      good("b?", "2"),
      good("b?", "2"),
      bad("c?", "3"),
      corrected("c?", "3", "4"),
      good("d@x?", "5"),
      regenerated("e?", "6", "7"),
    ];
    for (const type of ["sft", "preference"] as const) {
      const { report } = run(items, type, { heldoutShare: 0.5, split: "heldout" });
      expect(ExportReport.parse(report)).toEqual(report);
      const dropped = DROP_REASONS.reduce((s, r) => s + report.dropped[r], 0);
      expect(report.candidates).toBe(dropped + report.splits.train + report.splits.heldout);
      expect(report.written).toBe(report.splits.heldout);
      expect(report.options).toEqual({
        maxTokens: 4096,
        heldoutShare: 0.5,
        bytesPerToken: 3,
        nearDuplicateThreshold: 0.8,
        shingleSize: 5,
        maxInstallShare: 0.25,
      });
    }
  });
});
