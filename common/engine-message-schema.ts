import { z } from "zod";
import type {
  EngineErrorCode,
  EngineMessage,
  EngineReplies,
  EngineRequestType,
  GenerateResult,
  TokenLogprob,
} from "./engine-protocol";
import type { DeepEqual } from "./type-equality";
import { describeIssues } from "./zod-issues";

/*
 * What the engine sends to core (common/engine-protocol.ts documents each field): the message
 * envelope, checked on every message, and the reply to each request type, checked once per
 * request when its "result" arrives. Not strict: a field core does not know is dropped, never
 * an error (the engine is the trusted side; this catches a broken or mismatched engine, so that
 * its message fails the one request it names instead of surfacing later as a wrong value).
 */

const id = z.number().int();

const ENGINE_ERROR_CODES = [
  "model_load_failed",
  "no_model",
  "busy",
  "invalid_request",
  "adapter_failed",
  "context_length_exceeded",
  "aborted",
  "internal",
] as const satisfies readonly EngineErrorCode[];

/**
 * Every message is checked, "token" ones too (one per token batch, a few ms apart): a flat
 * object per type, 0.1–0.5 µs a message on the development machine under load, where the
 * structured clone that carries it costs ~15 µs (spawn-node.ts).
 */
export const EngineMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), pid: z.number().int() }),
  z.object({ type: z.literal("progress"), id, progress: z.number() }),
  z.object({ type: z.literal("token"), id, text: z.string() }),
  z.object({ type: z.literal("result"), id, value: z.unknown() }),
  z.object({
    type: z.literal("error"),
    id,
    // A code this side does not know still carries the engine's message, which says more than
    // "malformed": it fails the request as "internal" (what core did before codes were checked).
    code: z.enum(ENGINE_ERROR_CODES).catch("internal"),
    message: z.string(),
  }),
]);

const number = z.number();
const count = z.number().int().min(0);
const FlashAttentionSchema = z.enum(["auto", "on", "off"]);
const KvCacheTypeSchema = z.enum(["f16", "q8_0", "q4_0"]);

const LoadedModelSchema = z.object({
  path: z.string(),
  contextSize: count,
  gpu: z.string().nullable(),
  threads: count,
  trainContextSize: count,
  settings: z
    .object({
      contextSize: count,
      sequences: count,
      gpuLayers: count,
      totalLayers: count,
      flashAttention: FlashAttentionSchema,
      kvCacheType: KvCacheTypeSchema,
      batchSize: count,
      threads: count,
      mmap: z.boolean().optional(),
    })
    .optional(),
});

/**
 * Log-probabilities: with `top` 20, 21 entries per generated token (86k objects for 4096
 * tokens), which a schema per object took 34–280 ms to check on the development machine, on
 * core's thread; this loop, without copies, takes a few ms.
 */
const LogprobsSchema = z.custom<TokenLogprob[]>(
  (value) =>
    Array.isArray(value) &&
    value.every(
      (item: unknown) =>
        isLogprobEntry(item) &&
        Array.isArray((item as { top?: unknown }).top) &&
        (item as { top: unknown[] }).top.every(isLogprobEntry),
    ),
  "must be a list of { token, logprob, bytes, top }",
);

function isLogprobEntry(item: unknown): boolean {
  if (typeof item !== "object" || item === null) return false;
  const { token, logprob, bytes } = item as { token?: unknown; logprob?: unknown; bytes?: unknown };
  return (
    typeof token === "string" &&
    typeof logprob === "number" &&
    Array.isArray(bytes) &&
    bytes.every((b) => typeof b === "number")
  );
}

const GenerateResultSchema = z.object({
  text: z.string(),
  stopReason: z.enum(["eos", "maxTokens", "stop", "abort", "toolCalls"]),
  toolCalls: z.array(z.object({ name: z.string(), arguments: z.unknown() })).optional(),
  cutOffCall: z.object({ name: z.string(), arguments: z.string() }).optional(),
  tokens: count,
  ttftMs: number.nullable(),
  durationMs: number,
  promptTokensEvaluated: count,
  promptTokens: count.optional(),
  stopSequence: z.string().optional(),
  logprobs: LogprobsSchema.optional(),
  contextTokens: count,
  contextSize: count,
}) satisfies z.ZodType<GenerateResult>;

/**
 * Embedding vectors: up to thousands of numbers per text, so a loop rather than a schema per
 * number; any number passes (a broken model's NaN is the router's to handle, as before).
 */
const VectorsSchema = z.custom<number[][]>(
  (value) =>
    Array.isArray(value) &&
    value.every((row) => Array.isArray(row) && row.every((x) => typeof x === "number")),
  "must be arrays of numbers",
);

