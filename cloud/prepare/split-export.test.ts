import fc from "fast-check";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { FeedbackItem } from "../../common/feedback-protocol";
import type { StoredItem } from "../store";
import { lineTexts, type Line } from "./candidates";
import { answerKey, promptKey, type Message } from "./normalize";
import { prepareExport } from "./prepare";
import { DROP_REASONS } from "./report";
import { splitOf, splitPosition } from "./split";
import { ask, atSignScan, good, regenerated, row } from "../../testing/cloud/prepare";

/** The test's lines are text conversations (no tool calls). */
const textMessages = (line: Line & { messages: unknown }): Message[] => line.messages as Message[];
const promptOf = (line: Line): Message[] =>
  "messages" in line ? textMessages(line).slice(0, -1) : line.prompt;
const keysOf = (lines: string[]) => lines.map((l) => promptKey(promptOf(JSON.parse(l) as Line)));

describe("held-out split of an export", () => {
  it("sends a prompt to one side for both types and whatever else is exported", () => {
    // Prompts fold by their own text: these differ in more than a number.
    const questions = Array.from(
      { length: 40 },
      (_, i) => `Question ${createHash("sha256").update(String(i)).digest("hex").slice(0, 12)}?`,
    );
    const sft = prepareExport(
      { domain: "chat", items: questions.map((q) => good(q, `Answer to ${q}`)) },
      { type: "sft", scan: atSignScan },
    );
    const pref = prepareExport(
      { domain: "chat", items: questions.slice(10).map((q) => regenerated(q, "No.", `Here: ${q}`)) },
      { type: "preference", scan: atSignScan },
    );
    for (const out of [sft, pref]) {
      expect(out.lines.heldout.length).toBeGreaterThan(0);
      for (const side of ["train", "heldout"] as const)
        for (const k of keysOf(out.lines[side])) expect(splitOf(k, 0.1)).toBe(side);
    }
    expect(sft.report.splits.train + sft.report.splits.heldout).toBe(40);
  });

  it("holds out a near-duplicate's kept line and every line of its prompt when the folded one hashes heldout", () => {
    const answer = "Use sorted(items) for a new list, or items.sort() to sort the list in place.";
    const pos = (q: string) => splitPosition(promptKey([{ role: "user", content: q }]));
    // p1 (kept, first) would train alone, p2 (its near-duplicate) is held out at this share.
    const [p2, p1] = ["How do I sort a list in Python?", "How do I sort a list in Python 3?"].sort(
      (a, b) => pos(a) - pos(b),
    ) as [string, string];
    const share = (pos(p1) + pos(p2)) / 2;
    // Any prompt the hash trains at this share, to show the rest still trains.
    const other = Array.from({ length: 50 }, (_, i) => `Other question ${i}?`).find((q) => pos(q) >= share)!;
    const out = prepareExport(
      {
        domain: "chat",
        items: [
          good(p1, answer),
          good(p2, answer),
          good(p1, "Call list.sort(); it returns None."),
          good(other, "Yes."),
        ],
      },
      { type: "sft", scan: atSignScan, heldoutShare: share },
    );
    // One prompt cluster (p1, p2): the answer given twice wins, the other is outvoted.
    expect(out.report.dropped).toMatchObject({ nearDuplicate: 1, conflict: 1 });
    const first = (lines: string[]) =>
      lines.map((l) => (JSON.parse(l) as { messages: Message[] }).messages[0]!.content);
    expect(first(out.lines.heldout)).toEqual([p1]);
    expect(first(out.lines.train)).toEqual([other]);
  });
});

// Small pools, so prompts, answers, ratings and duplicates collide often.
const QUESTIONS = [
  "Capital of France?",
  "capital of france",
  "2+2?",
  "Sort a list?",
  "Hi",
  "mail a@b.example",
];
const ANSWERS = ["Paris.", "paris", "Lyon", "4", "5", "sorted(x)", "Hello!", "Go away."];
const text = fc.constantFrom(...ANSWERS);
const question = fc.constantFrom(...QUESTIONS);
const itemArb: fc.Arbitrary<Partial<FeedbackItem>> = fc
  .oneof(
    fc.record({
      kind: fc.constant("rating" as const),
      rating: fc.constantFrom("good" as const, "bad" as const),
      q: question,
      response: text,
    }),
    fc.record({
      kind: fc.constant("correction" as const),
      rating: fc.constant(null),
      q: question,
      response: text,
      correction: text,
    }),
    fc.record({
      kind: fc.constant("regeneration" as const),
      rating: fc.constant(null),
      q: question,
      rejected: text,
      chosen: text,
    }),
    fc.record({ kind: fc.constant("copy" as const), rating: fc.constant(null), q: question, response: text }),
  )
  .map(({ q, ...rest }) => ({ ...rest, prompt: ask(q) }));
// Sometimes after an earlier exchange, whose answer may be one someone rated bad.
const withHistory = fc.tuple(itemArb, fc.option(fc.tuple(question, text), { freq: 3 })).map(([item, h]) =>
  h
    ? {
        ...item,
        prompt: [
          { role: "user" as const, text: h[0] },
          { role: "assistant" as const, text: h[1] },
          ...item.prompt!,
        ],
      }
    : item,
);
const rowsArb = fc.array(withHistory, { maxLength: 30 }).map((items) => items.map((i) => row(i)));

function badKeys(rows: StoredItem[]): Set<string> {
  const keys = new Set<string>();
  for (const r of rows) {
    const item = JSON.parse(r.json) as FeedbackItem;
    if (item.kind === "rating" && item.rating === "bad")
      keys.add(
        answerKey(
          (item.prompt ?? []).map((t) => ({ role: t.role, content: t.text })),
          item.response!,
        ),
      );
  }
  return keys;
}

describe("properties of every export", () => {
  it("no thumbs-down answer is ever an SFT target or a chosen answer; splits are disjoint; every candidate is counted", () => {
    fc.assert(
      fc.property(
        rowsArb,
        fc.constantFrom("sft" as const, "preference" as const),
        fc.constantFrom(0, 0.3, 0.7, 1),
        (rows, type, share) => {
          const out = prepareExport(
            { domain: "chat", items: rows },
            { type, scan: atSignScan, heldoutShare: share },
          );
          const banned = badKeys(rows);
          const all = [...out.lines.train, ...out.lines.heldout];
          for (const l of all) {
            const line = JSON.parse(l) as Line;
            expect(lineTexts(line).some((t) => t.includes("@"))).toBe(false);
            if ("messages" in line)
              textMessages(line).forEach((m, i) => {
                if (m.role === "assistant")
                  expect(banned.has(answerKey(textMessages(line).slice(0, i), m.content))).toBe(false);
              });
            else if ("chosen" in line)
              expect(banned.has(answerKey(line.prompt, line.chosen[0]!.content))).toBe(false);
          }
          const train = new Set(keysOf(out.lines.train));
          for (const k of keysOf(out.lines.heldout)) expect(train.has(k)).toBe(false);
          // A prompt the hash holds out never trains, whatever else the export holds.
          for (const k of train) expect(splitOf(k, share)).toBe("train");
          expect(new Set(all).size).toBe(all.length);
          const r = out.report;
          expect(r.candidates).toBe(
            DROP_REASONS.reduce((s, d) => s + r.dropped[d], 0) + r.splits.train + r.splits.heldout,
          );
          // The same input gives the same export.
          expect(
            prepareExport({ domain: "chat", items: rows }, { type, scan: atSignScan, heldoutShare: share }),
          ).toEqual(out);
        },
      ),
      { numRuns: 300 },
    );
  });
});
