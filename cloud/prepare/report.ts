/**
 * The report of one export: every count from items read to lines written per split. The same
 * object is the body of GET /v1/export/<domain>.report.json and the `x-export-stats` header of
 * the JSONL download; callers validate it with this schema.
 */
import { z } from "zod";

export const DROP_REASONS = [
  "malformed",
  "consent",
  "pii",
  "thumbsDown",
  /** An answer whose tool call was denied, invalid, failed or stopped (prepare/trajectory.ts). */
  "toolFailed",
  /** An answer the user's next message corrected ("no, …"). */
  "followUpCorrected",
  /** An answer made under a conversation's own system prompt (not the one lines carry). */
  "customSystem",
  "sameAnswer",
  /** Injection-shaped text ("ignore previous instructions", role tags): held out (prepare/quality.ts). */
  "injection",
  /** The learned answer ended at the token limit or was stopped by the user (item.stopReason). */
  "truncated",
  "tooLong",
  "duplicate",
  "nearDuplicate",
  /** Outvoted in its prompt cluster (another answer had the majority), or a tied cluster. */
  "conflict",
  /** Over the most lines one install may hold in a split (quality.ts installCap). */
  "installCap",
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

const Count = z.number().int().nonnegative();
const DomainCount = z.object({ items: Count, byKind: z.record(z.string(), Count) });

export const ExportReport = z.object({
  type: z.enum(["sft", "preference", "groups"]),
  domain: z.string(),
  /** The split `written` counts (the one the JSONL response holds). */
  split: z.enum(["train", "heldout"]),
  options: z.object({
    maxTokens: z.number().int().positive(),
    heldoutShare: z.number().min(0).max(1),
    bytesPerToken: z.number().positive(),
    nearDuplicateThreshold: z.number().min(0).max(1),
    shingleSize: z.number().int().positive(),
    /** Most of a split's lines one install may hold (when two or more contributed). */
    maxInstallShare: z.number().min(0).max(1).optional(),
  }),
  /** Stored items of the domain that were read. */
  items: Count,
  /** Those items by kind (unparseable rows under "unknown"). */
  byKind: z.record(z.string(), Count),
  /** Lines built before filtering, plus stored rows that could not be parsed. */
  candidates: Count,
  /** Lines of `split` (= splits[split]). */
  written: Count,
  /** Lines each split holds after every filter: candidates = sum(dropped) + train + heldout. */
  splits: z.object({ train: Count, heldout: Count }),
  dropped: z.object(
    Object.fromEntries(DROP_REASONS.map((r) => [r, Count])) as Record<DropReason, typeof Count>,
  ),
  /** Conflicting prompt clusters and the per-install cap (prepare/quality.ts QualityReport). */
  quality: z
    .object({
      conflictClusters: Count,
      resolvedByMajority: Count,
      tiedClusters: Count,
      installCap: z.object({
        maxShare: z.number().min(0).max(1),
        minLines: Count,
        train: z.object({ installs: Count, cap: Count.nullable(), capped: Count }),
        heldout: z.object({ installs: Count, cap: Count.nullable(), capped: Count }),
      }),
    })
    .optional(),
  /**
   * Users' answers that called tools, by outcome (prepare/negatives.ts): present when the domain
   * has any. Failed ones are negatives: a pair's rejected side when an allowed answer to the
   * same prompt exists (preference export, counted before the filters), else unpaired; the groups
   * export puts every one in its prompt's group, the unpaired ones measured against a baseline.
   */
  trajectories: z
    .object({
      items: Count,
      /** Every call allowed and answered, not rated bad (reward 1). */
      succeeded: Count,
      /** Reward 0, by why: denied, invalid, error, stopped, ratedBad. */
      failed: Count,
      byProblem: z.record(z.string(), Count),
      negativesInPairs: Count,
      /** Failed ones in a group candidate (groups export; before the filters). */
      negativesInGroups: Count.optional(),
      /** No allowed answer to the same prompt: nothing to pair with. */
      negativesUnpaired: Count,
      /**
       * What the train split's lines, after every filter, train on: failed answers as a pair's
       * rejected side (one per pair line) and as a group's reward-0 answers, and of those in
       * groups how many had no allowed answer to their prompt (learned from alone, through
       * the group's baseline). Zero in the SFT export, where no failure is a target.
       */
      negativesTrained: z.object({ inPairs: Count, inGroups: Count, unpaired: Count }).optional(),
    })
    .optional(),
  /** Items stored per domain (all kinds); base-model answers (no adapter) under "base". */
  domains: z.record(z.string(), DomainCount),
});
export type ExportReport = z.infer<typeof ExportReport>;

/** All reasons at zero. */
export function noDrops(): Record<DropReason, number> {
  return Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>;
}
