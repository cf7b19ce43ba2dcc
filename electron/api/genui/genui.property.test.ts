import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StoredDocument } from "./catalog";
import { PartialJson, completedPart } from "./partial";
import { documentText } from "./text";
import { mutatedDocumentArb } from "../../../testing/samples/genui-arbitraries";
import { validateDocument } from "./validate";

/** The spec as a model would stream it, or null when it is too deep to serialise at all. */
function asText(spec: unknown): string | null {
  try {
    return JSON.stringify(spec) ?? "";
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

describe("property: validate + normalise never throws", () => {
  it("10,000 generated and mutated specs: no uncaught error, output always storable, no pollution", () => {
    let ok = 0;
    let invalidNodes = 0;
    fc.assert(
      fc.property(mutatedDocumentArb, (spec) => {
        const r = validateDocument(spec);
        if (!r.ok) {
          expect(typeof r.reason).toBe("string");
          return;
        }
        ok++;
        invalidNodes += r.issues.length;
        expect(StoredDocument.safeParse(r.document).success).toBe(true);
        expect(typeof documentText(r.document)).toBe("string");
        // Normalised output is plain JSON data: it survives a round trip unchanged.
        expect(JSON.parse(JSON.stringify(r.document))).toEqual(r.document);
      }),
      // A new random seed each run (fast-check prints it on failure, to replay).
      { numRuns: 10_000 },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(ok).toBeGreaterThan(5000);
    expect(invalidNodes).toBeGreaterThan(0);
  }, 120_000);

  it("the streaming parser never throws on any prefix of a mutated spec", () => {
    fc.assert(
      fc.property(mutatedDocumentArb, fc.integer({ min: 1, max: 64 }), (spec, chunk) => {
        const text = asText(spec);
        // Nested deeper than JSON.stringify can go on this stack: it can never arrive as text.
        fc.pre(text !== null);
        const p = new PartialJson();
        for (let i = 0; i < text.length; i += chunk) {
          p.push(text.slice(i, i + chunk));
          if (i % (chunk * 16) === 0) validateDocument(completedPart(p));
        }
        const r = validateDocument(p.done ? p.root : completedPart(p));
        expect(typeof r.ok).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  }, 120_000);
});
