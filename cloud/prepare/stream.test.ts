/**
 * The streaming export against the in-memory pipeline (prepareExport, the oracle): the same
 * lines in the same order and the same report, on generated feedback where prompts, answers,
 * ratings, exact and near duplicates, tool calls and correcting follow-ups collide often.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CUSTOM_SYSTEM_SUFFIX as CUSTOM,
  type FeedbackItem,
  type TrajectoryStepWire,
} from "../../common/feedback-protocol";
import type { StoredItem } from "../store";
import { ask, atSignScan, bad, corrected, good, regenerated, row } from "../../testing/cloud/prepare";
import { TEST_VERSIONS } from "../../testing/cloud/items";
import { prepareExport, type PrepareOptions } from "./prepare";
import { prepareExportStream, type StreamSource } from "./stream";
import type { DomainCount } from "./source";

/** Rows as an async source, a turn of the event loop between them like a store's pages. */
async function* each<T>(rows: readonly T[]): AsyncGenerator<T> {
  for (const r of rows) {
    await Promise.resolve();
    yield r;
  }
}

const kindOf = (r: StoredItem) => {
  try {
    return (JSON.parse(r.json) as { kind?: string }).kind ?? "unknown";
  } catch {
    return "unknown";
  }
};

/** A source over arrays, reading what exportDataset's snapshot reads. */
export function arraySource(rows: readonly StoredItem[], ratings: readonly StoredItem[]): StreamSource {
  const domains: Record<string, DomainCount> = { chat: { items: rows.length, byKind: {} } };
  return {
    items: () => each(rows),
    ratings: () => each(ratings),
    followUps: () => each(rows.filter((r) => kindOf(r) === "follow_up")),
    domains: () => Promise.resolve(domains),
  };
}

/** Runs both pipelines on the same rows; the streamed one's lines read back per split. */
export async function bothWays(rows: StoredItem[], opts: PrepareOptions) {
  const ratings = rows.filter((r) => kindOf(r) === "rating");
  const domains = { chat: { items: rows.length, byKind: {} } };
  const expected = prepareExport({ domain: "chat", items: rows, ratings, domains }, opts);
  const train = await prepareExportStream(arraySource(rows, ratings), "chat", opts);
  const trainLines = [...train.lines("train")];
  const held = await prepareExportStream(arraySource(rows, ratings), "chat", opts);
  const actual = { lines: { train: trainLines, heldout: [...held.lines("heldout")] }, report: train.report };
  return { expected, actual };
}

const outcome = { steps: 1, done: 1, denied: 0, errors: 0, invalid: 0, stopped: 0, truncated: 0, totalMs: 5 };
const timer = {
  name: "set_timer",
  description: "Start a countdown timer.",
  parameters: { type: "object", properties: { minutes: { type: "number" } }, required: ["minutes"] },
};
const step = (state: TrajectoryStepWire["state"], minutes: number): TrajectoryStepWire => ({
  index: 0,
  server: "builtin",
  tool: "set_timer",
  arguments: { minutes },
  decision: "once",
  state,
  result: state === "done" ? '{"ok":true}' : null,
  truncated: false,
  error: state === "error" ? "boom" : null,
  durationMs: 5,
});

// Small pools: prompts, answers and ratings collide; the long ones differ by a word or two,
// so they fold as near-duplicates (and join prompts across the split).
const QUESTIONS = [
  "Capital of France?",
  "capital of france",
  "2+2?",
  "Hi",
  "mail a@b.example",
  "How do I sort a list in Python?",
  "How do I sort a list in Python 3?",
  "How can I sort a list in Python?",
];
const ANSWERS = [
  "Paris.",
  "paris",
  "4",
  "Hello!",
  "",
  "Use sorted(items) for a new list, or items.sort() to sort the list in place.",
  "Use sorted(items) for a new list, or items.sort() to sort that list in place.",
  "Use sorted(items) to get a new list, or items.sort() to sort the list in place.",
];
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
    fc.record({
      kind: fc.constant("follow_up" as const),
      rating: fc.constant(null),
      q: question,
      response: text,
      interaction: fc.constant({ corrected: true }),
    }),
    fc
      .record({
        kind: fc.constantFrom("trajectory" as const, "rating" as const),
        rating: fc.constantFrom("good" as const, "bad" as const, null),
        q: question,
        response: text,
        state: fc.constantFrom("done" as const, "done" as const, "error" as const),
        minutes: fc.constantFrom(5, 15),
      })
      .map(({ state, minutes, kind, rating, ...rest }) => ({
        ...rest,
        kind,
        rating: kind === "rating" ? (rating ?? "good") : rating,
        toolOutcome: { ...outcome, steps: 1 },
        trajectory: { tools: [timer], steps: [step(state, minutes)] },
      })),
  )
  .map(({ q, ...rest }): Partial<FeedbackItem> => ({ ...rest, prompt: ask(q) }));
