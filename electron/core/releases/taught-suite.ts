/**
 * Taught suites (issue 26): each improvement cycle's held-out split of user data becomes a
 * versioned suite stored with the release (lineage.details.taught), and every later candidate
 * is judged on it, in the cloud gate (scripts/cycle/cloud-gate.ts) and in the app's gate
 * (gate-target.ts):
 *  - its own cycle's suite must pass at TAUGHT_MIN_RATE;
 *  - every earlier suite within TAUGHT_MAX_DROP of the live version on the same cases (no
 *    forgetting), or of the rate recorded when that suite was accepted when nothing is live.
 * A case passes when the answer is RIGHT: it carries the taught answer's content (judgeTaught),
 * whatever its format. Pure: the runner generates, this module builds the cases and judges.
 */
import type { CaseReport, ContractReport } from "../contract/contract-verdict";
import { gunzipSync, gzipSync } from "node:zlib";
import { parseContract, type Contract } from "../contract/contract-schema";

/** Share of its own taught suite a candidate must answer right. */
export const TAUGHT_MIN_RATE = 0.5;
/** How far an earlier suite's rate may fall below the live version's on the same cases. */
export const TAUGHT_MAX_DROP = 0.1;
/**
 * Most cases one suite keeps, and most suites a release carries (the newest): the lineage
 * travels in the publish request's manifest header (16 KiB in Node by default), gzipped.
 */
export const TAUGHT_SUITE_MAX_CASES = 24;
export const TAUGHT_MAX_SUITES = 8;
/** Share of the taught answer's key words an answer must carry. */
export const KEY_RECALL = 0.6;
/** Share of the answer's key words that must come from the taught answer (no topic dump). */
export const KEY_PRECISION = 0.3;
/** Tag on every taught case of a contract run. */
export const TAUGHT_TAG = "taught";

export interface TaughtCase {
  id: string;
  /** The conversation before the taught answer (no system turn), ending with the user. */
  conversation: { role: "user" | "assistant"; content: string }[];
  /** The answer the user taught (a correction or a good-rated answer). */
  answer: string;
}

export interface TaughtSuite {
  /** `<domain>@<version>`: the version whose cycle taught it. */
  id: string;
  domain: string;
  version: string;
  cases: TaughtCase[];
  /** The candidate's rate on it when it was accepted (the reference when nothing is live). */
  acceptedRate: number | null;
}

/**
 * What travels in a release's lineage (details.taught): the suites so far, oldest first (its
 * own last), as gzipped JSON in base64 (`gz`); `ids` names them for people reading the index.
 */
export interface TaughtLineage {
  ids: string[];
  /** The suites' cases (gzipped JSON), only when the operator chose to publish them. */
  gz?: string;
}

/**
 * The lineage form of `suites` (the newest TAUGHT_MAX_SUITES). The cases are users' own prompts
 * and answers, and the registry's lineage goes to every install: by default only the ids are
 * published (the cloud keeps the cases beside its replay lines, and the cloud gate judges them);
 * `withCases` puts them in as well, for a registry whose installs are one team's own.
 */
export function encodeTaught(suites: readonly TaughtSuite[], withCases = false): TaughtLineage {
  const kept = suites.slice(-TAUGHT_MAX_SUITES);
  const ids = kept.map((s) => s.id);
  return withCases ? { ids, gz: gzipSync(JSON.stringify(kept)).toString("base64") } : { ids };
}

/**
 * The suite of one cycle from its held-out SFT lines ({messages}): each line's last assistant
 * turn is the taught answer, what comes before it (system turns left out) the conversation.
 */
export function taughtSuiteFrom(lines: readonly unknown[], domain: string, version: string): TaughtSuite {
  const cases: TaughtCase[] = [];
  for (const line of lines) {
    if (cases.length >= TAUGHT_SUITE_MAX_CASES) break;
    const messages = (line as { messages?: { role?: unknown; content?: unknown }[] }).messages;
    if (!Array.isArray(messages)) continue;
    const last = messages.length - 1;
    const answer = messages[last];
    if (answer?.role !== "assistant" || typeof answer.content !== "string" || !answer.content.trim())
      continue;
    if (messages.some((m) => "tool_calls" in m || m.role === "tool")) continue;
    const conversation = messages
      .slice(0, last)
      .filter((m) => m.role === "user" || m.role === "assistant")
      .map((m) => ({ role: m.role as "user" | "assistant", content: String(m.content) }));
    if (conversation[conversation.length - 1]?.role !== "user") continue;
    cases.push({ id: caseId(domain, version, cases.length + 1), conversation, answer: answer.content });
  }
  return { id: `${domain}@${version}`, domain, version, cases, acceptedRate: null };
}

