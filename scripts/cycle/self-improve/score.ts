/**
 * Rewards of sampled answers and what is learned from them (rejection sampling / best-of-K):
 * every answer is judged by the contract's own checks (check-case.ts `checkCase`: unit tests in
 * the sandbox, the GenUI document, the tool call and its values, key facts, format) plus two
 * guards no check may forget — an empty answer fails, and an answer that is the same (or
 * nearly) as an answer to a different prompt fails (degeneracy.ts, as the contract judges a
 * run). Per prompt, the best passing answer becomes an SFT target and, when another answer
 * failed (with text: an empty answer cannot be a side), the pair (best passing, worst failing)
 * a DPO pair. A prompt with no passing answer
 * teaches nothing: a failing answer is never a target or a chosen side.
 */
import { type AssertionResult, caseScore } from "../../../electron/core/contract/assertions";
import { checkCase } from "../../../electron/core/contract/check-case";
import type { Contract, ContractCase } from "../../../electron/core/contract/contract-schema";
import type { SampledAnswer } from "../../../electron/core/contract/contract-runner";
import { findDegenerate } from "../../../electron/core/contract/degeneracy";
import type { CodeSandbox } from "../../../electron/core/contract/sandbox/sandbox";

/** One sampled answer to one case. */
export interface Sample extends SampledAnswer {
  caseId: string;
  /** Its place among the case's K samples. */
  k: number;
  seed: number;
}

export interface ScoredSample extends Sample {
  /** Every check passed (the reward is 1; else 0). */
  pass: boolean;
  /** Share of the checks that passed: orders failing answers (the worst becomes DPO's rejected side). */
  score: number;
  reason: string;
}

const lastUser = (c: ContractCase): string => c.conversation[c.conversation.length - 1]!.content;

/** Judge every sample by its case's checks, the empty-answer guard and degeneracy across prompts. */
export async function scoreSamples(
  contract: Contract,
  samples: readonly Sample[],
  o: { sandbox?: CodeSandbox } = {},
): Promise<ScoredSample[]> {
  const cases = new Map(contract.cases.map((c) => [c.id, c]));
  const caseOf = (s: Sample): ContractCase => {
    const c = cases.get(s.caseId);
    if (!c) throw new Error(`sample of unknown case ${s.caseId}`);
    return c;
  };
  const checked: Array<
    { s: Sample; c: ContractCase; results: AssertionResult[]; reason: string } | ScoredSample
  > = [];
  for (const s of samples) {
    const c = caseOf(s);
    if (s.error !== null) checked.push({ ...s, pass: false, score: 0, reason: `error: ${s.error}` });
    else if (s.output.trim() === "") checked.push({ ...s, pass: false, score: 0, reason: "empty answer" });
    else {
      const check = await checkCase(
        c,
        { output: s.output, adapters: s.adapterIds, latencyMs: s.latencyMs, stopReason: s.stopReason },
        { sandbox: o.sandbox },
      );
      checked.push({ s, c, results: check.assertions, reason: check.reason });
    }
  }
  // Answers to different prompts that are the same or nearly, among those that pass their
  // checks: an answer that passes for several questions at once (one sentence naming every
  // topic, one call for every task) is no answer. (Among all samples, a right answer would be
  // failed for resembling another prompt's wrong one: a call to Tokyo answered for Berlin.)
  const passing = checked.filter(
    (x): x is { s: Sample; c: ContractCase; results: AssertionResult[]; reason: string } =>
      "results" in x && x.results.length > 0 && x.results.every((r) => r.passed),
  );
  const degenerate = findDegenerate(
    passing.map(({ s, c }) => ({
      id: `${s.caseId}#${s.k}`,
      tags: c.tags,
      prompt: lastUser(c),
      reference: c.reference,
      output: s.output,
    })),
  );
  return checked.map((x) => {
    if (!("results" in x)) return x;
    const distinct = degenerate.get(`${x.s.caseId}#${x.s.k}`);
    const results = distinct
      ? [...x.results, { type: "distinct" as const, passed: false, detail: distinct }]
      : x.results;
    return {
      ...x.s,
      pass: results.length > 0 && results.every((r) => r.passed),
      score: caseScore(results),
      reason: distinct ? `distinct: ${distinct}` : x.reason,
    };
  });
}

