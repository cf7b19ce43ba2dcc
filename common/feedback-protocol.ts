/**
 * The wire format between the desktop app's feedback sync and the cloud service. Both sides
 * import this file: the app builds items with it, the service validates every batch with it.
 * Imports nothing of the project but zod.
 */
import { z } from "zod";

export const PROTOCOL_VERSION = 1;

/** Versions an item is about: what lets the cloud train and evaluate the right adapter. */
export const ItemVersions = z.object({
  modelSha256: z.string().max(128).nullable(),
  harnessVersion: z.string().max(200),
  adapters: z
    .array(z.object({ id: z.string().max(64), version: z.string().max(64), scale: z.number() }))
    .max(16),
  router: z
    .object({ mode: z.string().max(16), confidence: z.number().min(0).max(1), reason: z.string().max(500) })
    .nullable(),
  catalogVersion: z.string().max(64).nullable(),
});
export type ItemVersions = z.infer<typeof ItemVersions>;

/**
 * Marks the harness version of an answer generated under a conversation's own system prompt
 * (the adapters were trained under the app's): the service keeps such items but does not train
 * on them, since prepared lines carry the app's system turn, not the one the answer followed.
 */
export const CUSTOM_SYSTEM_SUFFIX = "+custom-system";

export function withCustomSystem(harnessVersion: string, custom: boolean): string {
  return custom && !harnessVersion.endsWith(CUSTOM_SYSTEM_SUFFIX)
    ? harnessVersion + CUSTOM_SYSTEM_SUFFIX
    : harnessVersion;
}

export function hasCustomSystem(versions: Pick<ItemVersions, "harnessVersion">): boolean {
  return versions.harnessVersion.endsWith(CUSTOM_SYSTEM_SUFFIX);
}

const Text = z.string().max(100_000);
export const ChatTurnWire = z.object({ role: z.enum(["system", "user", "assistant"]), text: Text });

/**
 * A tool the model could call, as a trajectory records it (OpenAI's `tools[].function`): `name`
 * is the function name the model was given, `server` and `tool` the step it describes (the app
 * prefixes a name two servers share).
 */
export const ToolDefinitionWire = z.object({
  name: z.string().min(1).max(128),
  server: z.string().max(64).optional(),
  tool: z.string().max(128).optional(),
  description: z.string().max(10_000).optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});
export type ToolDefinitionWire = z.infer<typeof ToolDefinitionWire>;

/** Most steps a trajectory carries (the app stops an answer at MAX_TOOL_STEPS, far below). */
export const MAX_TRAJECTORY_STEPS = 64;

/**
 * One tool call of an answer, as electron/api/tools.ts ToolStep records it, without ids: the
 * model's call (tool, server, arguments), the user's decision, what happened (state), the result
 * the model was given (redacted, cut) or the error, and how long it took.
 */
export const TrajectoryStepWire = z.object({
  index: z.number().int().nonnegative().max(MAX_TRAJECTORY_STEPS),
  server: z.string().max(64),
  tool: z.string().min(1).max(128),
  arguments: z.unknown(),
  decision: z.enum(["once", "always", "remembered", "deny"]).nullable(),
  state: z.enum(["pending", "running", "done", "error", "denied", "stopped", "invalid"]),
  result: Text.nullable(),
  /** The result was cut: by the app before the model saw it, or to fit the item. */
  truncated: z.boolean(),
  error: z.string().max(10_000).nullable(),
  durationMs: z.number().nonnegative().nullable(),
});
export type TrajectoryStepWire = z.infer<typeof TrajectoryStepWire>;

/** The calls an answer made, in order, and the definitions of the tools it called. Text. */
export const TrajectoryWire = z.object({
  tools: z.array(ToolDefinitionWire).max(MAX_TRAJECTORY_STEPS),
  steps: z.array(TrajectoryStepWire).min(1).max(MAX_TRAJECTORY_STEPS),
});
export type TrajectoryWire = z.infer<typeof TrajectoryWire>;

const Count = z.number().int().nonnegative().max(1_000_000);

/**
 * Outcome signals of an answer's tool calls: counts only (no names, arguments or results), so
 * they are sent with either consent.
 */
export const ToolOutcomeWire = z.object({
  steps: Count,
  done: Count,
  denied: Count,
  errors: Count,
  invalid: Count,
  stopped: Count,
  truncated: Count,
  /** Sum of the calls' durations. */
  totalMs: z.number().nonnegative(),
});
export type ToolOutcomeWire = z.infer<typeof ToolOutcomeWire>;

/** How a generation ended (common/engine-protocol.ts GenerateResult.stopReason). */
export const StopReasonWire = z.enum(["eos", "maxTokens", "stop", "abort", "toolCalls"]);
export type StopReasonWire = z.infer<typeof StopReasonWire>;

/** Stop reasons of an answer that did not end on its own: cut by the limit or by the user. */
export const CUT_STOP_REASONS: readonly StopReasonWire[] = ["maxTokens", "abort"];

