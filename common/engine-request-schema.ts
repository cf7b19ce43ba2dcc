import { isAbsolute } from "node:path";
import { z } from "zod";
import { ToolCallFormatSchema } from "./adapter-manifest";
import type { EngineRequest } from "./engine-protocol";
import { optionConflicts } from "./generate-rules";
import { grammarSchemaProblem, toGrammarSchema, ToolRequestError } from "./grammar-schema";

/** OpenAI's rule for function names; node-llama-cpp's name grammar needs no spaces either. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const ToolCallRecordSchema = z
  .object({
    name: z.string().regex(TOOL_NAME, "must be 1–64 letters, digits, '_' or '-'"),
    arguments: z.unknown(),
    result: z.unknown(),
  })
  .strict();

const ChatTurnSchema = z
  .object({
    role: z.enum(["system", "user", "assistant"]),
    text: z.string(),
    calls: z.array(ToolCallRecordSchema).max(128).optional(),
  })
  .strict()
  .refine((turn) => !turn.calls || turn.calls.length === 0 || turn.role === "assistant", {
    message: "only assistant turns carry tool calls",
    path: ["calls"],
  });

const ToolDefinitionSchema = z
  .object({
    name: z.string().regex(TOOL_NAME, "must be 1–64 letters, digits, '_' or '-'"),
    description: z.string().max(16_384).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .superRefine((tool, ctx) => {
    if (!tool.parameters) return;
    // The grammar must express the schema, else arguments could parse and still not match.
    try {
      toGrammarSchema(tool.parameters, `tools.${tool.name}.parameters`);
    } catch (error) {
      if (!(error instanceof ToolRequestError)) throw error;
      ctx.addIssue({ code: "custom", message: error.message, path: ["parameters"] });
    }
  });

const ToolChoiceSchema = z.union([
  z.literal("auto"),
  z.literal("required"),
  z.object({ name: z.string().regex(TOOL_NAME) }).strict(),
]);

const AdapterUseSchema = z
  .object({
    path: z.string().refine(isAbsolute, "must be an absolute path to an adapter file"),
    // llama.cpp takes any float; beyond ±4 a LoRA only produces noise.
    scale: z.number().min(-4).max(4),
  })
  .strict();

const RepeatPenaltySchema = z
  .object({
    // llama.cpp divides positive logits by it: 0 or less is meaningless; beyond 10 it only bans tokens.
    penalty: z.number().gt(0).max(10).optional(),
    frequencyPenalty: z.number().min(-2).max(2).optional(),
    presencePenalty: z.number().min(-2).max(2).optional(),
    lastTokens: z.number().int().min(0).max(1_048_576).optional(),
  })
  .strict();

/**
 * OpenAI's `logit_bias` by token id. Keys arrive as strings (JSON object keys); whether an id is
 * inside the vocabulary is checked by the model session, which knows it.
 */
const TokenBiasSchema = z
  .record(
    z.string().regex(/^(0|[1-9][0-9]{0,9})$/, "token ids must be integers ≥ 0"),
    z.number().min(-100).max(100),
  )
  .refine((bias) => Object.keys(bias).length <= 1024, "at most 1024 token biases")
  .transform((bias) => {
    const out: Record<number, number> = {};
    for (const [key, value] of Object.entries(bias)) out[Number(key)] = value;
    return out;
  });

