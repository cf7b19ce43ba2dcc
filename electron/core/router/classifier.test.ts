import { describe, expect, it } from "vitest";
import { RoutingClassifier, type LabelledVector } from "./classifier";

const v = (...xs: number[]) => Float32Array.from(xs);
const seed = (label: string, vector: Float32Array, weight = 1): LabelledVector => ({
  label,
  vector,
  weight,
  seed: true,
});

describe("RoutingClassifier", () => {
  it("gives probabilities that sum to 1, highest for the nearest class", () => {
    const c = new RoutingClassifier([
      seed("a", v(10, 1, 0)),
      seed("a", v(10, 0.9, 0.1)),
      seed("b", v(10, 0, 1)),
    ]);
    const p = c.classify([10, 1, 0.05]);
    expect([...p.keys()]).toEqual(["a", "b"]);
    expect((p.get("a") ?? 0) + (p.get("b") ?? 0)).toBeCloseTo(1, 12);
    expect(p.get("a")).toBeGreaterThan(0.9);
  });

  it("centres on the seeds: a shared large dimension does not blur the classes", () => {
    // Without centring every cosine here would be ~1 and the classes indistinguishable.
    const c = new RoutingClassifier([seed("a", v(100, 1, 0)), seed("b", v(100, 0, 1))]);
    expect(c.classify([100, 0.9, 0.1]).get("a")).toBeGreaterThan(0.99);
  });

  it("lets a weighted learned example take over its neighbourhood", () => {
    const seeds = [
      seed("a", v(0, 1, 0)),
      seed("a", v(0, 1, 0.1)),
      seed("b", v(0, 0, 1)),
      seed("b", v(0, 0.1, 1)),
    ];
    const query = [0, 0.8, 0.4];
    expect(new RoutingClassifier(seeds).classify(query).get("b")).toBeLessThan(0.5);
    const learned: LabelledVector = { label: "b", vector: v(0, 0.8, 0.4), weight: 4, seed: false };
    expect(new RoutingClassifier([...seeds, learned]).classify(query).get("b")).toBeGreaterThan(0.5);
  });

  it("gives every class the same prior whatever its number of examples", () => {
    const seeds = [seed("a", v(0, 1, 0)), seed("b", v(0, 0, 1))];
    const copies = Array.from({ length: 9 }, (): LabelledVector => ({
      label: "a",
      vector: v(0, 1, 0),
      weight: 1,
      seed: false,
    }));
    const query = [0, 0.3, 0.7];
    const one = new RoutingClassifier(seeds).classify(query);
    const ten = new RoutingClassifier([...seeds, ...copies]).classify(query);
    expect(ten.get("a")).toBeCloseTo(one.get("a") ?? 0, 12);
  });

  it("rejects mismatched dimensions and non-finite embeddings", () => {
    expect(() => new RoutingClassifier([seed("a", v(1, 2)), seed("b", v(1, 2, 3))])).toThrow(
      /differ in length/,
    );
    const c = new RoutingClassifier([seed("a", v(1, 0)), seed("b", v(0, 1))]);
    expect(() => c.classify([1, 2, 3])).toThrow(/3 dimensions, the examples 2/);
    expect(() => c.classify([Number.NaN, 1])).toThrow(/non-finite/);
    expect(new RoutingClassifier([]).classify([1])).toEqual(new Map());
  });
});