function caseId(domain: string, version: string, n: number): string {
  return `${domain}-taught-${version}-${n}`.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100);
}

/** The suites a release carries (lineage.details.taught), or none (also when unreadable). */
export function taughtOf(details: unknown): TaughtSuite[] {
  const taught = (details as { taught?: Partial<TaughtLineage> } | null | undefined)?.taught;
  if (!taught || typeof taught.gz !== "string") return [];
  let suites: unknown;
  try {
    suites = JSON.parse(gunzipSync(Buffer.from(taught.gz, "base64")).toString("utf8"));
  } catch {
    return [];
  }
  if (!Array.isArray(suites)) return [];
  return (suites as TaughtSuite[]).filter(
    (s) => s && typeof s.id === "string" && Array.isArray(s.cases) && s.cases.length > 0,
  );
}

/** Answer length for a case: room for the taught answer (bytes, a byte-level tokenizer's worst). */
function maxTokensFor(answer: string): number {
  return Math.min(512, Math.max(16, Buffer.byteLength(answer) + 8));
}

/**
 * The suites as a contract the app's runner can run, candidate and live side by side (paired):
 * every case pinned to the suite's domain. Its one assertion is only a placeholder (the runner
 * needs one); judgeTaughtRun decides.
 */
export function taughtContract(suites: readonly TaughtSuite[]): Contract {
  // Parsed, so the contract format's defaults fill in whatever this module does not set.
  return parseContract(
    {
      contract: "taught",
      version: "1.0.0",
      description: "What earlier cycles taught, from their held-out user data.",
      maxTokens: 64,
      thresholds: { minPassRate: 0, byTag: {}, maxRegression: 1 },
      cases: suites.flatMap((s) =>
        s.cases.map((c) => ({
          id: c.id,
          description: `taught by ${s.id}`,
          tags: [TAUGHT_TAG, `${TAUGHT_TAG}:${s.id}`],
          conversation: c.conversation,
          mode: s.domain,
          maxTokens: maxTokensFor(c.answer),
          assertions: [{ type: "maxChars", max: 1_000_000 }],
        })),
      ),
    },
    "taught",
  );
}

/** Lower-case words and numbers of a text (letters of any script, digits, `_`). */
function words(text: string): string[] {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}_]+/gu) ?? []
  );
}

const STOP = new Set(
  (
    "a an the and or but if then else of to in on at by for with from as is are was were be been " +
    "being it its this that these those there here i you he she we they me my your our their his " +
    "her them us do does did done not no yes so than too very can could will would shall should " +
    "may might must have has had just also about into over under up down out off more most some " +
    "any all each other such only own same what which who whom whose when where why how"
  ).split(" "),
);

/** The key words of a text: content words (no stop words, one letter only if a digit). */
export function keyWords(text: string): Set<string> {
  return new Set(words(text).filter((w) => !STOP.has(w) && (w.length > 1 || /\d/.test(w))));
}

export interface TaughtJudgement {
  passed: boolean;
  /** Share of the taught answer's key words the answer carries. */
  recall: number;
  detail: string;
}

/**
 * Whether `output` is right by the taught `expected` answer: it carries at least KEY_RECALL of
 * the taught answer's key words and at least KEY_PRECISION of its own key words come from it
 * (a dump of every topic is not right). Format (punctuation, case, fences) does not count. An
 * answer of stop words only must match them all. The one function to switch to contract v3's
 * reference check once that lands.
 */
export function judgeTaught(output: string, expected: string): TaughtJudgement {
  const want = keyWords(expected);
  if (want.size === 0) {
    const [a, b] = [words(output).join(" "), words(expected).join(" ")];
    const passed = a === b;
    return {
      passed,
      recall: passed ? 1 : 0,
      detail: passed ? "same words" : `expected "${expected.slice(0, 80)}"`,
    };
  }
  const got = keyWords(output);
  const hit = [...want].filter((w) => got.has(w));
  const recall = hit.length / want.size;
  const precision = got.size === 0 ? 0 : [...got].filter((w) => want.has(w)).length / got.size;
  const passed = recall >= KEY_RECALL && precision >= KEY_PRECISION;
  const missing = [...want].filter((w) => !got.has(w)).slice(0, 6);
  const detail = passed
    ? `carries ${hit.length} of ${want.size} key words of the taught answer`
    : `carries ${hit.length} of ${want.size} key words of the taught answer` +
      (missing.length ? ` (missing: ${missing.join(", ")})` : "") +
      (precision < KEY_PRECISION ? `; only ${Math.round(precision * 100)}% of its words are on topic` : "");
  return { passed, recall, detail };
}

