/**
 * The data-preparation pipeline: stored feedback → filtered, deduplicated, length-checked
 * training lines in a train and a held-out split, with a count for every item and line. Three
 * types: sft, preference, and groups (users' trajectories as GRPO groups, groups.ts).
 * Filters run in this order and a line is counted under the first that drops it:
 * malformed, sameAnswer, toolFailed (candidates), consent, pii, injection, thumbsDown,
 * followUpCorrected, customSystem, truncated, tooLong, duplicate (exact line); then lines of one
 * prompt cluster (near-duplicate prompts) fold: the majority answer's first line is kept, the
 * others are nearDuplicate (same answer) or conflict (outvoted, or every line of a tied cluster);
 * last, installCap drops an install's lines over its share of a split (quality.ts).
 */
import { createHash } from "node:crypto";
import { hasText } from "../ingest";
import { FeedbackItem, hasCustomSystem } from "../../common/feedback-protocol";
import type { StoredItem } from "../store";
import {
  buildCandidates,
  lineTexts,
  longestSequence,
  similarityText,
  type Example,
  type ExportType,
} from "./candidates";
import { DEFAULT_BYTES_PER_TOKEN, DEFAULT_MAX_TOKENS, tokenCounter } from "./length";
import { foldNearDuplicates, NEAR_DUPLICATE_THRESHOLD, SHINGLE_SIZE } from "./near-duplicates";
import { countPairing, countTrained, countTrajectory, emptyTrajectoryCounts } from "./negatives";
import { answerKey, promptKey } from "./normalize";
import {
  DEFAULT_MAX_INSTALL_SHARE,
  MIN_LINES_PER_INSTALL,
  answerWasCut,
  installCap,
  isInjectionShaped,
  resolveCluster,
  voteText,
  type QualityReport,
} from "./quality";
import { noDrops, type ExportReport } from "./report";
import type { DomainCount } from "./source";
import { DEFAULT_HELDOUT_SHARE, splitOf, type Split } from "./split";

/** A PII scanner with the shape of the app's `redact(text)`: findings empty = clean. */
export type PiiScan = (text: string) => { findings: readonly unknown[] };

export interface PrepareOptions {
  type: ExportType;
  scan: PiiScan;
  /** Longest example in estimated tokens of the base's context (default 4096). */
  maxTokens?: number;
  /** Share of prompts held out (default 0.1). */
  heldoutShare?: number;
  /** Bytes per token of the estimate (default the app's conservative 3). */
  bytesPerToken?: number;
  /** Jaccard of character shingles at which two lines are one (default 0.8). */
  nearDuplicateThreshold?: number;
  /** The split `report.written` counts (default train). */
  split?: Split;
  /** Most of a split's lines one install may hold (default DEFAULT_MAX_INSTALL_SHARE). */
  maxInstallShare?: number;
}

export interface PrepareInput {
  domain: string;
  /** Stored items of the domain, oldest first: the first of near-duplicates is kept. */
  items: readonly StoredItem[];
  /** Ratings of every domain, for the thumbs-down lookup; default: the domain's own. */
  ratings?: readonly StoredItem[];
  /** Per-domain item counts for the report; default: none. */
  domains?: Record<string, DomainCount>;
}

export interface PreparedExport {
  /** JSON lines (without newline) of each split. */
  lines: Record<Split, string[]>;
  report: ExportReport;
}

/** The options with every default filled in, as the report records them. */
export function resolveOptions(opts: PrepareOptions): ExportReport["options"] {
  return {
    maxTokens: opts.maxTokens ?? DEFAULT_MAX_TOKENS,
    heldoutShare: opts.heldoutShare ?? DEFAULT_HELDOUT_SHARE,
    bytesPerToken: opts.bytesPerToken ?? DEFAULT_BYTES_PER_TOKEN,
    nearDuplicateThreshold: opts.nearDuplicateThreshold ?? NEAR_DUPLICATE_THRESHOLD,
    shingleSize: SHINGLE_SIZE,
    maxInstallShare: opts.maxInstallShare ?? DEFAULT_MAX_INSTALL_SHARE,
  };
}

