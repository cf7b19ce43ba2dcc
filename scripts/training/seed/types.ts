/**
 * Shared shapes and helpers of the seed-data generator: one SFT example, a domain's disjoint
 * train/held-out pools, and the seeded choice of (subject, wording) pairs.
 */
import { BUILTIN_DOMAINS, type BuiltinDomain } from "../../../common/domains";
import { hashSeed, mulberry32 } from "../../../common/prng";

export const SEED_DOMAINS = BUILTIN_DOMAINS;
export type SeedDomain = BuiltinDomain;

export interface SeedMessage {
  role: "user" | "assistant";
  content: string;
}

/** One line of a dataset file: a user turn and the answer to learn (no system message). */
export interface SeedExample {
  messages: SeedMessage[];
}

/** A prompt template: `{s}` (and for some domains other slots) are filled from a subject. */
export type Wording = string;

/** One family of examples: its subjects, wordings and how a pair becomes an example. */
export interface Family<S> {
  /** A short name, part of the PRNG seed. */
  name: string;
  subjects: readonly S[];
  wordings: readonly Wording[];
  /**
   * Phrases that identify the subject (they appear in its prompts or answers): the
   * disjointness checks make sure no held-out subject's phrase occurs in any training text.
   */
  keys: (s: S) => string[];
  prompt: (wording: Wording, s: S) => string;
  answer: (s: S) => string;
}

/** A family's train and held-out halves: disjoint subjects and disjoint wordings. */
export interface SplitFamily<S> {
  train: Family<S>;
  heldout: Family<S>;
  /** How many examples each half contributes. */
  counts: { train: number; heldout: number };
}

export const example = (user: string, assistant: string): SeedExample => ({
  messages: [
    { role: "user", content: user },
    { role: "assistant", content: assistant },
  ],
});

/** A deterministic stream of numbers in [0, 1) for `seed`. */
export function rng(seed: string): () => number {
  return mulberry32(hashSeed(seed));
}

/** Fisher–Yates with the given stream; returns a new array. */
export function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * `count` (subject, wording) pairs of `family`, every subject used about equally often and
 * no pair twice, in a seeded order. Throws when the family has fewer pairs than asked.
 */
export function pairs<S>(family: Family<S>, count: number, seed: string): Array<{ s: S; w: Wording }> {
  const total = family.subjects.length * family.wordings.length;
  if (count > total) throw new Error(`${family.name}: ${count} examples asked, only ${total} pairs exist`);
  const next = rng(`${seed}/${family.name}`);
  // Each subject walks the wordings from its own random offset: round r gives every subject
  // its r-th wording, so subjects stay balanced and wordings spread across subjects.
  const offsets = family.subjects.map(() => Math.floor(next() * family.wordings.length));
  const order = shuffled(
    family.subjects.map((_, i) => i),
    next,
  );
  const out: Array<{ s: S; w: Wording }> = [];
  for (let round = 0; out.length < count; round++) {
    for (const i of order) {
      if (out.length >= count) break;
      const w = family.wordings[(offsets[i]! + round) % family.wordings.length]!;
      out.push({ s: family.subjects[i]!, w });
    }
  }
  return shuffled(out, next);
}

/** The examples of one half of a family. */
export function examplesOf<S>(family: Family<S>, count: number, seed: string): SeedExample[] {
  return pairs(family, count, seed).map(({ s, w }) => example(family.prompt(w, s), family.answer(s)));
}

/** `{s}` → the subject phrase. */
export const fill = (wording: Wording, slots: Record<string, string>): string =>
  wording.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = slots[k];
    if (v === undefined) throw new Error(`wording "${wording}" has no value for {${k}}`);
    return v;
  });

/** A split family with its subject type hidden: what the generator and its checks use. */
export interface SeedFamily {
  counts: { train: number; heldout: number };
  /** The examples of one half (its count of them, in a seeded order). */
  examples: (half: "train" | "heldout", seed: string) => SeedExample[];
  /** Every subject phrase of one half (see Family.keys). */
  keys: (half: "train" | "heldout") => string[];
  wordings: (half: "train" | "heldout") => readonly Wording[];
}

export function seedFamily<S>(f: SplitFamily<S>): SeedFamily {
  return {
    counts: f.counts,
    examples: (half, seed) => examplesOf(f[half], f.counts[half], seed),
    keys: (half) => f[half].subjects.flatMap((s) => f[half].keys(s)),
    wordings: (half) => f[half].wordings,
  };
}
