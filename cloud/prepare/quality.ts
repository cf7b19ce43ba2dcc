/**
 * Data preparation against bad data (issue 26), shared by the in-memory export (prepare.ts) and
 * the streamed one (stream.ts) so both decide the same:
 * - injection-shaped text ("ignore previous instructions", role tags, …) is held out;
 * - an answer cut at the token limit (or stopped by the user) is never a training target;
 * - conflicting answers in one prompt cluster are resolved by majority of installs;
 * - no install holds more than a stated share of a split, or 1/installs when that is more (a
 *   flooding install is capped).
 */
import { CUT_STOP_REASONS, type FeedbackItem } from "../../common/feedback-protocol";
import { jaccard } from "./near-duplicates";
import { normalizeText } from "./normalize";

/**
 * Most of a split's lines one install may hold, when at least two installs contributed. With a
 * single install there is nobody to crowd out: its lines are kept (the report says so).
 */
export const DEFAULT_MAX_INSTALL_SHARE = 0.25;
/** An install may always keep this many lines of a split, whatever the share (small domains). */
export const MIN_LINES_PER_INSTALL = 4;
/**
 * Two answers of one prompt cluster are the same vote when their content words are this similar
 * (Jaccard): "Canberra is the capital" and "The capital is Canberra" are one answer, "Sydney is
 * the capital" another — characters would call all three alike.
 */
export const SAME_ANSWER_THRESHOLD = 0.6;

const STOP_WORDS = new Set(
  "the a an and or but of to in on at by for with from as is are was were be it its this that there what which who how".split(
    " ",
  ),
);

/** The content words of a normalized answer (its own words when it has only stop words). */
function contentWords(answer: string): Set<string> {
  const all = answer.split(" ").filter(Boolean);
  const content = all.filter((w) => !STOP_WORDS.has(w));
  return new Set(content.length > 0 ? content : all);
}

/**
 * Text shaped like a prompt injection: instructions to drop earlier instructions, chat-template
 * role tags and markers, fake system turns. Matched on the raw text (tags are punctuation).
 */
const INJECTION_PATTERNS: readonly RegExp[] = [
  /\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any|your)\b[^.\n]{0,30}\b(instructions?|prompts?|rules|directions|guidelines|messages?)\b/i,
  /<\|\s*(im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\s*\|>/i,
  /\[\/?\s*(INST|SYS)\s*\]/,
  /<<\s*\/?SYS\s*>>/,
  /<\/?\s*(system|assistant|user)\s*>/i,
  /^\s*(###\s*)?(system|assistant)\s*:/im,
  /\b(new|updated|real)\s+(system\s+)?(instructions?|prompt)\s*:/i,
  /\byou are now\b[^.\n]{0,40}\b(dan|jailbroken|unrestricted|developer mode)\b/i,
  /\b(reveal|print|show|repeat)\b[^.\n]{0,30}\b(system prompt|hidden instructions?)\b/i,
];

/** Whether `text` looks like a prompt injection (see INJECTION_PATTERNS). */
export function isInjectionShaped(text: string): boolean {
  return INJECTION_PATTERNS.some((p) => p.test(text));
}

/**
 * Whether an item's own answer (a good rating's response, a trajectory's answer, a regeneration's
 * chosen answer) ended at the token limit or was stopped: such an answer is incomplete and is
 * never learned. A correction's target is the user's text, so its cut answer does not matter.
 */
export function answerWasCut(item: FeedbackItem): boolean {
  if (!item.stopReason || !CUT_STOP_REASONS.includes(item.stopReason)) return false;
  return item.kind !== "correction";
}

/** A member of a prompt cluster: its place in export order, its answer and its install. */
export interface ClusterMember {
  seq: number;
  /** The answer a trainer would learn (normalized). */
  answer: string;
  install: string;
}

export interface ClusterVerdict {
  /** The line kept for the cluster: the first of the winning answer; null on a tie. */
  keep: number | null;
  /** Members with the winning answer, other than `keep` (near-duplicates). */
  same: number[];
  /** Members outvoted (another answer), or every member on a tie. */
  conflict: number[];
  /** Whether the cluster held more than one answer. */
  conflicting: boolean;
}

/**
 * Majority over a cluster's answers (members in export order): answers whose content words are
 * at least SAME_ANSWER_THRESHOLD similar are one answer (greedy, in order); an answer's votes are the
 * distinct installs that gave it, then its lines. A tie between the best two holds out the whole
 * cluster: nothing says which is right.
 */
export function resolveCluster(members: readonly ClusterMember[]): ClusterVerdict {
  const groups: { words: Set<string>; members: ClusterMember[] }[] = [];
  for (const m of members) {
    const words = contentWords(m.answer);
    const g = groups.find((x) => jaccard(x.words, words) >= SAME_ANSWER_THRESHOLD);
    if (g) g.members.push(m);
    else groups.push({ words, members: [m] });
  }
  const seqs = (list: ClusterMember[]) => list.map((m) => m.seq);
  if (groups.length === 1)
    return { keep: members[0]!.seq, same: seqs(members.slice(1)), conflict: [], conflicting: false };
  const score = (g: (typeof groups)[number]) => [
    new Set(g.members.map((m) => m.install)).size,
    g.members.length,
  ];
  const ranked = [...groups].sort((a, b) => {
    const [ia, la] = score(a);
    const [ib, lb] = score(b);
    return ib! - ia! || lb! - la!;
  });
  const [best, second] = [score(ranked[0]!), score(ranked[1]!)];
  if (best[0] === second[0] && best[1] === second[1])
    return { keep: null, same: [], conflict: seqs([...members]), conflicting: true };
  const winner = ranked[0]!;
  return {
    keep: winner.members[0]!.seq,
    same: seqs(winner.members.slice(1)),
    conflict: seqs(members.filter((m) => !winner.members.includes(m))),
    conflicting: true,
  };
}

/** The normalized answer a line teaches (its last target), for majority votes. */
export function voteText(targets: readonly { answer: string }[]): string {
  return normalizeText(targets[targets.length - 1]?.answer ?? "");
}

/**
 * The most lines any install may keep in a split with these per-install counts: the largest c
 * with c <= s × Σ min(n_i, c), s = max(maxShare, 1 / installs) (no install exceeds s of what is
 * kept; with k installs an equal 1/k each is always allowed), at least `min`; null when fewer
 * than two installs contributed or nobody is over it.
 */
export function installCap(
  counts: readonly number[],
  maxShare: number,
  min = MIN_LINES_PER_INSTALL,
): number | null {
  const installs = counts.filter((n) => n > 0).length;
  if (installs < 2) return null;
  const share = Math.max(maxShare, 1 / installs);
  const most = Math.max(...counts);
  let c = 0;
  while (c < most && c + 1 <= share * counts.reduce((sum, n) => sum + Math.min(n, c + 1), 0) + 1e-9) c++;
  c = Math.max(c, min);
  return c >= most ? null : c;
}

/** The report's account of the quality steps (counts are also under `dropped`). */
export interface QualityReport {
  /** Prompt clusters that held more than one answer. */
  conflictClusters: number;
  /** Of those, resolved for the majority answer. */
  resolvedByMajority: number;
  /** Of those, held out whole: a tie. */
  tiedClusters: number;
  installCap: {
    /** The stated share (of a split's lines) one install may hold. */
    maxShare: number;
    minLines: number;
    /** Per split: installs that contributed, the cap (null = none applied), installs capped. */
    train: { installs: number; cap: number | null; capped: number };
    heldout: { installs: number; cap: number | null; capped: number };
  };
}
