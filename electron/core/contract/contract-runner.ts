import type { AdapterSelection, RoutingInfo } from "../../api";
import { grammarJsonSchema } from "../../api/genui";
import type { AdapterUse, ChatTurn, GenerateOptions, GenerateResult, ToolCallFormat } from "../engine/types";
import { uiSystemPrompt } from "../../../common/prompts";
import { type AssertionResult, caseScore } from "./assertions";
import { checkOne, reasonOf } from "./check-case";
import type { Contract, ContractCase } from "./contract-schema";
import { findDegenerate } from "./degeneracy";
import type { CodeSandbox } from "./sandbox/sandbox";
import { type CaseReport, type ContractReport, type LiveCase, summarize } from "./contract-verdict";

export type {
  CaseChange,
  CaseReport,
  ComparisonReport,
  ContractReport,
  LiveCase,
  PairedRate,
  TagReport,
} from "./contract-verdict";

/** The adapters and engine a contract runs against (the live set, or one with a candidate in it). */
export interface ContractTarget {
  /** Resolve a case's mode for its last user text (the router decides "auto"). */
  resolve(
    selection: AdapterSelection,
    text: string,
  ): Promise<{
    routing: RoutingInfo;
    adapters: AdapterUse[];
    /** The leading adapter's tool-call syntax (its manifest's), for callers that run the agent loop. */
    toolFormat?: ToolCallFormat;
  }>;
  generate(history: ChatTurn[], options: GenerateOptions, signal?: AbortSignal): Promise<GenerateResult>;
}

export interface RunContractOptions {
  /** What is evaluated: the candidate set (or the live set when nothing is compared). */
  target: ContractTarget;
  /**
   * The live set. Cases with a `regression` assertion also run on it; with
   * `thresholds.maxRegression` in the contract every case does, and the report compares the
   * pass rates per tag and overall. Without it nothing is compared ("nothing live").
   */
  baseline?: ContractTarget;
  candidate?: { adapterId: string; version: string };
  /**
   * The target and the baseline run on the same engine and base model, and differ only in
   * adapter files: a case they resolve to the same adapters (same files, same scales) gets the
   * same greedy answer on both, so the live run reuses the candidate's answer instead of
   * generating it again. The gate sets it; leave it off for targets that differ otherwise.
   */
  shareAnswers?: boolean;
  systemPrompt?: string;
  onProgress?: (done: number, total: number, caseId: string) => void;
  signal?: AbortSignal;
  now?: () => number;
  /** Where `unitTests` run; default the process-wide sandbox (a child process). */
  sandbox?: CodeSandbox;
}

function selectionOf(mode: string): AdapterSelection {
  return mode === "auto" || mode === "base" ? mode : { pinned: mode };
}

/** The case's turns with the system prompt; UI cases get the UI instructions like the app's turns. */
function historyOf(c: ContractCase, systemPrompt: string | undefined): ChatTurn[] {
  const turns: ChatTurn[] = c.conversation.map((m) => ({ role: m.role, text: m.content }));
  const ui = c.format === "ui";
  const first = turns[0];
  if (first?.role === "system") {
    if (ui) turns[0] = { role: "system", text: uiSystemPrompt(first.text) };
  } else if (ui) turns.unshift({ role: "system", text: uiSystemPrompt(systemPrompt ?? "") });
  else if (systemPrompt) turns.unshift({ role: "system", text: systemPrompt });
  return turns;
}

let grammar: Record<string, unknown> | null = null;
/** The catalog grammar of UI mode (the same one the chat pipeline uses), built once. */
function uiGrammar(): Record<string, unknown> {
  grammar ??= grammarJsonSchema();
  return grammar;
}

interface Answer {
  output: string;
  adapters: string[];
  adapterIds: string[];
  latencyMs: number;
  stopReason: GenerateResult["stopReason"] | null;
  error: string | null;
  /** What the engine was asked to apply, and what it answered: for sharing with the live run. */
  uses: AdapterUse[] | null;
  result: GenerateResult | null;
  shared: boolean;
}