/** An SFT line as the export writes it. */
export interface SftLine {
  messages: Array<{ role: "user" | "assistant"; content: string }>;
}
/** A preference line as the export writes it. */
export interface PreferenceLine {
  prompt: Array<{ role: "user" | "assistant"; content: string }>;
  chosen: Array<{ role: "assistant"; content: string }>;
  rejected: Array<{ role: "assistant"; content: string }>;
}

export interface DomainStats {
  prompts: number;
  samples: number;
  /** Samples whose every check passed. */
  passed: number;
  /** passed / samples. */
  passShare: number;
  /** Prompts with at least one passing sample (= SFT lines). */
  promptsSolved: number;
  sftLines: number;
  dpoPairs: number;
}

export interface Selection {
  sft: SftLine[];
  dpo: PreferenceLine[];
  /** Per tag (domain). */
  stats: Record<string, DomainStats>;
}

const normalized = (t: string): string => t.toLowerCase().replace(/\s+/g, " ").trim();

/**
 * Per case: the best passing sample (highest score; among equals the answer most samples gave,
 * then the first) becomes the SFT target; with a failing sample beside it, the worst failing
 * one (lowest score, then the first) is DPO's rejected side.
 */
export function selectTraining(contract: Contract, scored: readonly ScoredSample[]): Selection {
  const byCase = new Map<string, ScoredSample[]>();
  for (const s of scored) {
    const list = byCase.get(s.caseId) ?? [];
    list.push(s);
    byCase.set(s.caseId, list);
  }
  const sft: SftLine[] = [];
  const dpo: PreferenceLine[] = [];
  const stats: Record<string, DomainStats> = {};
  for (const c of contract.cases) {
    const list = byCase.get(c.id);
    if (!list) continue;
    const tag = c.tags[0] ?? "untagged";
    const st = (stats[tag] ??= {
      prompts: 0,
      samples: 0,
      passed: 0,
      passShare: 0,
      promptsSolved: 0,
      sftLines: 0,
      dpoPairs: 0,
    });
    st.prompts++;
    st.samples += list.length;
    const passing = list.filter((s) => s.pass);
    const failing = list.filter((s) => !s.pass);
    st.passed += passing.length;
    if (passing.length === 0) continue;
    st.promptsSolved++;
    const votes = new Map<string, number>();
    for (const s of passing) votes.set(normalized(s.output), (votes.get(normalized(s.output)) ?? 0) + 1);
    const best = [...passing].sort(
      (a, b) =>
        b.score - a.score || votes.get(normalized(b.output))! - votes.get(normalized(a.output))! || a.k - b.k,
    )[0]!;
    const prompt = c.conversation
      .filter((m) => m.role !== "system")
      .map((m) => ({ role: m.role as "user" | "assistant", content: m.content }));
    sft.push({ messages: [...prompt, { role: "assistant", content: best.output }] });
    st.sftLines++;
    // The rejected side must be text (the trainer refuses an empty answer, and an answer that
    // did not run is no behaviour of the model's).
    const rejectable = failing.filter((s) => s.error === null && s.output.trim() !== "");
    if (rejectable.length === 0) continue;
    const worst = [...rejectable].sort((a, b) => a.score - b.score || a.k - b.k)[0]!;
    dpo.push({
      prompt,
      chosen: [{ role: "assistant", content: best.output }],
      rejected: [{ role: "assistant", content: worst.output }],
    });
    st.dpoPairs++;
  }
  for (const st of Object.values(stats)) st.passShare = st.samples ? st.passed / st.samples : 0;
  return { sft, dpo, stats };
}