const withHistory = fc
  .tuple(itemArb, fc.option(fc.tuple(question, text), { freq: 3 }), fc.nat(9))
  .map(([item, h, n]) => [n === 0 ? { ...item, consent: "ratings" as const } : item, h] as const)
  .map(([item, h]) =>
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
// Now and then a row that is not a feedback item at all.
const rowArb = fc.oneof({ weight: 20, arbitrary: withHistory }, { weight: 1, arbitrary: fc.constant(null) });
// Every third item again at the end (a new item, the same line): exact duplicates.
const rowsArb = fc
  .array(rowArb, { maxLength: 40 })
  .map((items) =>
    [...items, ...items.filter((_, i) => i % 3 === 0)].map((i) =>
      i ? row(i) : { installId: "install-1", receivedAt: 0, json: "{nope" },
    ),
  );

describe("streaming export = in-memory export", () => {
  it("gives the same lines in the same order and the same report on generated feedback", async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        fc.constantFrom("sft" as const, "preference" as const, "groups" as const),
        fc.constantFrom(0, 0.3, 0.7, 1),
        fc.constantFrom(undefined, 0.5),
        fc.constantFrom(undefined, undefined, 30),
        async (rows, type, share, nearDuplicateThreshold, maxTokens) => {
          const { expected, actual } = await bothWays(rows, {
            type,
            scan: atSignScan,
            heldoutShare: share,
            nearDuplicateThreshold,
            maxTokens,
          });
          expect(actual).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("drops and counts every reason as the oracle does (fixture with each)", async () => {
    const rows = [
      good("Hi", "Hello!"),
      good("Hi", "Hello!"), // duplicate
      good("Capital of France?", "Paris."),
      bad("capital of france", "paris"), // thumbs-down on the line above
      good("2+2?", "4"),
      row({
        kind: "follow_up",
        rating: null,
        prompt: ask("2+2?"),
        response: "4",
        interaction: { corrected: true },
      }),
      good("mail a@b.example", "ok"), // pii
      row({ consent: "ratings", prompt: ask("Hi there"), response: "Hey" }),
      row({
        prompt: ask("Custom?"),
        response: "Yes.",
        versions: { ...TEST_VERSIONS, harnessVersion: `0.1.0${CUSTOM}` },
      }),
      good("Long?", "word ".repeat(200)), // too long at 60 tokens
      corrected("Sort?", "No idea.", "sorted(x)"),
      regenerated("Sort?", "No idea.", "sorted(x)"),
      regenerated("Sort?", "Same", "same"), // sameAnswer
      { installId: "install-1", receivedAt: 0, json: "[]" }, // malformed
    ];
    for (const type of ["sft", "preference", "groups"] as const) {
      const { expected, actual } = await bothWays(rows, {
        type,
        scan: atSignScan,
        maxTokens: 60,
        heldoutShare: 0.5,
      });
      expect(actual).toEqual(expected);
      if (type === "sft")
        for (const reason of [
          "duplicate",
          "thumbsDown",
          "followUpCorrected",
          "pii",
          "customSystem",
          "tooLong",
          "malformed",
        ] as const)
          expect(expected.report.dropped[reason], reason).toBeGreaterThan(0);
    }
  });

  it("folds near-duplicates and joins their prompts on the held-out side as the oracle does", async () => {
    const rows = Array.from({ length: 60 }, (_, i) =>
      row({
        prompt: ask(`How do I sort a list in Python ${i % 7}?`),
        response: `Use sorted(items) for a new list, or items.sort() to sort the list in place ${i % 3}.`,
      }),
    );
    const { expected, actual } = await bothWays(rows, { type: "sft", scan: atSignScan, heldoutShare: 0.3 });
    expect(expected.report.dropped.nearDuplicate).toBeGreaterThan(0);
    expect(actual).toEqual(expected);
  });
});