export interface SuiteResult {
  id: string;
  version: string;
  /** The candidate's own cycle's suite (judged by TAUGHT_MIN_RATE). */
  own: boolean;
  cases: number;
  candidatePassed: number;
  candidateRate: number;
  /** The live version's rate on the same cases; null when nothing of the domain is live. */
  liveRate: number | null;
  /** What the candidate must reach. */
  required: number;
  ok: boolean;
  failing: string[];
}

export interface TaughtVerdict {
  passed: boolean;
  suites: SuiteResult[];
  /** Taught cases the candidate answered wrong, in suite order. */
  failing: string[];
  reasons: string[];
  /** The taught cases, rejudged (pass = right), for the merged report. */
  cases: CaseReport[];
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

/**
 * Judges a run of taughtContract(suites): per suite the candidate's rate against its rule. The
 * suite named `ownId` is the candidate's own (TAUGHT_MIN_RATE); the others must stay within
 * TAUGHT_MAX_DROP of the live version's rate (or of their accepted rate when nothing is live).
 */
export function judgeTaughtRun(
  run: ContractReport,
  suites: readonly TaughtSuite[],
  ownId: string | null,
  minRate = TAUGHT_MIN_RATE,
): TaughtVerdict {
  const byId = new Map(run.cases.map((c) => [c.id, c]));
  const results: SuiteResult[] = [];
  const cases: CaseReport[] = [];
  for (const s of suites) {
    let candidatePassed = 0;
    let livePassed = 0;
    let liveRan = 0;
    const failing: string[] = [];
    for (const t of s.cases) {
      const c = byId.get(t.id);
      if (!c) continue;
      const j = c.error ? { passed: false, recall: 0, detail: c.error } : judgeTaught(c.output, t.answer);
      const live = c.live && !c.live.error ? judgeTaught(c.live.output, t.answer) : null;
      if (j.passed) candidatePassed++;
      else failing.push(t.id);
      if (live) {
        liveRan++;
        if (live.passed) livePassed++;
      }
      cases.push({
        ...c,
        passed: j.passed,
        score: j.recall,
        assertions: [{ type: "contains", passed: j.passed, detail: `taught answer: ${j.detail}` }],
        live: c.live && live ? { ...c.live, passed: live.passed, score: live.recall } : c.live,
        change: live === null ? null : live.passed === j.passed ? "same" : j.passed ? "fixed" : "broken",
      });
    }
    const n = s.cases.filter((t) => byId.has(t.id)).length;
    const candidateRate = n === 0 ? 1 : candidatePassed / n;
    const liveRate = liveRan === n && n > 0 ? livePassed / n : null;
    const own = s.id === ownId;
    const reference = liveRate ?? s.acceptedRate;
    const required = own
      ? minRate
      : reference === null
        ? 0
        : Math.max(0, Math.min(reference, 1) - TAUGHT_MAX_DROP);
    const ok = candidateRate + 1e-9 >= required;
    results.push({
      id: s.id,
      version: s.version,
      own,
      cases: n,
      candidatePassed,
      candidateRate,
      liveRate,
      required,
      ok,
      failing,
    });
  }
  const reasons = results
    .filter((r) => !r.ok)
    .map((r) =>
      r.own
        ? `Taught suite ${r.id} (this cycle): ${r.candidatePassed}/${r.cases} right (${pct(r.candidateRate)}), below ${pct(r.required)}; failing: ${r.failing.join(", ")}`
        : `Taught suite ${r.id} forgotten: ${r.candidatePassed}/${r.cases} right (${pct(r.candidateRate)}), ` +
          `${r.liveRate === null ? "accepted at" : "live"} ${pct(r.liveRate ?? r.required + TAUGHT_MAX_DROP)}, ` +
          `allowed ${pct(r.required)}; failing: ${r.failing.join(", ")}`,
    );
  return {
    passed: reasons.length === 0,
    suites: results,
    failing: results.flatMap((r) => r.failing),
    reasons,
    cases,
  };
}

/** The contract report with the taught verdict merged in (cases, failing ids, reasons, verdict). */
export function withTaught(
  report: ContractReport,
  taught: TaughtVerdict,
): ContractReport & { taught: TaughtVerdict } {
  return {
    ...report,
    passed: report.passed && taught.passed,
    failing: [...report.failing, ...taught.failing],
    cases: [...report.cases, ...taught.cases],
    reasons: [...report.reasons, ...taught.reasons],
    taught,
  };
}
