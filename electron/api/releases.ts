/**
 * Versions, releases and updates of adapters: the evaluation gate's results, the release
 * history (base model + harness + live adapter versions + contract), the registry updates.
 */
import { z } from "zod";
import { Id } from "./schemas";

/**
 * staged: downloaded or installed, validated, waiting for the gate; evaluating: the contract
 * runs on it now; live: answers turns; rejected: failed the contract (report kept);
 * retired: was live before, file kept for an instant rollback until pruned.
 */
export const AdapterVersionStatus = z.enum(["staged", "evaluating", "live", "rejected", "retired"]);
export type AdapterVersionStatus = z.infer<typeof AdapterVersionStatus>;

/** A contract run, as the Adapters panel shows it (the full report stays in the database). */
export const ContractSummary = z.object({
  contract: z.string(),
  version: z.string(),
  passed: z.boolean(),
  passRate: z.number().min(0).max(1),
  /** Ids of the failing cases. */
  failing: z.array(z.string()),
  /** Why it failed, readable: a tag below its minimum, a tag regressed against the live version… */
  reasons: z.array(z.string()).default([]),
  durationMs: z.number().nonnegative(),
  startedAt: z.number(),
  cases: z.array(
    z.object({
      id: z.string(),
      description: z.string(),
      passed: z.boolean(),
      output: z.string(),
      latencyMs: z.number().nonnegative(),
      /** The assertions that failed, each with a readable detail. */
      failures: z.array(z.object({ type: z.string(), detail: z.string() })),
      /** Why the verdict: the first failed check, or what made a pass right. */
      reason: z.string().optional(),
      /** The live version on the same case, when it was compared: its verdict and reason. */
      live: z.object({ passed: z.boolean(), reason: z.string() }).nullable().optional(),
    }),
  ),
});
export type ContractSummary = z.infer<typeof ContractSummary>;

export const AdapterVersionInfo = z.object({
  adapterId: Id,
  version: z.string(),
  status: AdapterVersionStatus,
  live: z.boolean(),
  sha256: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  /** Where it came from: the first install, a file the user picked, or the registry. */
  source: z.enum(["install", "file", "registry"]),
  lineage: z.object({ parent: z.string().nullable(), trainedFrom: z.string() }),
  releaseNotes: z.string(),
  installedAt: z.number().int(),
  promotedAt: z.number().int().nullable(),
  /** False once pruned (or removed): then it cannot be rolled back to. */
  fileKept: z.boolean(),
  /** Why it has its status (e.g. "2 failing cases: coding-pinned, coding-auto"). */
  statusReason: z.string().nullable(),
  contract: ContractSummary.nullable(),
});
export type AdapterVersionInfo = z.infer<typeof AdapterVersionInfo>;

export const ReleaseReason = z.enum(["startup", "install", "remove", "promote", "rollback", "model"]);
export type ReleaseReason = z.infer<typeof ReleaseReason>;

/** What produced a turn: one row each time the live set (or the base, or the harness) changes. */
export const Release = z.object({
  id: z.number().int(),
  baseModelSha256: z.string().nullable(),
  harnessVersion: z.string(),
  contractVersion: z.string(),
  adapters: z.array(z.object({ id: z.string(), version: z.string(), sha256: z.string() })),
  reason: ReleaseReason,
  detail: z.string().nullable(),
  createdAt: z.number().int(),
});
export type Release = z.infer<typeof Release>;

export const UpdateSettings = z.object({
  /** Poll the registry and put new versions through the gate without asking. */
  autoUpdate: z.boolean(),
  /** The registry (cloud service base URL); null = none configured. */
  registryUrl: z.string().nullable(),
  intervalMinutes: z.number().min(1).max(10_080),
  lastCheckAt: z.number().nullable(),
  lastError: z.string().nullable(),
});
export type UpdateSettings = z.infer<typeof UpdateSettings>;

export const UpdateOutcome = z.object({
  adapterId: Id,
  version: z.string(),
  /** promoted: live now; rejected: failed the gate; failed: download/validation refused; staged: waits. */
  outcome: z.enum(["promoted", "rejected", "failed", "staged"]),
  message: z.string().nullable(),
});
export type UpdateOutcome = z.infer<typeof UpdateOutcome>;

export const UpdateCheck = z.object({
  checkedAt: z.number(),
  /** Newer versions of installed adapters that the registry offers and that are not known yet. */
  available: z.array(
    z.object({ adapterId: Id, version: z.string(), sizeBytes: z.number().int(), releaseNotes: z.string() }),
  ),
  /** Filled when the check waited (`wait: true`) for downloads and gates. */
  results: z.array(UpdateOutcome),
});
export type UpdateCheck = z.infer<typeof UpdateCheck>;

/** Gate progress of one version: queued, running (done/total cases), then passed/failed/error. */
export const GateProgress = z.object({
  adapterId: Id,
  version: z.string(),
  state: z.enum(["queued", "running", "passed", "failed", "error"]),
  done: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  caseId: z.string().nullable(),
  failing: z.array(z.string()),
  message: z.string().nullable(),
});
export type GateProgress = z.infer<typeof GateProgress>;

/** Registry updates: checking, a version found, download progress, verified/staged, failure. */
export const UpdateProgress = z.object({
  state: z.enum(["checking", "available", "downloading", "verifying", "staged", "failed", "idle"]),
  adapterId: Id.nullable(),
  version: z.string().nullable(),
  receivedBytes: z.number().int().nullable(),
  totalBytes: z.number().int().nullable(),
  message: z.string().nullable(),
});
export type UpdateProgress = z.infer<typeof UpdateProgress>;
