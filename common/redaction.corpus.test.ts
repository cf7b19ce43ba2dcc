import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatScore, readCorpus, scoreRedaction } from "../testing/corpora/redaction/evaluate";
import { CORPUS_PATH, corpusJsonl, generateCorpus } from "../testing/corpora/redaction/generate-corpus";

describe("redaction corpus", () => {
  it("the committed corpus is what the generator produces (reproducible)", () => {
    expect(readFileSync(CORPUS_PATH, "utf8")).toBe(corpusJsonl(generateCorpus()));
  });

  it("has at least 300 lines, negatives included, and every label occurs in its text", () => {
    const lines = readCorpus();
    expect(lines.length).toBeGreaterThanOrEqual(300);
    expect(lines.filter((l) => l.pii.length === 0).length).toBeGreaterThanOrEqual(50);
    for (const l of lines) for (const p of l.pii) expect(l.text, p.value).toContain(p.value);
  });

  it("meets the recall bar for emails, cards and keys; reports every kind", () => {
    const score = scoreRedaction(readCorpus());
    console.log(`\n${formatScore(score)}`);
    if (score.misses.length)
      console.log("misses:", score.misses.map((m) => `${m.kind} ${JSON.stringify(m.value)}`).join("; "));
    const recall = Object.fromEntries(score.kinds.map((k) => [k.kind, k.recall]));
    expect(recall.email).toBeGreaterThanOrEqual(0.99);
    expect(recall.card).toBeGreaterThanOrEqual(0.99);
    expect(recall.secret).toBeGreaterThanOrEqual(0.99);
    // Not the bar, but a regression guard at today's level.
    for (const k of ["phone", "iban", "ip", "path"]) expect(recall[k], k).toBeGreaterThanOrEqual(0.95);
    expect(score.negatives.rate).toBeLessThanOrEqual(0.02);
    expect(score.notIdempotent).toEqual([]);
  });
});
