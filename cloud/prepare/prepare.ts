/**
 * The data-preparation pipeline: stored feedback → filtered, deduplicated, length-checked
 * training lines in a train and a held-out split, with a count for every item and line.
 * Filters run in this order and a line is counted under the first that drops it:
 * malformed, sameAnswer, toolFailed (candidates), consent, pii, thumbsDown, followUpCorrected,
 * customSystem, tooLong, duplicate (exact line), nearDuplicate (folded into a kept line).
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
import { answerKey, promptKey } from "./normalize";
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
  };
}

/** Builds both splits of one domain's dataset and the report of every count. */
export function prepareExport(input: PrepareInput, opts: PrepareOptions): PreparedExport {
  const options = resolveOptions(opts);
  const dropped = noDrops();
  const byKind: Record<string, number> = {};
  const items: FeedbackItem[] = [];
  for (const row of input.items) {
    const parsed = FeedbackItem.safeParse(safeJson(row.json));
    const kind = parsed.success ? parsed.data.kind : "unknown";
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    if (parsed.success) items.push(parsed.data);
    else dropped.malformed++;
  }
  const thumbsDown = thumbsDownKeys(input.ratings ? parseAll(input.ratings) : items);
  const corrected = correctedKeys(items);

  const candidates = buildCandidates(items, opts.type);
  const count = tokenCounter(options.bytesPerToken);
  const seen = new Set<string>();
  const survivors: { example: Example; json: string }[] = [];
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
    survivors.push({ example, json });
  }

  const fold = foldNearDuplicates(
    survivors.map((s) => similarityText(s.example)),
    options.nearDuplicateThreshold,
  );
  dropped.nearDuplicate = fold.folded.length;
  const keys = survivors.map((s) => promptKey(s.example.prompt));
  const sideOf = splitSides(keys, fold.folded, options.heldoutShare);
  const lines: Record<Split, string[]> = { train: [], heldout: [] };
  for (const i of fold.kept) lines[sideOf(keys[i]!)].push(survivors[i]!.json);

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
    domains: input.domains ?? {},
  };
  return { lines, report };
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
): "consent" | "pii" | "thumbsDown" | "followUpCorrected" | "customSystem" | "tooLong" | null {
  // Text without the text consent never leaves the service, whatever stored it.
  if (example.items.some((i) => hasText(i) && i.consent !== "ratings_and_text")) return "consent";
  // Dropped, never re-redacted: a line the client's redactor missed is not trusted.
  if (lineTexts(example.line).some((t) => scan(t).findings.length > 0)) return "pii";
  const keys = example.targets.map((t) => answerKey(t.context, t.answer));
  if (keys.some((k) => bad.thumbsDown.has(k))) return "thumbsDown";
  if (keys.some((k) => bad.corrected.has(k))) return "followUpCorrected";
  // A line is laid out under the trainer's system turn; an answer that followed the user's own
  // system prompt would teach the adapter a reply to instructions the line does not show.
  if (example.items.some((i) => hasCustomSystem(i.versions))) return "customSystem";
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
