import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldNearDuplicates, jaccard, NEAR_DUPLICATE_THRESHOLD, shingles } from "./near-duplicates";
import { normalizeText, promptKey } from "./normalize";

/** The definition: each text against every kept one, in order. */
function bruteForce(texts: string[], t: number) {
  const sets = texts.map((x) => shingles(x));
  const kept: number[] = [];
  const folded: { index: number; into: number[] }[] = [];
  sets.forEach((s, i) => {
    const into = kept.filter((k) => jaccard(s, sets[k]!) >= t);
    if (into.length > 0) folded.push({ index: i, into });
    else kept.push(i);
  });
  return { kept, folded };
}

describe("normalization", () => {
  it("ignores case, whitespace and punctuation, keeps symbols and words", () => {
    expect(normalizeText("  Hello,   WORLD!!\n")).toBe("hello world");
    expect(normalizeText("What's 2+2?")).toBe(normalizeText("what s   2+2"));
    expect(normalizeText("2+2")).not.toBe(normalizeText("2*2"));
    expect(normalizeText("Ｐａｒｉｓ")).toBe("paris");
  });

  it("keys a prompt by its non-system turns", () => {
    const a = promptKey([
      { role: "system", content: "Memories: likes tea." },
      { role: "user", content: "Capital of France?" },
    ]);
    const b = promptKey([{ role: "user", content: "capital of  france" }]);
    expect(a).toBe(b);
    expect(promptKey([{ role: "user", content: "Capital of Spain?" }])).not.toBe(a);
  });
});

describe("near-duplicate folding", () => {
  it("folds a line that differs by a word in a long answer, keeps distinct short ones", () => {
    const long = normalizeText(
      "How do I sort a list in Python? Use sorted(items) for a new list, or items.sort() to sort in place.",
    );
    const almost = normalizeText(
      "How do I sort a list in Python? Use sorted(items) for a new list or items.sort() to sort it in place.",
    );
    expect(jaccard(shingles(long), shingles(almost))).toBeGreaterThanOrEqual(NEAR_DUPLICATE_THRESHOLD);
    const distinct = ["sort 1 sort", "sort 2 sort", "sort 3 sort"];
    const r = foldNearDuplicates([long, ...distinct, almost]);
    expect(r.kept).toEqual([0, 1, 2, 3]);
    expect(r.folded).toEqual([{ index: 4, into: [0] }]);
  });

  it("cuts shingles on code points, a short text is one shingle", () => {
    expect([...shingles("ab😀cdef")]).toEqual(["ab😀cd", "b😀cde", "😀cdef"]);
    expect([...shingles("abc")]).toEqual(["abc"]);
    expect(shingles("").size).toBe(0);
  });

  it("folds texts equal after normalization and repeated empty texts", () => {
    const r = foldNearDuplicates([normalizeText("Paris."), normalizeText("  paris"), "", ""]);
    expect(r.kept).toEqual([0, 2]);
    expect(r.folded).toEqual([
      { index: 1, into: [0] },
      { index: 3, into: [2] },
    ]);
  });

  it("property: prefix filtering finds exactly the pairs the all-pairs definition finds", () => {
    // Small alphabet and edits of shared bases, so many pairs sit near the threshold.
    const base = fc.stringMatching(/^[ab c]{0,40}$/);
    const edit = fc.tuple(fc.nat(40), fc.stringMatching(/^[abc ]{0,3}$/), fc.nat(3));
    const text = fc
      .tuple(fc.constantFrom("abc abcab cab bca abcc ba", "cab cab abc a bb cc a cab"), base, edit)
      .map(([b, extra, [at, ins, del]]) => {
        const s = b + extra;
        return s.slice(0, at) + ins + s.slice(at + del);
      });
    fc.assert(
      fc.property(fc.array(text, { maxLength: 25 }), fc.constantFrom(0.5, 0.7, 0.8, 0.9, 1), (texts, t) => {
        expect(foldNearDuplicates(texts, t)).toEqual(bruteForce(texts, t));
      }),
      { numRuns: 300 },
    );
  });
});
