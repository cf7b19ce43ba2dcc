import type { AdapterSelection, RoutingInfo } from "../../api";
import type { AdapterUse, ChatTurn, GenerateOptions, GenerateResult } from "../engine/types";
import { type AssertionResult, caseScore, checkAssertion } from "./assertions";
import type { Contract, ContractCase } from "./contract-schema";

/** The adapters and engine a contract runs against (the live set, or one with a candidate in it). */
export interface ContractTarget {
  /** Resolve a case's mode for its last user text (the router decides "auto"). */
  resolve(
    selection: AdapterSelection,
    text: string,
  ): Promise<{ routing: RoutingInfo; adapters: AdapterUse[] }>;
  generate(history: ChatTurn[], options: GenerateOptions, signal?: AbortSignal): Promise<GenerateResult>;
}

export interface CaseReport {
  id: string;
  description: string;
  tags: string[];
  mode: string;
  passed: boolean;
  /** Share of the case's assertions that passed (regression excluded). */
  score: number;
  assertions: AssertionResult[];
  output: string;
  /** Adapters that answered ("id@version"), first = first choice. */
  adapters: string[];
  latencyMs: number;
  /** Set when the case could not run at all (e.g. the pinned adapter is not installed). */
  error: string | null;
}

export interface TagReport {
  passed: number;
  total: number;
  passRate: number;
  threshold: number;
  ok: boolean;
}

export interface ContractReport {
  contract: string;
  version: string;
  startedAt: number;
  durationMs: number;
  passed: boolean;
  passRate: number;
  threshold: number;
  /** Ids of the cases that failed, in contract order. */
  failing: string[];
  byTag: Record<string, TagReport>;
  cases: CaseReport[];
  /** The version under evaluation, when a candidate replaced a live adapter. */
  candidate: { adapterId: string; version: string } | null;
}

export interface RunContractOptions {
  target: ContractTarget;
  /**
   * The live set, for `regression` assertions: each such case also runs against it, and the
   * target's score must not fall below. Without it regression assertions pass ("nothing live").
   */
  baseline?: ContractTarget;
  candidate?: { adapterId: string; version: string };
  systemPrompt?: string;
  onProgress?: (done: number, total: number, caseId: string) => void;
  signal?: AbortSignal;
  now?: () => number;
}

function selectionOf(mode: string): AdapterSelection {
  return mode === "auto" || mode === "base" ? mode : { pinned: mode };
}

function historyOf(c: ContractCase, systemPrompt: string | undefined): ChatTurn[] {
  const turns: ChatTurn[] = c.conversation.map((m) => ({ role: m.role, text: m.content }));
  if (systemPrompt && turns[0]?.role !== "system") turns.unshift({ role: "system", text: systemPrompt });
  return turns;
}

interface Answer {
  output: string;
  adapters: string[];
  adapterIds: string[];
  latencyMs: number;
  error: string | null;
}

/** Answer one case greedily; a failure to resolve or generate becomes the case's error. */
async function answer(
  target: ContractTarget,
  c: ContractCase,
  contract: Contract,
  opts: RunContractOptions,
): Promise<Answer> {
  const text = c.conversation[c.conversation.length - 1]!.content;
  try {
    const resolved = await target.resolve(selectionOf(c.mode), text);
    const result = await target.generate(
      historyOf(c, opts.systemPrompt),
      {
        temperature: 0,
        maxTokens: c.maxTokens ?? contract.maxTokens,
        adapters: resolved.adapters,
        // Evaluation must be exact whatever the user's KV setting: nothing cached is reused stale.
        kvPolicy: "reevaluate",
      },
      opts.signal,
    );
    if (result.stopReason === "abort") throw new Error("the evaluation was cancelled");
    return {
      output: result.text,
      adapters: resolved.routing.adapters.map((a) => `${a.id}@${a.version}`),
      adapterIds: resolved.routing.adapters.map((a) => a.id),
      latencyMs: resolved.routing.latencyMs + result.durationMs,
      error: null,
    };
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    return {
      output: "",
      adapters: [],
      adapterIds: [],
      latencyMs: 0,
      error: err instanceof Error ? err.message : String(err),
    };
  }
}

function judge(c: ContractCase, a: Answer): AssertionResult[] {
  return c.assertions
    .filter((x) => x.type !== "regression")
    .map((x) =>
      a.error
        ? { type: x.type, passed: false, detail: `the case did not run: ${a.error}` }
        : checkAssertion(x, {
            output: a.output,
            adapters: a.adapterIds,
            latencyMs: a.latencyMs,
          }),
    );
}

/**
 * Run every case of `contract` against `opts.target` (greedy, bounded answers, one at a time)
 * and judge the thresholds. Never throws for a failing case (it is reported); throws only when
 * `opts.signal` aborts.
 */
export async function runContract(contract: Contract, opts: RunContractOptions): Promise<ContractReport> {
  const now = opts.now ?? Date.now;
  const startedAt = now();
  const t0 = performance.now();
  const cases: CaseReport[] = [];
  for (const [i, c] of contract.cases.entries()) {
    const a = await answer(opts.target, c, contract, opts);
    const results = judge(c, a);
    const score = caseScore(results);
    if (c.assertions.some((x) => x.type === "regression")) {
      results.push(await regression(c, score, contract, opts));
    }
    cases.push({
      id: c.id,
      description: c.description,
      tags: c.tags,
      mode: c.mode,
      passed: a.error === null && results.every((r) => r.passed),
      score,
      assertions: results,
      output: a.output,
      adapters: a.adapters,
      latencyMs: Math.round(a.latencyMs * 10) / 10,
      error: a.error,
    });
    opts.onProgress?.(i + 1, contract.cases.length, c.id);
  }
  return summarize(contract, cases, startedAt, performance.now() - t0, opts.candidate ?? null);
}

async function regression(
  c: ContractCase,
  score: number,
  contract: Contract,
  opts: RunContractOptions,
): Promise<AssertionResult> {
  if (!opts.baseline) return { type: "regression", passed: true, detail: "no live version to compare with" };
  const live = await answer(opts.baseline, c, contract, opts);
  const liveScore = live.error ? 0 : caseScore(judge(c, live));
  const passed = score >= liveScore;
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  return {
    type: "regression",
    passed,
    detail: `${pct(score)} of assertions pass, live version ${pct(liveScore)}${passed ? "" : " (regressed)"}`,
  };
}

function summarize(
  contract: Contract,
  cases: CaseReport[],
  startedAt: number,
  durationMs: number,
  candidate: ContractReport["candidate"],
): ContractReport {
  const rate = (list: CaseReport[]): number =>
    list.length === 0 ? 1 : list.filter((c) => c.passed).length / list.length;
  const byTag: Record<string, TagReport> = {};
  for (const tag of [...new Set(cases.flatMap((c) => c.tags))].sort()) {
    const tagged = cases.filter((c) => c.tags.includes(tag));
    const threshold = contract.thresholds.byTag[tag] ?? contract.thresholds.minPassRate;
    const passRate = rate(tagged);
    byTag[tag] = {
      passed: tagged.filter((c) => c.passed).length,
      total: tagged.length,
      passRate,
      threshold,
      ok: passRate >= threshold,
    };
  }
  const passRate = rate(cases);
  const threshold = contract.thresholds.minPassRate;
  return {
    contract: contract.contract,
    version: contract.version,
    startedAt,
    durationMs: Math.round(durationMs),
    passed: passRate >= threshold && Object.values(byTag).every((t) => t.ok),
    passRate,
    threshold,
    failing: cases.filter((c) => !c.passed).map((c) => c.id),
    byTag,
    cases,
    candidate,
  };
}
