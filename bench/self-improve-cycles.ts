/**
 * The pure parts of `npm run bench -- self-improve --cycles N` (self-improve.ts): one record per
 * domain and cycle of what is live after it, and the chart bench/charts/self-improve.svg.
 *
 * Cycle 0 is the shipped specialist, measured by the bench itself on the gate's contract (the
 * default contract's cases of the domain and the unsampled generated prompts, tag
 * `<domain>-self`). A cycle that ran the gate measured both sides: what is live after it is the
 * candidate's side when it was published and the live side when it was rejected. A cycle with
 * nothing to learn (no sampled answer passed) changed nothing: live and its rates stay as they
 * were (greedy answers of the same files).
 */
import {
  bar,
  COLORS,
  type Frame,
  legendBox,
  legendLine,
  rateGrid,
  rateY,
  svgClose,
  svgOpen,
} from "./svg-chart";

export interface Rate {
  passed: number;
  total: number;
  rate: number;
}

export const rate = (passed: number, total: number): Rate => ({
  passed,
  total,
  rate: total === 0 ? 0 : passed / total,
});

/** What a cycle sampled: answers, those that passed their checks, their share. */
export interface Sampled {
  samples: number;
  passed: number;
  passShare: number;
}

export interface CycleRecord {
  cycle: number;
  /** The version live after the cycle (cycle 0: the shipped one). */
  liveVersion: string;
  verdict: "shipped" | "published" | "rejected" | "no cycle";
  /** Why the candidate was rejected, or why there was no cycle; empty otherwise. */
  reasons: string[];
  /** The live-after-cycle specialist on the default contract's held-out cases of the domain. */
  heldout: Rate | null;
  /** … and on the unsampled generated task prompts (the gate's `<domain>-self` cases). */
  suite: Rate | null;
  /** Where `heldout` and `suite` come from. */
  measured: "evaluated" | "gate, candidate side" | "gate, live side" | "unchanged";
  /** The gate's live side this cycle (what was live before it): the previous record, measured again. */
  gateLive: { heldout: Rate | null; suite: Rate | null } | null;
  /** The gate's candidate side (null without a gate). */
  candidate: { version: string; heldout: Rate | null; suite: Rate | null } | null;
  /** Sampled answers that passed their checks (null for cycle 0). */
  sampled: Sampled | null;
  samplesPerSecond: number | null;
  /** The whole cycle, sampling to publish (null for cycle 0). */
  seconds: number | null;
}

/** A tag's counts as a contract run without a baseline reports them (TagReport). */
type TagCounts = Record<string, { passed: number; total: number } | undefined>;
/** A tag's counts as the gate's paired comparison reports them (PairedRate). */
type PairedCounts = Record<
  string,
  { cases: number; livePassed: number; candidatePassed: number } | undefined
>;

export const suiteTag = (domain: string): string => `${domain}-self`;

/** Cycle 0: the shipped specialist, evaluated on the gate's contract (no baseline). */
export function cycleZero(domain: string, version: string, byTag: TagCounts): CycleRecord {
  const of = (tag: string) => {
    const t = byTag[tag];
    return t ? rate(t.passed, t.total) : null;
  };
  return {
    cycle: 0,
    liveVersion: version,
    verdict: "shipped",
    reasons: [],
    heldout: of(domain),
    suite: of(suiteTag(domain)),
    measured: "evaluated",
    gateLive: null,
    candidate: null,
    sampled: null,
    samplesPerSecond: null,
    seconds: null,
  };
}

/** What one cycle did, as self-improve.ts sees it. */
export type CycleOutcome =
  | {
      kind: "no cycle";
      reason: string;
      sampled: Sampled | null;
      samplesPerSecond: number | null;
      seconds: number;
    }
  | {
      kind: "gated";
      published: boolean;
      candidateVersion: string;
      reasons: string[];
      byTag: PairedCounts;
      sampled: Sampled | null;
      samplesPerSecond: number | null;
      seconds: number;
    };

/** The record of the cycle after `prev`: what is live after it, and its rates. */
export function nextRecord(domain: string, prev: CycleRecord, o: CycleOutcome): CycleRecord {
  const common = {
    cycle: prev.cycle + 1,
    sampled: o.sampled,
    samplesPerSecond: o.samplesPerSecond,
    seconds: o.seconds,
  };
  if (o.kind === "no cycle")
    return {
      ...common,
      liveVersion: prev.liveVersion,
      verdict: "no cycle",
      reasons: [o.reason],
      heldout: prev.heldout,
      suite: prev.suite,
      measured: "unchanged",
      gateLive: null,
      candidate: null,
    };
  const side = (tag: string, which: "live" | "candidate"): Rate | null => {
    const t = o.byTag[tag];
    if (!t) return null;
    return rate(which === "live" ? t.livePassed : t.candidatePassed, t.cases);
  };
  const live = { heldout: side(domain, "live"), suite: side(suiteTag(domain), "live") };
  const candidate = {
    version: o.candidateVersion,
    heldout: side(domain, "candidate"),
    suite: side(suiteTag(domain), "candidate"),
  };
  const after = o.published ? candidate : live;
  return {
    ...common,
    liveVersion: o.published ? o.candidateVersion : prev.liveVersion,
    verdict: o.published ? "published" : "rejected",
    reasons: o.published ? [] : o.reasons,
    heldout: after.heldout,
    suite: after.suite,
    measured: o.published ? "gate, candidate side" : "gate, live side",
    gateLive: live,
    candidate,
  };
}

