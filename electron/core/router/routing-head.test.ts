import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { DEMO_ADAPTERS } from "../../../native/gguf/adapters";
import { HELD_OUT_PROMPTS } from "../../../testing/router/held-out-prompts";
import { lexicalEmbedder } from "../../../testing/router/lexical-embedder";
import { fnv1a, routingFeatures, words } from "./routing-features";
import {
  decodeRouterArtifact,
  encodeRouterArtifact,
  headOf,
  nestingBeyond,
  RouterArtifactError,
  trainRoutingHead,
  UnsupportedRouterArtifactError,
  type HeadExample,
} from "./routing-head";

const BASE = "a".repeat(64);

async function demoExamples(): Promise<HeadExample[]> {
  const embed = lexicalEmbedder();
  const rows = DEMO_ADAPTERS.flatMap((a) => a.routingExamples.map((text) => ({ label: a.id, text })));
  const vectors = await embed(rows.map((r) => r.text));
  return rows.map((r, i) => ({ ...r, embedding: vectors[i]! }));
}

describe("routing features (one extraction for training and serving)", () => {
  it("are a pure function of the spec, the mean and the text with its embedding", () => {
    const spec = {
      version: 1 as const,
      embeddingDim: 3,
      hashBits: 8,
      charNgrams: [3],
      embeddingScale: 1,
      lexicalScale: 1,
    };
    const a = routingFeatures(spec, [0, 0, 0], "Write a Python function", [3, 0, 4]);
    const b = routingFeatures(spec, [0, 0, 0], "Write a Python function", [3, 0, 4]);
    expect(a).toEqual(b);
    // The embedding part is centred and scaled to length 1: (3, 0, 4) / 5.
    [0.6, 0, 0.8].forEach((x, i) => expect(a.values[i]).toBeCloseTo(x, 12));
    expect([...a.indices].every((c, i, all) => i === 0 || c > all[i - 1]!)).toBe(true);
    expect(Math.max(...a.indices)).toBeLessThan(3 + 256);
    // FNV-1a is pinned: a head trained today scores the same tomorrow.
    expect(fnv1a("a")).toBe(0xe40c292c);
    expect(fnv1a("")).toBe(0x811c9dc5);
    expect(words("Don't stop, JSON-file 42!")).toEqual(["don't", "stop", "json", "file", "42"]);
    expect(() => routingFeatures(spec, [0, 0, 0], "x", [1, 2])).toThrow(/2 dimensions, the routing head 3/);
    expect(() => routingFeatures(spec, [0, 0, 0], "x", [1, NaN, 2])).toThrow(/non-finite/);
  });
});

describe("trainRoutingHead", () => {
  it("learns the demo's routing examples and routes held-out prompts, deterministically", async () => {
    const examples = await demoExamples();
    const head = trainRoutingHead(examples, { baseSha256: BASE, version: 1, createdAt: 1 });
    expect(head.labels).toEqual(["agent", "chat", "coding", "ui"]);
    const embed = lexicalEmbedder();
    const vectors = await embed(HELD_OUT_PROMPTS.map((p) => p.text));
    let right = 0;
    HELD_OUT_PROMPTS.forEach((p, i) => {
      const probabilities = head.classify(p.text, vectors[i]!);
      expect([...probabilities.values()].reduce((s, x) => s + x, 0)).toBeCloseTo(1, 9);
      const top = [...probabilities].sort((a, b) => b[1] - a[1])[0]![0];
      if (top === p.expected) right++;
    });
    expect(right).toBeGreaterThanOrEqual(16); // of 20; never seen in training
    // Same data, same order: the same artifact, byte for byte.
    const again = trainRoutingHead(examples, { baseSha256: BASE, version: 1, createdAt: 1 });
    expect(again.artifact).toEqual(head.artifact);
    // Training data counts are in the lineage.
    expect(head.artifact.lineage.examples.chat).toBe(examples.filter((e) => e.label === "chat").length);
  });

  it("restricts its vote to the labels asked for", async () => {
    const head = trainRoutingHead(await demoExamples(), { baseSha256: BASE, version: 1 });
    const [vector] = await lexicalEmbedder()(["Write a Python function"]);
    const p = head.classify("Write a Python function", vector!, ["chat", "ui", "poetry"]);
    expect([...p.keys()].sort()).toEqual(["chat", "ui"]);
  });

  it("refuses fewer than two labels and bad weights", async () => {
    const [vector] = await lexicalEmbedder()(["x"]);
    expect(() =>
      trainRoutingHead([{ label: "a", text: "x", embedding: vector! }], { baseSha256: BASE, version: 1 }),
    ).toThrow(/two labels/);
    expect(() =>
      trainRoutingHead(
        [
          { label: "a", text: "x", embedding: vector!, weight: 0 },
          { label: "b", text: "y", embedding: vector! },
        ],
        { baseSha256: BASE, version: 1 },
      ),
    ).toThrow(/weight must be > 0/);
  });
});

