import { describe, expect, it } from "vitest";
import {
  type CycleRecord,
  cycleZero,
  nextRecord,
  parseSampledLog,
  rate,
  selfImproveChart,
} from "../bench/self-improve-cycles";
import { type Frame, rateY } from "../bench/svg-chart";

/** The gate's paired counts (PairedRate) of the domain's contract cases and its unsampled prompts. */
const paired = (domain: string, contract: [number, number], suite: [number, number]) => ({
  [domain]: { cases: 36, livePassed: contract[0], candidatePassed: contract[1] },
  [`${domain}-self`]: { cases: 16, livePassed: suite[0], candidatePassed: suite[1] },
});
const sampled = (passed: number) => ({ samples: 96, passed, passShare: passed / 96 });

describe("self-improve cycles: what is live after each cycle", () => {
  const zero = cycleZero("agent", "1.0.0", {
    agent: { passed: 2, total: 36 },
    "agent-self": { passed: 3, total: 16 },
    coding: undefined,
  });

  it("cycle 0 is the shipped specialist's own evaluation", () => {
    expect(zero).toMatchObject({
      cycle: 0,
      liveVersion: "1.0.0",
      verdict: "shipped",
      heldout: { passed: 2, total: 36 },
      suite: { passed: 3, total: 16, rate: 3 / 16 },
      measured: "evaluated",
      sampled: null,
    });
  });

  it("a published candidate becomes live: its side of the gate is what is live after", () => {
    const one = nextRecord("agent", zero, {
      kind: "gated",
      published: true,
      candidateVersion: "1.1.0",
      reasons: [],
      byTag: paired("agent", [2, 5], [3, 4]),
      sampled: sampled(3),
      samplesPerSecond: 6.5,
      seconds: 70,
    });
    expect(one).toMatchObject({
      cycle: 1,
      liveVersion: "1.1.0",
      verdict: "published",
      heldout: rate(5, 36),
      suite: rate(4, 16),
      measured: "gate, candidate side",
      gateLive: { heldout: rate(2, 36), suite: rate(3, 16) },
      sampled: { passed: 3, samples: 96 },
      samplesPerSecond: 6.5,
      seconds: 70,
    });
  });

  it("a rejected candidate leaves live as it was, measured again by the gate's live side", () => {
    const one = nextRecord("agent", zero, {
      kind: "gated",
      published: false,
      candidateVersion: "1.1.0",
      reasons: ["agent-self regressed"],
      byTag: paired("agent", [2, 2], [3, 0]),
      sampled: sampled(1),
      samplesPerSecond: 5,
      seconds: 60,
    });
    expect(one).toMatchObject({
      cycle: 1,
      liveVersion: "1.0.0",
      verdict: "rejected",
      reasons: ["agent-self regressed"],
      heldout: rate(2, 36),
      suite: rate(3, 16),
      measured: "gate, live side",
      candidate: { version: "1.1.0", heldout: rate(2, 36), suite: rate(0, 16) },
    });
  });

  it("a cycle with nothing to learn changes nothing live; the next cycle counts on", () => {
    const one = nextRecord("agent", zero, {
      kind: "no cycle",
      reason: "No sampled agent answer passed its checks: nothing to learn from.",
      sampled: sampled(0),
      samplesPerSecond: 4,
      seconds: 20,
    });
    expect(one).toMatchObject({
      cycle: 1,
      liveVersion: "1.0.0",
      verdict: "no cycle",
      heldout: zero.heldout,
      suite: zero.suite,
      measured: "unchanged",
      gateLive: null,
      candidate: null,
      sampled: { passed: 0, passShare: 0 },
    });
    const two = nextRecord("agent", one, {
      kind: "gated",
      published: true,
      candidateVersion: "1.1.0",
      reasons: [],
      byTag: paired("agent", [2, 3], [3, 3]),
      sampled: sampled(2),
      samplesPerSecond: 4,
      seconds: 50,
    });
    expect(two).toMatchObject({ cycle: 2, liveVersion: "1.1.0", heldout: rate(3, 36) });
  });

  it("reads the counts and the speed from the sampling log line", () => {
    const line =
      "self-improve: 3/96 samples passed their checks; 3 SFT lines, 3 DPO pairs " +
      "(sampling 17.0 s, 5.65 samples/s; judging 0.0 s)";
    expect(parseSampledLog(line)).toEqual({
      sampled: { samples: 96, passed: 3, passShare: 3 / 96 },
      samplesPerSecond: 5.65,
    });
    expect(parseSampledLog("")).toEqual({ sampled: null, samplesPerSecond: null });
  });
});

describe("self-improve cycles: the chart", () => {
  const record = (cycle: number, passed: number): CycleRecord => ({
    ...cycleZero("x", "1.0.0", { x: { passed, total: 36 } }),
    cycle,
    verdict: cycle === 0 ? "shipped" : "rejected",
  });
  const perCycle = Object.fromEntries(
    ["chat", "coding", "agent", "ui"].map((d, i) => [d, [0, 1, 2, 3].map((c) => record(c, i + c))]),
  );
  const svg = selfImproveChart(perCycle);
  const bars = [...svg.matchAll(/<rect [^>]*data-domain="(\w+)" data-cycle="(\d+)" data-rate="([\d.]+)"/g)];

  it("draws one bar per domain per cycle, at the pass rate of what is live", () => {
    expect(bars.map((b) => `${b[1]}/${b[2]}`)).toEqual(
      ["chat", "coding", "agent", "ui"].flatMap((d) => [0, 1, 2, 3].map((c) => `${d}/${c}`)),
    );
    const agent3 = bars.find((b) => b[1] === "agent" && b[2] === "3")!;
    expect(Number(agent3[3])).toBeCloseTo(5 / 36, 3);
    // A higher rate is a taller bar (y grows downwards).
    const top = (b: RegExpMatchArray) => Number(/ y="([\d.]+)"/.exec(b[0])![1]);
    expect(top(agent3)).toBeLessThan(top(bars.find((b) => b[1] === "agent" && b[2] === "0")!));
    expect(svg).toContain(">5/36<");
  });

  it("draws the dashed 0.6 target over UI and Agent only, and names it in the legend", () => {
    const targets = [...svg.matchAll(/<line [^>]*data-target="(\w+)"\/>/g)];
    expect(targets.map((t) => t[1])).toEqual(["agent", "ui"]);
    // The chart's frame: 400 high, margins 40 on top and 64 below.
    const f: Frame = { W: 760, H: 400, m: { l: 56, r: 190, t: 40, b: 64 } };
    for (const t of targets) {
      expect(t[0]).toContain(`y1="${rateY(f)(0.6)}"`);
      expect(t[0]).toContain('stroke-dasharray="6 4"');
    }
    expect(svg).toContain("target (agent, ui)");
    expect(svg.startsWith("<svg ")).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
  });

  it("leaves the target out for domains without one", () => {
    const only = selfImproveChart({ chat: perCycle.chat!, coding: perCycle.coding! });
    expect(only).not.toContain("data-target");
    expect(only).not.toContain("target (");
  });
});