const GenerateOptionsSchema = z
  .object({
    temperature: z.number().min(0).max(5),
    maxTokens: z.number().int().positive(),
    stop: z.array(z.string().min(1)).optional(),
    seed: z.number().int().optional(),
    adapters: z.array(AdapterUseSchema).max(8).optional(),
    kvPolicy: z.enum(["reevaluate", "sequence-per-set", "activated"]).optional(),
    // A JSON schema object the grammar can express (else the answer could parse and not match).
    jsonSchema: z
      .record(z.string(), z.unknown())
      .superRefine((schema, ctx) => {
        const problem = grammarSchemaProblem(schema, "jsonSchema");
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
    sessionKey: z.string().max(512).optional(),
    tools: z.array(ToolDefinitionSchema).max(128).optional(),
    toolChoice: ToolChoiceSchema.optional(),
    parallelToolCalls: z.boolean().optional(),
    toolFormat: ToolCallFormatSchema.optional(),
    topP: z.number().min(0).max(1).optional(),
    topK: z.number().int().min(0).optional(),
    minP: z.number().min(0).max(1).optional(),
    repeatPenalty: RepeatPenaltySchema.optional(),
    tokenBias: TokenBiasSchema.optional(),
    json: z.boolean().optional(),
    logprobs: z
      .object({ top: z.number().int().min(0).max(20) })
      .strict()
      .optional(),
  })
  // Strict: a field added to GenerateOptions but not here is refused, never dropped silently
  // (request-schema.test.ts sends every field of the interface).
  .strict();

/** What the options mean together (each field alone is checked above): common/generate-rules.ts. */
const GenerateOptionsChecked = GenerateOptionsSchema.superRefine((options, ctx) => {
  for (const conflict of optionConflicts(options))
    ctx.addIssue({ code: "custom", message: conflict.message, path: [conflict.field] });
});

const id = z.number().int();

const GpuLayersSchema = z.union([z.literal("auto"), z.literal("max"), z.number().int().min(0).max(1000)]);
const FlashAttentionSchema = z.enum(["auto", "on", "off"]);
const KvCacheTypeSchema = z.enum(["f16", "q8_0", "q4_0"]);

const FitSourceSchema = z.union([
  z.object({ path: z.string().min(1).max(4096) }).strict(),
  z
    .object({
      url: z
        .string()
        .max(8192)
        .refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL"),
      headers: z.record(z.string(), z.string()).optional(),
    })
    .strict(),
]);

/**
 * The engine validates what it receives: a bad request gets an error reply, never a crash. Every
 * object is strict: an unknown field (a typo, or a field the protocol gained without a schema
 * here) is an error naming it, not dropped.
 */
export const EngineRequestSchema = z.discriminatedUnion("type", [
  z
    .object({
      id,
      type: z.literal("load"),
      path: z.string().min(1),
      contextSize: z.number().int().positive().optional(),
      sequences: z.number().int().min(1).max(16).optional(),
      stateDir: z.string().refine(isAbsolute, "must be an absolute folder path").optional(),
      gpuLayers: GpuLayersSchema.optional(),
      flashAttention: FlashAttentionSchema.optional(),
      kvCacheType: KvCacheTypeSchema.optional(),
      batchSize: z.number().int().min(1).max(65_536).optional(),
      threads: z.number().int().min(1).max(512).optional(),
    })
    .strict(),
  z.object({ id, type: z.literal("unload") }).strict(),
  z
    .object({
      id,
      type: z.literal("generate"),
      history: z.array(ChatTurnSchema).min(1),
      options: GenerateOptionsChecked,
      stream: z.boolean().optional(),
    })
    .strict(),
  z.object({ id, type: z.literal("abort"), target: id }).strict(),
  z.object({ id, type: z.literal("ping") }).strict(),
  z.object({ id, type: z.literal("embed"), texts: z.array(z.string()).max(1024) }).strict(),
  z.object({ id, type: z.literal("embedCounted"), texts: z.array(z.string()).max(2048) }).strict(),
  z
    .object({ id, type: z.literal("countTokens"), texts: z.array(z.string().max(1_000_000)).max(64) })
    .strict(),
  z
    .object({
      id,
      type: z.literal("complete"),
      // An empty prompt is fine: the model continues from BOS alone.
      prompt: z.string().max(4_000_000),
      options: GenerateOptionsChecked.refine((options) => !options.tools || options.tools.length === 0, {
        message: "a raw completion cannot call tools",
        path: ["tools"],
      }),
      stream: z.boolean().optional(),
    })
    .strict(),
  z
    .object({
      id,
      type: z.literal("forget"),
      sessionKey: z.string().min(1).max(200),
      stateDir: z.string().min(1).max(4096).optional(),
    })
    .strict(),
  z
    .object({
      id,
      type: z.literal("fit"),
      source: FitSourceSchema,
      contextSize: z.number().int().positive().max(1_048_576).optional(),
      gpuLayers: GpuLayersSchema.optional(),
      sequences: z.number().int().min(1).max(16).optional(),
      flashAttention: FlashAttentionSchema.optional(),
      kvCacheType: KvCacheTypeSchema.optional(),
    })
    .strict(),
  z.object({ id, type: z.literal("info") }).strict(),
]);

export type ParsedRequest = { ok: true; request: EngineRequest } | { ok: false; id: number; message: string };

/** Parse an incoming message; on failure keep whatever `id` it had so the caller can be answered. */
export function parseEngineRequest(raw: unknown): ParsedRequest {
  const parsed = EngineRequestSchema.safeParse(raw);
  if (parsed.success) return { ok: true, request: parsed.data };
  const rawId = typeof raw === "object" && raw !== null ? (raw as { id?: unknown }).id : undefined;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  return {
    ok: false,
    id: typeof rawId === "number" ? rawId : -1,
    message: `Invalid engine request${where}: ${issue?.message ?? "unknown shape"}`,
  };
}

/*
 * The schema and the protocol's types (common/engine-protocol.ts, where each field is documented)
 * must say the same: every request type has the same fields in both, and each side's values are
 * the other's. A field added to one and not the other fails the typecheck, so it can never be
 * dropped silently or refused by surprise.
 */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
type Assignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Agrees<A, B> = SameKeys<A, B> extends true ? Assignable<A, B> : false;
type Parsed = z.output<typeof EngineRequestSchema>;
type RequestAgrees = {
  [K in EngineRequest["type"]]: Agrees<Extract<Parsed, { type: K }>, Extract<EngineRequest, { type: K }>>;
};
type Of<K extends EngineRequest["type"], F extends string, U> = U extends { type: K }
  ? U[F & keyof U]
  : never;
const schemaMatchesProtocol: {
  requests: RequestAgrees;
  generateOptions: Agrees<Of<"generate", "options", Parsed>, Of<"generate", "options", EngineRequest>>;
  completeOptions: Agrees<Of<"complete", "options", Parsed>, Of<"complete", "options", EngineRequest>>;
  chatTurn: Agrees<
    Of<"generate", "history", Parsed>[number],
    Of<"generate", "history", EngineRequest>[number]
  >;
} = {
  requests: {
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
  generateOptions: true,
  completeOptions: true,
  chatTurn: true,
};
void schemaMatchesProtocol;