/** Builds both splits of one domain's dataset and the report of every count. */
export function prepareExport(input: PrepareInput, opts: PrepareOptions): PreparedExport {
  const options = resolveOptions(opts);
  const dropped = noDrops();
  const byKind: Record<string, number> = {};
  const items: FeedbackItem[] = [];
  const installOf = new Map<FeedbackItem, string>();
  for (const row of input.items) {
    const parsed = FeedbackItem.safeParse(safeJson(row.json));
    const kind = parsed.success ? parsed.data.kind : "unknown";
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    if (parsed.success) {
      items.push(parsed.data);
      installOf.set(parsed.data, row.installId);
    } else dropped.malformed++;
  }
  // Answers that called tools, kept with their outcome: failed ones are counted as negatives.
  const trajectories = emptyTrajectoryCounts();
  const outcomes = items.flatMap((item) => countTrajectory(trajectories, item) ?? []);
  countPairing(trajectories, outcomes, opts.type);
  const thumbsDown = thumbsDownKeys(input.ratings ? parseAll(input.ratings) : items);
  const corrected = correctedKeys(items);

  const candidates = buildCandidates(items, opts.type);
  const count = tokenCounter(options.bytesPerToken);
  const seen = new Set<string>();
  const survivors: { example: Example; json: string; install: string }[] = [];
  for (const c of candidates) {
    if ("drop" in c) {
      dropped[c.drop]++;
      continue;
    }
    const { example } = c;
    const reason = dropReason(example, { thumbsDown, corrected }, opts.scan, count, options.maxTokens);
    if (reason) {
      dropped[reason]++;
      continue;
    }
    const json = JSON.stringify(example.line);
    const hash = createHash("sha256").update(json).digest("hex");
    if (seen.has(hash)) {
      dropped.duplicate++;
      continue;
    }
    seen.add(hash);
    survivors.push({ example, json, install: installOf.get(example.items[0]!) ?? "" });
  }

  const fold = foldNearDuplicates(
    survivors.map((s) => similarityText(s.example)),
    options.nearDuplicateThreshold,
  );
  // Prompt clusters: a kept line and the lines folded into it (into its first similar one).
  const clusters = new Map<number, number[]>(fold.kept.map((i) => [i, [i]]));
  for (const f of fold.folded) clusters.get(f.into[0]!)!.push(f.index);
  const quality = emptyQuality(options.maxInstallShare!);
  const kept: number[] = [];
  for (const members of clusters.values()) {
    const verdict = resolveCluster(
      members.map((i) => ({
        seq: i,
        answer: voteText(survivors[i]!.example.targets),
        install: survivors[i]!.install,
      })),
    );
    countVerdict(verdict, dropped, quality);
    if (verdict.keep !== null) kept.push(verdict.keep);
  }
  kept.sort((a, b) => a - b);
  const keys = survivors.map((s) => promptKey(s.example.prompt));
  const sideOf = splitSides(keys, fold.folded, options.heldoutShare);
  const bySide: Record<Split, number[]> = { train: [], heldout: [] };
  for (const i of kept) bySide[sideOf(keys[i]!)].push(i);
  const lines: Record<Split, string[]> = { train: [], heldout: [] };
  for (const side of ["train", "heldout"] as const) {
    const installs = bySide[side].map((i) => survivors[i]!.install);
    const capped = capInstalls(installs, options.maxInstallShare!, quality.installCap[side]);
    dropped.installCap += installs.length - capped.length;
    for (const j of capped) {
      const survivor = survivors[bySide[side][j]!]!;
      lines[side].push(survivor.json);
      // Held-out lines are measured, not trained on.
      if (side === "train") countTrained(trajectories, opts.type, survivor.example.negatives);
    }
  }

  const split = opts.split ?? "train";
  const report: ExportReport = {
    type: opts.type,
    domain: input.domain,
    split,
    options,
    items: input.items.length,
    byKind,
    candidates: candidates.length + (input.items.length - items.length),
    written: lines[split].length,
    splits: { train: lines.train.length, heldout: lines.heldout.length },
    dropped,
    quality,
    ...(trajectories.items > 0 ? { trajectories } : {}),
    domains: input.domains ?? {},
  };
  return { lines, report };
}

/** The quality report before any cluster or cap is counted. */
export function emptyQuality(maxShare: number): QualityReport {
  const none = { installs: 0, cap: null, capped: 0 };
  return {
    conflictClusters: 0,
    resolvedByMajority: 0,
    tiedClusters: 0,
    installCap: { maxShare, minLines: MIN_LINES_PER_INSTALL, train: { ...none }, heldout: { ...none } },
  };
}

/** Counts a cluster's verdict into the drops and the quality report. */
export function countVerdict(
  verdict: ReturnType<typeof resolveCluster>,
  dropped: ExportReport["dropped"],
  quality: QualityReport,
): void {
  dropped.nearDuplicate += verdict.same.length;
  dropped.conflict += verdict.conflict.length;
  if (!verdict.conflicting) return;
  quality.conflictClusters++;
  if (verdict.keep === null) quality.tiedClusters++;
  else quality.resolvedByMajority++;
}

/**
 * The positions of a split's lines that stay under the per-install cap (`installs` = each
 * line's install, in export order; an install's first lines are kept), recording the cap.
 */
export function capInstalls(
  installs: readonly string[],
  share: number,
  out: QualityReport["installCap"]["train"],
): number[] {
  const counts = new Map<string, number>();
  for (const i of installs) counts.set(i, (counts.get(i) ?? 0) + 1);
  const cap = installCap([...counts.values()], share);
  out.installs = counts.size;
  out.cap = cap;
  out.capped = cap === null ? 0 : [...counts.values()].filter((n) => n > cap).length;
  if (cap === null) return installs.map((_, j) => j);
  const seen = new Map<string, number>();
  const keep: number[] = [];
  installs.forEach((inst, j) => {
    const n = (seen.get(inst) ?? 0) + 1;
    seen.set(inst, n);
    if (n <= cap) keep.push(j);
  });
  return keep;
}