/**
 * One feedback signal. `kind` says which fields matter:
 * - rating: rating (+reason); with text consent, `prompt` (the conversation up to the answer)
 *   and `response`.
 * - correction: the user's edit of an answer: `response` (original) and `correction`.
 * - regeneration: a preference pair: `rejected` (the replaced answer) and `chosen` (the new one).
 * - genui: an interaction with a generated component: `interaction`.
 * - router_override: the user picked another adapter than the router: `interaction.chosen`.
 * - copy: the user copied an answer (a weak positive signal).
 * - trajectory: an answer that called tools, sent when it is done: `toolOutcome` and, with text
 *   consent, `trajectory`, `prompt` and `response` (the text after the calls).
 * - follow_up: the user's next message after an answer that called tools: `interaction.corrected`
 *   (it reads as a correction: "no, …", "that's wrong").
 * Items about an answer that called tools carry `toolOutcome` (and, with text, `trajectory`).
 * Text fields are present only with the "ratings_and_text" consent, always redacted first.
 */
export const FeedbackItem = z.object({
  idempotencyKey: z.string().min(8).max(128),
  kind: z.enum([
    "rating",
    "correction",
    "regeneration",
    "genui",
    "router_override",
    "copy",
    "trajectory",
    "follow_up",
  ]),
  createdAt: z.number().int().nonnegative(),
  /** Adapter domain the item is about (chat, coding, agent, ui), for per-domain datasets. */
  domain: z.string().max(64).nullable(),
  versions: ItemVersions,
  consent: z.enum(["ratings", "ratings_and_text"]),
  rating: z.enum(["good", "bad"]).nullable().optional(),
  reason: z.string().max(2000).nullable().optional(),
  prompt: z.array(ChatTurnWire).max(500).nullable().optional(),
  response: Text.nullable().optional(),
  correction: Text.nullable().optional(),
  chosen: Text.nullable().optional(),
  rejected: Text.nullable().optional(),
  interaction: z.record(z.string().max(100), z.unknown()).nullable().optional(),
  toolOutcome: ToolOutcomeWire.nullable().optional(),
  trajectory: TrajectoryWire.nullable().optional(),
  /**
   * How the answer the item is about ended (the turn record's stop reason): "maxTokens" = cut at
   * the token limit, "abort" = stopped by the user; such an answer is never a training target.
   * Not text: sent with either consent. Absent on items from apps that predate it.
   */
  stopReason: StopReasonWire.nullable().optional(),
});
export type FeedbackItem = z.infer<typeof FeedbackItem>;

/** Fields that carry user text: allowed only with the "ratings_and_text" consent. */
export const TEXT_FIELDS = [
  "prompt",
  "response",
  "correction",
  "chosen",
  "rejected",
  "reason",
  "trajectory",
] as const;

/** Size caps shared by both sides: the app never builds a batch the service would refuse. */
export const LIMITS = {
  maxItemsPerBatch: 200,
  /** Uncompressed JSON bytes of one batch body. */
  maxBatchBytes: 1_000_000,
  /** Compressed request body bytes the service accepts. */
  maxCompressedBytes: 512_000,
} as const;

export const BatchRequest = z.object({
  protocol: z.literal(PROTOCOL_VERSION),
  installId: z.string().uuid(),
  batchId: z.string().min(8).max(128),
  items: z.array(FeedbackItem).min(1).max(LIMITS.maxItemsPerBatch),
});
export type BatchRequest = z.infer<typeof BatchRequest>;

/**
 * 200 answer to a batch. Every item key appears in exactly one list: `accepted` (stored now),
 * `duplicates` (stored before — e.g. the earlier response was lost), `rejected` (permanently
 * refused, with the reason; the app keeps it visible and does not retry it).
 * Other statuses: 400/413 the batch as a whole is refused (permanent), 401 bad install token,
 * 429/503 with Retry-After (seconds) and other 5xx: retry later.
 */
export const BatchResponse = z.object({
  accepted: z.array(z.string()),
  duplicates: z.array(z.string()),
  rejected: z.array(z.object({ key: z.string(), reason: z.string() })),
});
export type BatchResponse = z.infer<typeof BatchResponse>;

/**
 * POST /v1/installs → a per-install token used as `Authorization: Bearer` on every call.
 * `token`: the token the client wants (random, 256 bits, base64url); it is the proof that makes
 * a retry idempotent: a registered id answers 200 only to its current token (as `token` or as
 * `Authorization: Bearer`), else 409. Without it the service picks the token.
 */
export const RegisterRequest = z.object({
  installId: z.string().uuid(),
  token: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43,128}$/)
    .optional(),
});
export const RegisterResponse = z.object({ installId: z.string().uuid(), token: z.string().min(16) });

/** DELETE /v1/installs/:installId/data → what was deleted. */
export const DeleteResponse = z.object({
  installId: z.string().uuid(),
  deletedItems: z.number().int().nonnegative(),
});
