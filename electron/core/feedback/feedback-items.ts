/**
 * Builds the wire item (common/feedback-protocol.ts FeedbackItem) of a feedback event: the only place
 * where local feedback turns into something that may leave the machine. Text goes in only with
 * the "ratings_and_text" consent, always through `redact()` first, and every field is fitted to
 * the protocol's caps so the service never refuses an item for its size.
 */
import {
  type FeedbackItem as FeedbackItemType,
  FeedbackItem,
  type ItemVersions,
  MAX_TRAJECTORY_STEPS,
  type StopReasonWire,
  TEXT_FIELDS,
  type ToolDefinitionWire,
  type ToolOutcomeWire,
  type TrajectoryWire,
} from "../../../common/feedback-protocol";
import { TOOL_RESULT_MAX_CHARS, type ToolStep } from "../../api";
import type { ChatTurn } from "../engine/types";
import { redact } from "../../../common/redaction";

export type FeedbackKind = FeedbackItemType["kind"];
export type SharingLevel = "off" | "ratings" | "ratings_and_text";
export type ItemConsent = Exclude<SharingLevel, "off">;

/** The versions an assistant message was produced with, and its adapter domain. */
export interface MessageVersions {
  versions: ItemVersions;
  domain: string | null;
  /** How the answer ended (turn record); absent when unknown (no timings, older events). */
  stopReason?: StopReasonWire | null;
}

/** Used when an answer has no turn record (e.g. written before schema v3). */
export const UNKNOWN_VERSIONS: ItemVersions = {
  modelSha256: null,
  harnessVersion: "unknown",
  adapters: [],
  router: null,
  catalogVersion: null,
};

/** The text an event is about; read only when the consent includes text. */
export interface ItemText {
  prompt?: ChatTurn[];
  response?: string;
  correction?: string;
  chosen?: string;
  rejected?: string;
  reason?: string;
  /** The answer's tool calls and the tools it called (arguments and results are text). */
  trajectory?: { steps: readonly ToolStep[]; tools: readonly ToolDefinitionWire[] };
}

export interface ItemInput {
  key: string;
  kind: FeedbackKind;
  createdAt: number;
  consent: ItemConsent;
  target: MessageVersions;
  rating?: "good" | "bad";
  /** Non-text facts (ids, actions, outcomes): sent with either consent. */
  interaction?: Record<string, unknown>;
  /** What the user typed or chose in a component: `interaction.values`, only with text consent. */
  interactionValues?: unknown;
  /** Counts of the answer's tool calls (non-text: sent with either consent). */
  toolOutcome?: ToolOutcomeWire;
  text?: () => ItemText;
}

const MAX_TEXT = 100_000;
const MAX_TURNS = 500;
const MAX_REASON = 2000;
/** One item stays far below a batch's 1 MB, so one item can never block the queue. */
export const MAX_ITEM_BYTES = 256 * 1024;
const MAX_TOOL_ERROR = 2000;

const clean = (s: string, max = MAX_TEXT): string => redact(s).text.slice(0, max);

/** Redact every string (and key) of a JSON-like value; depth-limited. */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return clean(value, 10_000);
  if (depth > 8 || value === null || typeof value !== "object")
    return typeof value === "function" ? null : value;
  if (Array.isArray(value)) return value.slice(0, 200).map((v) => redactDeep(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, 200)
      .map(([k, v]) => [clean(k, 100), redactDeep(v, depth + 1)]),
  );
}

/** The outcome signals of an answer's steps: how many were done, denied, failed, invalid, cut. */
export function toolOutcomeOf(steps: readonly ToolStep[]): ToolOutcomeWire {
  const count = (state: ToolStep["state"]) => steps.filter((s) => s.state === state).length;
  return {
    steps: steps.length,
    done: count("done"),
    denied: count("denied"),
    errors: count("error"),
    invalid: count("invalid"),
    stopped: count("stopped") + count("pending") + count("running"),
    truncated: steps.filter((s) => s.truncated).length,
    totalMs: steps.reduce((sum, s) => sum + (s.durationMs ?? 0), 0),
  };
}

/**
 * The wire trajectory: every step's call and outcome with its arguments, result and error
 * redacted like any other text. Results are already cut at TOOL_RESULT_MAX_CHARS by the app
 * (what the model saw); a result redaction made longer is cut again and marked truncated.
 */
function trajectoryWire(input: NonNullable<ItemText["trajectory"]>): TrajectoryWire {
  const steps = [...input.steps].sort((a, b) => a.index - b.index).slice(0, MAX_TRAJECTORY_STEPS);
  return {
    tools: input.tools.slice(0, MAX_TRAJECTORY_STEPS).map((t) => ({
      name: t.name.slice(0, 128),
      ...(t.server !== undefined ? { server: t.server.slice(0, 64) } : {}),
      ...(t.tool !== undefined ? { tool: t.tool.slice(0, 128) } : {}),
      ...(t.description !== undefined ? { description: clean(t.description, 10_000) } : {}),
      // A server's schema is not the user's text, but it goes through the redactor all the same.
      ...(t.parameters !== undefined
        ? { parameters: redactDeep(t.parameters) as Record<string, unknown> }
        : {}),
    })),
    steps: steps.map((s) => {
      const result = s.result === null ? null : redact(s.result).text;
      return {
        index: Math.min(s.index, MAX_TRAJECTORY_STEPS),
        server: s.server.slice(0, 64),
        tool: s.tool.slice(0, 128),
        arguments: redactDeep(s.arguments ?? null),
        decision: s.decision,
        state: s.state,
        result: result === null ? null : result.slice(0, TOOL_RESULT_MAX_CHARS),
        truncated: s.truncated || (result !== null && result.length > TOOL_RESULT_MAX_CHARS),
        error: s.error === null ? null : clean(s.error, MAX_TOOL_ERROR),
        durationMs: s.durationMs,
      };
    }),
  };
}