/** A set of keys, in memory or looked up in the streaming export's scratch database. */
export interface KeySet {
  has(key: string): boolean;
}

/** The first per-line filter that drops the example, or null. */
export function dropReason(
  example: Example,
  bad: { thumbsDown: KeySet; corrected: KeySet },
  scan: PiiScan,
  count: (m: Example["prompt"]) => number,
  maxTokens: number,
):
  | "consent"
  | "pii"
  | "injection"
  | "thumbsDown"
  | "followUpCorrected"
  | "customSystem"
  | "truncated"
  | "tooLong"
  | null {
  // Text without the text consent never leaves the service, whatever stored it.
  if (example.items.some((i) => hasText(i) && i.consent !== "ratings_and_text")) return "consent";
  // Dropped, never re-redacted: a line the client's redactor missed is not trusted.
  if (lineTexts(example.line).some((t) => scan(t).findings.length > 0)) return "pii";
  // Held out, never trained: an adapter must not learn to write (or obey) an injection.
  if (lineTexts(example.line).some(isInjectionShaped)) return "injection";
  const keys = example.targets.map((t) => answerKey(t.context, t.answer));
  if (keys.some((k) => bad.thumbsDown.has(k))) return "thumbsDown";
  if (keys.some((k) => bad.corrected.has(k))) return "followUpCorrected";
  // A line is laid out under the trainer's system turn; an answer that followed the user's own
  // system prompt would teach the adapter a reply to instructions the line does not show.
  if (example.items.some((i) => hasCustomSystem(i.versions))) return "customSystem";
  // The learned answer stopped at the token limit: an incomplete answer is not a lesson. For a
  // pair only the chosen side's item (the first) is learned; a cut rejected side is fine.
  // A group learns from (or away from) every answer in it.
  const learned =
    "messages" in example.line || "completions" in example.line ? example.items : example.items.slice(0, 1);
  if (learned.some(answerWasCut)) return "truncated";
  if (count(longestSequence(example.line)) > maxTokens) return "tooLong";
  return null;
}

/** Keys (prompt + normalized answer) of every answer someone rated bad. */
function thumbsDownKeys(items: readonly FeedbackItem[]): Set<string> {
  const keys = new Set<string>();
  for (const item of items) {
    const key = thumbsDownKey(item);
    if (key !== null) keys.add(key);
  }
  return keys;
}

/** The answer key a bad rating names, or null when the item is not one. */
export function thumbsDownKey(item: FeedbackItem): string | null {
  if (
    item.kind !== "rating" ||
    item.rating !== "bad" ||
    item.response === null ||
    item.response === undefined
  )
    return null;
  const prompt = (item.prompt ?? []).map((t) => ({ role: t.role, content: t.text }));
  return answerKey(prompt, item.response);
}

/** Keys of every answer the user's next message corrected (follow_up items, corrected: true). */
function correctedKeys(items: readonly FeedbackItem[]): Set<string> {
  const keys = new Set<string>();
  for (const item of items) {
    const key = correctedKey(item);
    if (key !== null) keys.add(key);
  }
  return keys;
}

/** The answer key a correcting follow-up names, or null when the item is not one. */
export function correctedKey(item: FeedbackItem): string | null {
  if (item.kind !== "follow_up" || item.interaction?.corrected !== true) return null;
  if (item.response === null || item.response === undefined) return null;
  const prompt = (item.prompt ?? []).map((t) => ({ role: t.role, content: t.text }));
  return answerKey(prompt, item.response);
}

/**
 * The side of each prompt key. A key is held out when its hash says so, and so is every key
 * joined to it through a folded near-duplicate (union-find): a held-out prompt never trains,
 * and no kept line is a near-duplicate of one on the other side.
 */
function splitSides(
  keys: readonly string[],
  folded: readonly { index: number; into: number[] }[],
  share: number,
): (key: string) => Split {
  const parent = new Map<string, string>();
  const find = (k: string): string => {
    let root = k;
    while (parent.has(root) && parent.get(root) !== root) root = parent.get(root)!;
    parent.set(k, root);
    return root;
  };
  for (const f of folded) for (const j of f.into) parent.set(find(keys[f.index]!), find(keys[j]!));
  const heldoutRoots = new Set<string>();
  for (const k of keys) if (splitOf(k, share) === "heldout") heldoutRoots.add(find(k));
  return (key) => (heldoutRoots.has(find(key)) ? "heldout" : "train");
}

function parseAll(rows: readonly StoredItem[]): FeedbackItem[] {
  return rows.flatMap((r) => {
    const parsed = FeedbackItem.safeParse(safeJson(r.json));
    return parsed.success ? [parsed.data] : [];
  });
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