describe("router artifacts", () => {
  it("round-trip through their encoded form with the same scores", async () => {
    const head = trainRoutingHead(await demoExamples(), { baseSha256: BASE, version: 3, parent: 2 });
    const back = decodeRouterArtifact(encodeRouterArtifact(head.artifact));
    expect(back.version).toBe(3);
    expect(back.baseSha256).toBe(BASE);
    expect(back.artifact.lineage.parent).toBe(2);
    const [vector] = await lexicalEmbedder()(["Plan my trip to Rome"]);
    expect(back.classify("Plan my trip to Rome", vector!)).toEqual(
      head.classify("Plan my trip to Rome", vector!),
    );
  });

  it("refuse corrupt or malformed data with a sentence that says what is wrong", async () => {
    const head = trainRoutingHead(await demoExamples(), { baseSha256: BASE, version: 1 });
    const a = head.artifact;
    const gz = (value: unknown) => ({ gz: gzipSync(Buffer.from(JSON.stringify(value))).toString("base64") });
    const cases: Array<[unknown, RegExp]> = [
      [undefined, /missing its data/],
      [{ gz: "" }, /missing its data/],
      [{ gz: "bm90IGd6aXA=" }, /cannot be read/],
      [{ gz: gzipSync(Buffer.from("{not json")).toString("base64") }, /cannot be read/],
      [gz({ ...a, format: "other" }), /invalid: format/],
      [gz({ ...a, baseSha256: "nope" }), /invalid: baseSha256/],
      [gz({ ...a, labels: ["chat", "chat", "ui", "agent"] }), /repeats a label/],
      [gz({ ...a, weights: a.weights.slice(0, 400) }), /weights, 4 labels × \d+ features need/],
      [gz({ ...a, weights: "AAA" }), /not float32 data/],
      [
        gz({ ...a, embeddingMean: Buffer.from(new Float32Array(128).fill(NaN).buffer).toString("base64") }),
        /not finite/,
      ],
      [gz({ ...a, bias: [0, 0] }), /2 biases for 4 labels/],
      [
        gz({ ...a, features: { ...a.features, version: 2 } }),
        /features are version 2, this build reads version 1/,
      ],
      // Finite but absurd: logits overflow and every score reads 0.25 (the tester's heads).
      [gz({ ...a, weights: f32(a.weights, () => 3e38) }), /weights has values beyond ±10000/],
      [gz({ ...a, weights: f32(a.weights, () => -3e38) }), /weights has values beyond/],
      [gz({ ...a, bias: a.bias.map(() => 1.7e308) }), /bias has values beyond/],
      [gz({ ...a, embeddingMean: f32(a.embeddingMean, () => 1e30) }), /embeddingMean has values beyond/],
      // A version that would outrank every later head forever.
      [gz({ ...a, version: 1e15 }), /invalid: version/],
      [gz({ ...a, version: 1.5 }), /invalid: version/],
    ];
    for (const [encoded, message] of cases) {
      let error: unknown = null;
      try {
        decodeRouterArtifact(encoded);
      } catch (err) {
        error = err;
      }
      expect(error, String(message)).toBeInstanceOf(RouterArtifactError);
      expect((error as Error).message).toMatch(message);
    }
    expect(() => headOf(a)).not.toThrow();
    expect(() => headOf({ ...a, version: 1_000_000 })).not.toThrow();
    expect(() => headOf({ ...a, features: { ...a.features, version: 2 } })).toThrow(
      UnsupportedRouterArtifactError,
    );
  });
});

describe("decoding hostile artifacts", () => {
  it("refuses deep nesting before JSON.parse (the tester's 15M nested [] in the lineage) and huge JSON", async () => {
    const head = trainRoutingHead(await demoExamples(), { baseSha256: BASE, version: 1, steps: 5 });
    const good = JSON.stringify(head.artifact);
    const nested = (depth: number) =>
      good.replace('"lineage":{', `"lineage":{"x":${"[".repeat(depth)}${"]".repeat(depth)},`);
    const gz = (text: string) => ({ gz: gzipSync(Buffer.from(text)).toString("base64") });
    // The tester's: 30 MB unzipped, over what a head needs (a real one is ~100 KB).
    expect(() => decodeRouterArtifact(gz(nested(15_000_000)))).toThrow(/cannot be read/);
    // Within the size cap (6 MB) and seconds of JSON.parse: refused by the scan, unparsed.
    expect(() => decodeRouterArtifact(gz(nested(3_000_000)))).toThrow(
      /cannot be read: nested deeper than 64 levels/,
    );
    // 64 levels are fine; brackets inside strings do not count.
    expect(nestingBeyond(`${"[".repeat(63)}${"]".repeat(63)}`, 64)).toBe(false);
    expect(nestingBeyond(`{"a":"${"[".repeat(100)}\\"[[["}`, 64)).toBe(false);
    expect(nestingBeyond(`{"a":${"[".repeat(64)}${"]".repeat(64)}}`, 64)).toBe(true);
    expect(() =>
      decodeRouterArtifact(gz(good.replace('"lineage":{', `"lineage":{"x":[[[["\\"[[[[[[[["]]]],`))),
    ).not.toThrow();
    // Decompressed far beyond what a head needs (a real one is ~100 KB): refused while unzipping.
    const big = good.replace('"lineage":{', `"lineage":{"x":"${"a".repeat(9 * 1024 * 1024)}",`);
    expect(() => decodeRouterArtifact(gz(big))).toThrow(/cannot be read/);
  });
});

/** A base64 float32 array as long as `like` with values `v`. */
function f32(like: string, v: (i: number) => number): string {
  const f = new Float32Array(Buffer.from(like, "base64").length / 4);
  for (let i = 0; i < f.length; i++) f[i] = v(i);
  return Buffer.from(f.buffer).toString("base64");
}