/**
 * "self-improve: 3/96 samples passed their checks; … (sampling 17.0 s, 5.65 samples/s; …)" →
 * the counts and the speed (null where the line is absent or says otherwise).
 */
export function parseSampledLog(line: string): { sampled: Sampled | null; samplesPerSecond: number | null } {
  const m = /(\d+)\/(\d+) samples passed their checks/.exec(line);
  const s = /([\d.]+) samples\/s/.exec(line);
  const sampled = m ? { samples: Number(m[2]), passed: Number(m[1]) } : null;
  return {
    sampled: sampled
      ? { ...sampled, passShare: sampled.samples === 0 ? 0 : sampled.passed / sampled.samples }
      : null,
    samplesPerSecond: s ? Number(s[1]) : null,
  };
}

/** The target for the held-out contract pass rate (issue 29): UI and Agent at 0.6. */
export const TARGETS: Readonly<Record<string, number>> = { ui: 0.6, agent: 0.6 };

const VERDICT_MARK: Record<CycleRecord["verdict"], string> = {
  shipped: "S",
  published: "P",
  rejected: "R",
  "no cycle": "–",
};
const CYCLE_COLORS = ["#999", ...COLORS];

/**
 * Grouped bars: per domain, the held-out contract pass rate of what is live after cycle 0, 1, …,
 * N (one bar each, its count above it, its verdict under it), and a dashed target line over the
 * domains that have one (`targets`).
 */
export function selfImproveChart(
  perCycle: Readonly<Record<string, readonly CycleRecord[]>>,
  targets: Readonly<Record<string, number>> = TARGETS,
): string {
  const domains = Object.keys(perCycle);
  const cycles = Math.max(1, ...domains.map((d) => perCycle[d]!.length));
  const f: Frame = { W: 760, H: 400, m: { l: 56, r: 190, t: 40, b: 64 } };
  const { W, H, m } = f;
  const y = rateY(f);
  const groupW = (W - m.l - m.r) / Math.max(domains.length, 1);
  const pad = groupW * 0.12;
  const barW = (groupW - 2 * pad) / cycles;
  const parts: string[] = [
    ...svgOpen(f, "Held-out contract pass rate of what is live after each self-improvement cycle"),
    ...rateGrid(f),
  ];
  const r1 = (v: number) => Math.round(v * 10) / 10;
  domains.forEach((domain, di) => {
    const gx = m.l + di * groupW;
    perCycle[domain]!.forEach((r, ci) => {
      const x = r1(gx + pad + ci * barW);
      const w = r1(barW - 2);
      const v = r.heldout?.rate ?? 0;
      const color = CYCLE_COLORS[r.cycle % CYCLE_COLORS.length]!;
      parts.push(bar(f, x, w, v, color, { domain, cycle: r.cycle, rate: r1(v * 1000) / 1000 }));
      const label = r.heldout ? `${r.heldout.passed}/${r.heldout.total}` : "n/a";
      parts.push(
        `<text x="${r1(x + w / 2)}" y="${r1(y(v) - 4)}" text-anchor="middle" font-size="9">${label}</text>`,
        `<text x="${r1(x + w / 2)}" y="${y(0) + 14}" text-anchor="middle" font-size="10">${VERDICT_MARK[r.verdict]}</text>`,
      );
    });
    parts.push(
      `<text x="${r1(gx + groupW / 2)}" y="${y(0) + 32}" text-anchor="middle" font-weight="bold">${domain}</text>`,
    );
    const target = targets[domain];
    if (target !== undefined)
      parts.push(
        `<line x1="${r1(gx + pad / 2)}" x2="${r1(gx + groupW - pad / 2)}" y1="${y(target)}" y2="${y(target)}" stroke="#c33" stroke-width="2" stroke-dasharray="6 4" data-target="${domain}"/>`,
      );
  });
  for (let c = 0; c < cycles; c++)
    parts.push(
      legendBox(f, c, CYCLE_COLORS[c % CYCLE_COLORS.length]!, c === 0 ? "cycle 0 (shipped)" : `cycle ${c}`),
    );
  const targetDomains = domains.filter((d) => targets[d] !== undefined);
  if (targetDomains.length > 0)
    parts.push(legendLine(f, cycles, "#c33", `target (${targetDomains.join(", ")})`, "6 4"));
  parts.push(
    `<text x="${W - m.r + 12}" y="${m.t + 14 + (cycles + 1.5) * 18}" font-size="10">S shipped, P published,</text>`,
    `<text x="${W - m.r + 12}" y="${m.t + 14 + (cycles + 2.3) * 18}" font-size="10">R rejected, – nothing passed</text>`,
    `<text x="${m.l}" y="${H - 8}" font-size="10">Bars: default contract cases of the domain; count above each bar.</text>`,
    svgClose(),
  );
  return parts.join("\n");
}