const bytes = (item: unknown): number => Buffer.byteLength(JSON.stringify(item));

/** Drop the oldest turns, then halve the longest text, until the item fits MAX_ITEM_BYTES. */
function fit(item: FeedbackItemType): FeedbackItemType {
  const out = { ...item, prompt: item.prompt ? [...item.prompt] : item.prompt };
  while (bytes(out) > MAX_ITEM_BYTES && out.prompt && out.prompt.length > 1) out.prompt.shift();
  const fields = ["response", "correction", "chosen", "rejected"] as const;
  // Tool results first: the longest is halved (and marked cut) until the item fits or they are short.
  if (out.trajectory)
    out.trajectory = { ...out.trajectory, steps: out.trajectory.steps.map((s) => ({ ...s })) };
  while (bytes(out) > MAX_ITEM_BYTES && out.trajectory) {
    const longest = out.trajectory.steps.reduce((a, b) =>
      (b.result?.length ?? 0) > (a.result?.length ?? 0) ? b : a,
    );
    if ((longest.result?.length ?? 0) < 1000) break;
    longest.result = longest.result!.slice(0, Math.floor(longest.result!.length / 2));
    longest.truncated = true;
  }
  // Then huge arguments (a model can write long ones): the largest is replaced by a marker.
  while (bytes(out) > MAX_ITEM_BYTES && out.trajectory) {
    const size = (s: { arguments: unknown }) => JSON.stringify(s.arguments ?? null).length;
    const largest = out.trajectory.steps.reduce((a, b) => (size(b) > size(a) ? b : a));
    if (size(largest) < 1000) break;
    largest.arguments = "[TRUNCATED]";
  }
  // Then the tools' definitions (a server's schemas can be large): names only.
  if (bytes(out) > MAX_ITEM_BYTES && out.trajectory)
    out.trajectory = {
      ...out.trajectory,
      tools: out.trajectory.tools.map(({ name, server, tool }) => ({ name, server, tool })),
    };
  while (bytes(out) > MAX_ITEM_BYTES) {
    const longest = fields.reduce((a, b) => ((out[a]?.length ?? 0) >= (out[b]?.length ?? 0) ? a : b));
    const turn = out.prompt?.[0];
    if ((out[longest]?.length ?? 0) > (turn?.text.length ?? 0))
      out[longest] = out[longest]!.slice(0, Math.floor(out[longest]!.length / 2));
    else if (turn && turn.text.length > 0)
      out.prompt![0] = { ...turn, text: turn.text.slice(0, Math.floor(turn.text.length / 2)) };
    else break;
  }
  // Still too big: only the interaction's values can be left (huge form input); drop them.
  if (bytes(out) > MAX_ITEM_BYTES && out.interaction)
    out.interaction = { ...out.interaction, values: "[TRUNCATED]" };
  return out;
}

/** The wire item of an event, redacted and within the protocol's caps (validated). */
export function buildItem(input: ItemInput): FeedbackItemType {
  const versions = input.target.versions;
  const item: FeedbackItemType = {
    idempotencyKey: input.key,
    kind: input.kind,
    createdAt: input.createdAt,
    domain: input.target.domain?.slice(0, 64) ?? null,
    versions: {
      ...versions,
      // The router's reason is generated text (it can quote an error): redact it as well.
      router: versions.router ? { ...versions.router, reason: clean(versions.router.reason, 500) } : null,
    },
    consent: input.consent,
    rating: input.rating ?? null,
  };
  if (input.toolOutcome) item.toolOutcome = input.toolOutcome;
  if (input.target.stopReason) item.stopReason = input.target.stopReason;
  let interaction = input.interaction ? (redactDeep(input.interaction) as Record<string, unknown>) : null;
  if (input.consent === "ratings_and_text") {
    const text = input.text?.() ?? {};
    if (text.prompt)
      item.prompt = text.prompt.slice(-MAX_TURNS).map((t) => ({ role: t.role, text: clean(t.text) }));
    if (text.response !== undefined) item.response = clean(text.response);
    if (text.correction !== undefined) item.correction = clean(text.correction);
    if (text.chosen !== undefined) item.chosen = clean(text.chosen);
    if (text.rejected !== undefined) item.rejected = clean(text.rejected);
    if (text.reason !== undefined) item.reason = clean(text.reason, MAX_REASON);
    if (text.trajectory && text.trajectory.steps.length > 0)
      item.trajectory = trajectoryWire(text.trajectory);
    if (input.interactionValues !== undefined)
      interaction = { ...interaction, values: redactDeep(input.interactionValues) };
  }
  if (interaction) item.interaction = interaction;
  return FeedbackItem.parse(fit(item));
}

/** The same item without any text (consent lowered from text to ratings while it was queued). */
export function withoutText(item: FeedbackItemType): FeedbackItemType {
  const out: FeedbackItemType = { ...item, consent: "ratings" };
  for (const f of TEXT_FIELDS) delete out[f];
  if (out.interaction)
    out.interaction = Object.fromEntries(Object.entries(out.interaction).filter(([k]) => k !== "values"));
  return out;
}