const sameUses = (a: AdapterUse[], b: AdapterUse[]): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Sampled instead of greedy (the cycle's self-improvement samples several answers per case). */
export interface CaseSampling {
  temperature: number;
  seed: number;
  /** Drop tokens below this share of the most likely one's probability (llama.cpp min-p). */
  minP?: number;
}

/**
 * Answer one case greedily (or sampled); a failure to resolve or generate becomes the case's
 * error. With `reuse`, a case resolved to the same adapters takes that answer instead of
 * generating.
 */
async function answer(
  target: ContractTarget,
  c: ContractCase,
  contract: Contract,
  opts: Pick<RunContractOptions, "systemPrompt" | "signal">,
  reuse: Answer | null,
  sampling?: CaseSampling,
): Promise<Answer> {
  const text = c.conversation[c.conversation.length - 1]!.content;
  try {
    const resolved = await target.resolve(selectionOf(c.mode), text);
    const shared =
      reuse?.uses && reuse.result && sameUses(reuse.uses, resolved.adapters) ? reuse.result : null;
    const options: GenerateOptions = {
      temperature: sampling?.temperature ?? 0,
      ...(sampling ? { seed: sampling.seed } : {}),
      ...(sampling?.minP !== undefined ? { minP: sampling.minP } : {}),
      maxTokens: c.maxTokens ?? contract.maxTokens,
      adapters: resolved.adapters,
      // Evaluation must be exact whatever the user's KV setting: nothing cached is reused stale.
      // Samples of one case run on one adapter set, whose own sequence is exact: its prompt is
      // evaluated once for all of them.
      kvPolicy: sampling ? "sequence-per-set" : "reevaluate",
    };
    if (c.format === "ui") options.jsonSchema = uiGrammar();
    const result = shared ?? (await target.generate(historyOf(c, opts.systemPrompt), options, opts.signal));
    if (result.stopReason === "abort") throw new Error("the evaluation was cancelled");
    return {
      output: result.text,
      adapters: resolved.routing.adapters.map((a) => `${a.id}@${a.version}`),
      adapterIds: resolved.routing.adapters.map((a) => a.id),
      latencyMs: resolved.routing.latencyMs + result.durationMs,
      stopReason: result.stopReason,
      error: null,
      uses: resolved.adapters,
      result,
      shared: shared !== null,
    };
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    return {
      output: "",
      adapters: [],
      adapterIds: [],
      latencyMs: 0,
      stopReason: null,
      error: err instanceof Error ? err.message : String(err),
      uses: null,
      result: null,
      shared: false,
    };
  }
}

/** One sampled answer to a case, as the contract runner asks it (prompt, UI grammar, budget). */
export interface SampledAnswer {
  output: string;
  /** The adapters the case resolved to (ids), for checks such as routesTo. */
  adapterIds: string[];
  latencyMs: number;
  stopReason: GenerateResult["stopReason"] | null;
  /** The case did not run (resolve or generate failed). */
  error: string | null;
}

/**
 * Answer `c` once at `sampling` (temperature, seed) exactly as runContract asks a case — same
 * history, system prompt, UI grammar and token budget — for a caller that judges the answer
 * itself (check-case.ts checkCase). Never throws for a failure of the case; throws on abort.
 */
export async function sampleCase(
  target: ContractTarget,
  c: ContractCase,
  contract: Contract,
  sampling: CaseSampling,
  opts: Pick<RunContractOptions, "systemPrompt" | "signal"> = {},
): Promise<SampledAnswer> {
  const a = await answer(target, c, contract, opts, null, sampling);
  return {
    output: a.output,
    adapterIds: a.adapterIds,
    latencyMs: a.latencyMs,
    stopReason: a.stopReason,
    error: a.error,
  };
}

/** Every assertion but `regression` (which needs the live version) on an answer. */
async function judge(
  c: ContractCase,
  a: Answer,
  sandbox: CodeSandbox | undefined,
): Promise<AssertionResult[]> {
  const results: AssertionResult[] = [];
  for (const x of c.assertions) {
    if (x.type === "regression") continue;
    results.push(
      a.error
        ? { type: x.type, passed: false, detail: `the case did not run: ${a.error}` }
        : await checkOne(
            x,
            { output: a.output, adapters: a.adapterIds, latencyMs: a.latencyMs, stopReason: a.stopReason },
            { sandbox },
          ),
    );
  }
  return results;
}

/**
 * The contract's degeneracy check over one side's answers (candidate or live): a `distinct`
 * result for every case that takes part; failing where the answer is the same, or nearly, as
 * the answer to a different question.
 */
function degeneracy(
  contract: Contract,
  answers: ReadonlyArray<{ c: ContractCase; a: Answer } | null>,
): Map<string, AssertionResult> {
  const out = new Map<string, AssertionResult>();
  if (!contract.distinctAnswers) return out;
  const present = answers.filter((x): x is { c: ContractCase; a: Answer } => x !== null);
  const degenerate = findDegenerate(
    present.map(({ c, a }) => ({
      id: c.id,
      tags: c.tags,
      prompt: c.conversation[c.conversation.length - 1]!.content,
      reference: c.reference,
      output: a.output,
      distinct: c.distinct,
      error: a.error !== null,
    })),
  );
  for (const { c, a } of present) {
    if (c.distinct === false || a.error !== null) continue;
    const detail = degenerate.get(c.id);
    out.set(c.id, {
      type: "distinct",
      passed: detail === undefined,
      detail: detail ?? "an answer of its own",
    });
  }
  return out;
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** The smoke contract's per-case rule: the candidate's score is not below the live version's. */
function regression(score: number, live: LiveCase | null): AssertionResult {
  if (!live) return { type: "regression", passed: true, detail: "no live version to compare with" };
  const passed = score >= live.score;
  return {
    type: "regression",
    passed,
    detail: `${pct(score)} of assertions pass, live version ${pct(live.score)}${passed ? "" : " (regressed)"}`,
  };
}

/**
 * Run every case of `contract` against `opts.target` (greedy, bounded answers, one at a time),
 * and against `opts.baseline` where the contract compares with the live version, then judge
 * the thresholds and the paired comparison. Never throws for a failing case (it is reported);
 * throws only when `opts.signal` aborts.
 */
export async function runContract(contract: Contract, opts: RunContractOptions): Promise<ContractReport> {
  const now = opts.now ?? Date.now;
  const startedAt = now();
  const t0 = performance.now();
  const paired = opts.baseline !== undefined && contract.thresholds.maxRegression !== undefined;
  const runs: Array<{
    c: ContractCase;
    a: Answer;
    results: AssertionResult[];
    l: Answer | null;
    liveResults: AssertionResult[];
  }> = [];
  for (const [i, c] of contract.cases.entries()) {
    const a = await answer(opts.target, c, contract, opts, null);
    const results = await judge(c, a, opts.sandbox);
    const hasRegression = c.assertions.some((x) => x.type === "regression");
    let l: Answer | null = null;
    let liveResults: AssertionResult[] = [];
    if (opts.baseline && (paired || hasRegression)) {
      l = await answer(opts.baseline, c, contract, opts, opts.shareAnswers ? a : null);
      liveResults = l.shared ? results : await judge(c, l, opts.sandbox);
    }
    runs.push({ c, a, results, l, liveResults });
    opts.onProgress?.(i + 1, contract.cases.length, c.id);
  }
  // Degeneracy is judged over all of one side's answers, then joins each case's results.
  const distinct = degeneracy(
    contract,
    runs.map(({ c, a }) => ({ c, a })),
  );
  const liveDistinct = degeneracy(
    contract,
    runs.map(({ c, l }) => (l ? { c, a: l } : null)),
  );
  const cases: CaseReport[] = [];
  for (const { c, a, results: judged, l, liveResults: liveJudged } of runs) {
    const results = [...judged];
    const d = distinct.get(c.id);
    if (d) results.push(d);
    const score = caseScore(results);
    const hasRegression = c.assertions.some((x) => x.type === "regression");
    let live: LiveCase | null = null;
    if (l) {
      const liveResults = [...liveJudged];
      const ld = liveDistinct.get(c.id);
      if (ld) liveResults.push(ld);
      live = {
        passed: l.error === null && liveResults.every((r) => r.passed),
        score: l.error ? 0 : caseScore(liveResults),
        output: l.output,
        adapters: l.adapters,
        error: l.error,
        shared: l.shared,
        reason: l.error ? `error: ${l.error}` : reasonOf(liveResults),
      };
    }
    const taskPassed = a.error === null && results.every((r) => r.passed);
    if (hasRegression) results.push(regression(score, live));
    cases.push({
      id: c.id,
      description: c.description,
      tags: c.tags,
      mode: c.mode,
      passed: a.error === null && results.every((r) => r.passed),
      reason: a.error ? `error: ${a.error}` : reasonOf(results),
      score,
      assertions: results,
      output: a.output,
      adapters: a.adapters,
      latencyMs: Math.round(a.latencyMs * 10) / 10,
      stopReason: a.stopReason,
      error: a.error,
      live,
      change: live === null ? null : live.passed === taskPassed ? "same" : taskPassed ? "fixed" : "broken",
    });
  }
  return summarize(contract, cases, {
    startedAt,
    durationMs: performance.now() - t0,
    candidate: opts.candidate ?? null,
    paired,
  });
}
