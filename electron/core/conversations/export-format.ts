/**
 * The export file format ("macaron-export", version 1) and its validation. An import is
 * untrusted input: it is parsed with guards (nesting depth, prototype keys) and validated
 * whole with strict schemas (no unknown keys, capped sizes) before anything is written.
 */
import { z } from "zod";
import {
  AdapterSelection,
  ApiError,
  AppliedAdapter,
  ConversationSettings,
  GenerationStats,
  Id,
  Message,
  TOOL_RESULT_MAX_CHARS,
  ToolStep,
} from "../../api";
import { MessageInteraction, validateDocument } from "../../api/genui";
import { jsonDepth } from "../../../common/json-depth";
import { describeIssues } from "../../../common/zod-issues";

export const EXPORT_FORMAT = "macaron-export";
export const EXPORT_VERSION = 1;

export const LIMITS = {
  conversations: 10_000,
  messagesPerConversation: 50_000,
  messages: 200_000,
  memories: 10_000,
  contentChars: 1_000_000,
  titleChars: 200,
  memoryChars: 2000,
  /**
   * JSON nesting: the format needs 6 levels, plus a GenUI document's own (at most 48, see
   * electron/api/genui/limits.ts) under a message; anything deeper is an attack or a mistake.
   */
  depth: 64,
  /** Tool calls per answer (MAX_TOOL_STEPS, plus refused ones, with room). */
  stepsPerMessage: 64,
} as const;

/** Milliseconds since 1970, within what Date can represent. */
const Time = z.number().int().min(0).max(8_640_000_000_000_000);
const Text = (max: number) => z.string().max(max);

const ExportedRouting = z.strictObject({
  mode: z.enum(["auto", "pinned", "blend", "base"]),
  adapters: z.array(AppliedAdapter.strict()).max(16),
  confidence: z.number().min(0).max(1),
  reason: Text(2000),
  latencyMs: z.number().nonnegative(),
});

/**
 * One tool call of an answer's trajectory. Imported as it was (a call left waiting becomes
 * "stopped": nothing will answer it here), renumbered in its order, with new ids.
 */
const ExportedStep = z.strictObject({
  id: Text(100),
  messageId: Text(100).optional(),
  index: z.number().int().nonnegative().max(10_000),
  server: Text(200),
  tool: Text(200),
  arguments: z.unknown(),
  state: ToolStep.shape.state,
  decision: ToolStep.shape.decision,
  /** The limit plus its truncation note. */
  result: Text(TOOL_RESULT_MAX_CHARS + 500).nullable(),
  truncated: z.boolean().default(false),
  error: Text(10_000).nullable().default(null),
  durationMs: z.number().nonnegative().nullable().default(null),
  createdAt: Time,
});
export type ExportedStep = z.output<typeof ExportedStep>;

/**
 * A message as the API's Message (electron/api/schemas.ts) with the import's guards: no unknown
 * keys, capped sizes, times Date can hold, and what the importer re-checks or remaps.
 */
const ExportedMessage = Message.extend({
  /** Optional: the message sits inside its conversation anyway. Must match when present. */
  conversationId: Message.shape.conversationId.optional(),
  content: Text(LIMITS.contentChars),
  error: Text(10_000).nullable().default(null),
  createdAt: Time,
  stats: GenerationStats.strict().nullable().default(null),
  routing: ExportedRouting.nullable().default(null),
  /**
   * Exported for the reader; not imported: ratings and corrections are feedback given on the
   * machine that exported (feedback_events), and must not be re-queued for upload from here.
   */
  rating: Message.shape.rating.unwrap().optional(),
  corrected: Message.shape.corrected.unwrap().optional(),
  /** The text of the latest correction, for the reader (older files have none). */
  correction: z.string().max(100_000).nullable().optional(),
  memoriesUsed: z
    .array(z.strictObject({ id: Id, text: Text(LIMITS.memoryChars) }))
    .max(64)
    .default([]),
  context: z.strictObject(Message.shape.context.unwrap().unwrap().shape).nullable().default(null),
  /** GenUI: a UI answer's document, validated node by node like a model answer (invalid nodes become inert). */
  ui: z
    .unknown()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === null) return null;
      const checked = validateDocument(value);
      if (checked.ok) return checked.document;
      ctx.addIssue({ code: "custom", message: checked.reason });
      return z.NEVER;
    }),
  /** GenUI: the component use a user turn stands for; its messageId is remapped on import. */
  interaction: MessageInteraction.strict().nullable().optional(),
  /** The Agent's tool calls (an answer's trajectory), in order. */
  steps: z.array(ExportedStep).max(LIMITS.stepsPerMessage).default([]),
}).strict();
export type ExportedMessage = z.output<typeof ExportedMessage>;

