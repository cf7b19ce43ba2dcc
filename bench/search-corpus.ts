/**
 * A synthetic conversation history for the search benchmark: words drawn from a Zipf-like
 * distribution (a handful of words in almost every message, thousands seen a few times), 20
 * messages per conversation, about one answer in twenty regenerated (the old answer stays in
 * the database, replaced). Written with the app's own stores, in one transaction.
 */
import type { Database } from "better-sqlite3";
import { mulberry32 } from "../common/prng";
import { ConversationStore } from "../electron/core/conversations/conversation-store";
import { MessageStore } from "../electron/core/conversations/message-store";

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ten",
  "ra",
  "su",
  "vor",
  "pe",
  "dan",
  "qui",
  "ba",
  "sho",
  "nel",
  "ti",
  "gra",
  "mo",
];
const VOCAB_SIZE = 30_000;

/** Pronounceable, distinct words: shared beginnings, so prefixes match several words. */
export const VOCAB: readonly string[] = (() => {
  const r = mulberry32(17);
  const seen = new Set<string>();
  while (seen.size < VOCAB_SIZE) {
    const n = 1 + Math.floor(r() * 4);
    let w = "";
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)]!;
    if (w.length >= 3) seen.add(w);
  }
  return [...seen];
})();

/** Cumulative Zipf (s = 1) weights over VOCAB: word k is drawn with probability ∝ 1/(k+1). */
const CDF = (() => {
  const out = new Float64Array(VOCAB.length);
  let sum = 0;
  for (let k = 0; k < VOCAB.length; k++) out[k] = sum += 1 / (k + 1);
  for (let k = 0; k < out.length; k++) out[k]! /= sum;
  return out;
})();

function word(r: () => number): string {
  const x = r();
  let lo = 0;
  let hi = CDF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CDF[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo]!;
}

function sentence(r: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(word(r));
  return out.join(" ");
}

const PER_CONVERSATION = 20;

/**
 * Append messages `from` … `to - 1` (numbering continues across calls, so a corpus grows in
 * steps). Returns the milliseconds it took.
 */
export function fillCorpus(db: Database, from: number, to: number): number {
  const r = mulberry32(from + 7);
  const conversations = new ConversationStore(db);
  const messages = new MessageStore(db);
  const started = performance.now();
  db.transaction(() => {
    let conversationId = "";
    let lastAnswer: string | null = null;
    for (let i = from; i < to; i++) {
      if (i === from || i % PER_CONVERSATION === 0) {
        conversationId = conversations.create(sentence(r, 2 + Math.floor(r() * 4)), i).id;
        lastAnswer = null;
      }
      const role = i % 2 === 0 ? "user" : "assistant";
      const length = role === "user" ? 4 + Math.floor(r() * 16) : 15 + Math.floor(r() * 60);
      const content = sentence(r, length);
      // A regeneration: a new version of the previous answer, which leaves the transcript with
      // the question after it (the random draws stay in the order they had, so the texts do).
      const regenerated = role === "assistant" && lastAnswer !== null && r() < 0.05;
      const m = messages.append(
        { conversationId, role, content, status: "complete" },
        i,
        regenerated && lastAnswer ? { versionOf: lastAnswer } : {},
      );
      if (role === "assistant") lastAnswer = m.id;
    }
  })();
  return performance.now() - started;
}

export type QueryClass = "rare" | "common" | "mixed" | "prefix" | "phrase" | "none";

/** `count` queries of one class, the same on every run. */
export function corpusQueries(kind: QueryClass, count: number): string[] {
  const r = mulberry32(1000 + ["rare", "common", "mixed", "prefix", "phrase", "none"].indexOf(kind));
  const pick = (from: number, to: number): string => VOCAB[from + Math.floor(r() * (to - from))]!;
  return Array.from({ length: count }, (_, i) => {
    switch (kind) {
      case "rare":
        return pick(3000, VOCAB.length);
      case "common":
        return pick(0, 30);
      case "mixed":
        return `${pick(0, 30)} ${pick(1000, 10_000)}`;
      case "prefix":
        // What is typed on the way to a word: its first 3 letters.
        return pick(0, 3000).slice(0, 3);
      case "phrase":
        return `${pick(0, 100)} ${pick(0, 100)} ${pick(100, 2000)}`;
      case "none":
        return `zzq${i}`;
    }
  });
}