/**
 * A fit estimate is computed from a GGUF header of any origin (a remote file): any number passes,
 * NaN and Infinity too (z.number() refuses them), as the estimate showed them before.
 */
const anyNumber = z.custom<number>((value) => typeof value === "number", "must be a number");

const MachineMemorySchema = z.object({
  ramTotalBytes: anyNumber,
  ramFreeBytes: anyNumber,
  vramTotalBytes: anyNumber,
  vramFreeBytes: anyNumber,
  gpu: z.string().nullable(),
  cpuCores: anyNumber,
});

const FitResultSchema = z.object({
  contextSize: anyNumber,
  gpuLayers: anyNumber,
  totalLayers: anyNumber,
  ramBytes: anyNumber,
  vramBytes: anyNumber,
  maxContextSize: anyNumber,
  trainContextSize: anyNumber,
  machine: MachineMemorySchema,
  fits: z.boolean(),
  summary: z.string(),
  model: z.object({
    architecture: z.string(),
    name: z.string().nullable(),
    parameters: anyNumber,
    fileBytes: anyNumber,
    expertCount: anyNumber.nullable(),
    expertUsedCount: anyNumber.nullable(),
    headSize: anyNumber.nullable().optional(),
  }),
});

/** The `value` of the "result" message, per request type (EngineReplies). */
export const EngineReplySchemas = {
  load: LoadedModelSchema,
  unload: z.null(),
  generate: GenerateResultSchema,
  abort: z.object({ aborted: z.boolean() }),
  ping: z.object({ pid: z.number().int() }),
  embed: VectorsSchema,
  embedCounted: z.object({ vectors: VectorsSchema, tokens: z.array(count) }),
  countTokens: z.array(count),
  complete: GenerateResultSchema,
  forget: z.object({ deletedFiles: count }),
  fit: FitResultSchema,
  info: z.object({
    buildType: z.enum(["localBuild", "prebuilt"]),
    gpu: z.string().nullable(),
    llamaCpp: z.string(),
  }),
} satisfies ReplySchemas;

type ReplySchemas = { [K in EngineRequestType]: z.ZodType<EngineReplies[K]> };
const replySchemas: ReplySchemas = EngineReplySchemas;

export type ParsedMessage =
  | { ok: true; message: EngineMessage }
  /** `id`: the request the message named, when it had a numeric one (that request fails). */
  | { ok: false; id: number | undefined; problem: string };

/** Check one message from the engine; on failure keep its `id`, so its request can be failed. */
export function parseEngineMessage(raw: unknown): ParsedMessage {
  const parsed = EngineMessageSchema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const rawId = typeof raw === "object" && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return {
    ok: false,
    id: typeof rawId === "number" ? rawId : undefined,
    problem: `${describeMessage(raw)}: ${describeIssues(parsed.error)}`,
  };
}

export type ParsedReply<K extends EngineRequestType> =
  { ok: true; value: EngineReplies[K] } | { ok: false; problem: string };

/** Check the `value` of a "result" message against the reply to its request's type. */
export function parseEngineReply<K extends EngineRequestType>(type: K, value: unknown): ParsedReply<K> {
  const parsed = replySchemas[type].safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, problem: `"${type}" result: ${describeIssues(parsed.error)}` };
}

/** What a message said it was, for a log line (never its contents, which may be long). */
function describeMessage(raw: unknown): string {
  if (typeof raw !== "object" || raw === null) return `not an object (${raw === null ? "null" : typeof raw})`;
  const type = (raw as { type?: unknown }).type;
  return typeof type === "string" ? `"${type.slice(0, 40)}" message` : "message without a type";
}

/*
 * The schemas and the protocol's types (common/engine-protocol.ts, where each field is
 * documented) must say the same at every depth: a field added to one and not the other, however
 * deep and optional, fails the typecheck (type-equality.ts; type-equality.test.ts shows it).
 */
type Message = z.output<typeof EngineMessageSchema>;
type Reply<K extends EngineRequestType> = z.output<(typeof EngineReplySchemas)[K]>;
const schemasMatchProtocol: {
  messages: DeepEqual<Message, EngineMessage>;
  replies: { [K in EngineRequestType]: DeepEqual<Reply<K>, EngineReplies[K]> };
} = {
  messages: true,
  replies: {
    load: true,
    unload: true,
    generate: true,
    abort: true,
    ping: true,
    embed: true,
    embedCounted: true,
    countTokens: true,
    complete: true,
    forget: true,
    fit: true,
    info: true,
  },
};
void schemasMatchProtocol;