const ExportedConversation = z.strictObject({
  id: Id,
  title: Text(LIMITS.titleChars),
  createdAt: Time,
  updatedAt: Time,
  adapters: AdapterSelection.default("auto"),
  /** Its own system prompt and sampling (issue 13); absent: none (files from before them). */
  settings: ConversationSettings.strict().optional(),
  messages: z.array(ExportedMessage).max(LIMITS.messagesPerConversation),
});
export type ExportedConversation = z.output<typeof ExportedConversation>;

const ExportedMemory = z.strictObject({
  id: Id,
  text: z.string().min(1).max(LIMITS.memoryChars),
  source: z.enum(["user", "model"]),
  status: z.enum(["active", "proposed"]),
  conversationId: Id.nullable().default(null),
  messageId: Id.nullable().default(null),
  createdAt: Time,
  updatedAt: Time,
});
export type ExportedMemory = z.output<typeof ExportedMemory>;

function duplicates(ids: readonly string[]): string | null {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return null;
}

export const ExportDocument = z
  .strictObject({
    format: z.literal(EXPORT_FORMAT),
    version: z.literal(EXPORT_VERSION),
    exportedAt: Time,
    conversations: z.array(ExportedConversation).max(LIMITS.conversations),
    memories: z.array(ExportedMemory).max(LIMITS.memories).default([]),
  })
  .superRefine((doc, ctx) => {
    const total = doc.conversations.reduce((n, c) => n + c.messages.length, 0);
    if (total > LIMITS.messages) {
      ctx.addIssue({ code: "custom", message: `too many messages (${total}; at most ${LIMITS.messages})` });
    }
    const checks: [string, string[]][] = [
      ["conversation", doc.conversations.map((c) => c.id)],
      ["message", doc.conversations.flatMap((c) => c.messages.map((m) => m.id))],
      ["memory", doc.memories.map((m) => m.id)],
    ];
    for (const [what, ids] of checks) {
      const dup = duplicates(ids);
      if (dup) ctx.addIssue({ code: "custom", message: `duplicate ${what} id "${dup.slice(0, 64)}"` });
    }
    doc.conversations.forEach((c, i) => {
      const wrong = c.messages.findIndex((m) => m.conversationId !== undefined && m.conversationId !== c.id);
      if (wrong >= 0) {
        ctx.addIssue({
          code: "custom",
          path: ["conversations", i, "messages", wrong, "conversationId"],
          message: "does not match the conversation the message is in",
        });
      }
    });
  });
export type ExportDocument = z.output<typeof ExportDocument>;

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

const invalid = (reason: string): ApiError =>
  new ApiError("invalid_input", `This file cannot be imported: ${reason}.`);

/**
 * Parse and validate an export file. Throws ApiError("invalid_input") with the reason:
 * malformed JSON, too deep, prototype keys, not an export, a newer format, or any field that
 * breaks the schema (the first few issues are named).
 */
export function parseExport(json: string): ExportDocument {
  if (jsonDepth(json) > LIMITS.depth) throw invalid(`it is nested more than ${LIMITS.depth} levels deep`);
  let raw: unknown;
  try {
    raw = JSON.parse(json, (key, value: unknown) => {
      // JSON.parse makes "__proto__" an own key; left in, a later spread or merge could set a
      // prototype. Such keys have no place in an export.
      if (FORBIDDEN_KEYS.has(key)) throw new ApiError("invalid_input", `forbidden key "${key}"`);
      return value;
    });
  } catch (err) {
    if (err instanceof ApiError) throw invalid(`it contains a ${err.message}`);
    throw invalid(`it is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw invalid("it is not a Macaron export");
  const head = raw as { format?: unknown; version?: unknown };
  if (head.format !== EXPORT_FORMAT)
    throw invalid('it is not a Macaron export (no "format": "macaron-export")');
  if (head.version !== EXPORT_VERSION) {
    const v = typeof head.version === "number" ? String(head.version) : "unknown";
    throw invalid(
      `it has format version ${v.slice(0, 20)}; this version of Macaron reads version ${EXPORT_VERSION}`,
    );
  }
  const parsed = ExportDocument.safeParse(raw);
  if (!parsed.success) throw invalid(describeIssues(parsed.error));
  return parsed.data;
}
