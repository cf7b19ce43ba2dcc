/**
 * The engine's requests, defined once: each is a strict zod schema here, and its type (what
 * common/engine-protocol.ts exports: GenerateOptions, ChatTurn, EngineRequest, …) is the
 * schema's output, so a field cannot be added to the type without the schema that checks it.
 * The engine validates what it receives: a bad request gets an error reply, never a crash. Every
 * object is strict: an unknown field (a typo, or a field the sender has and the engine does
 * not) is an error naming it, not dropped.
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { ToolCallFormatSchema } from "./adapter-manifest";
import { optionConflicts, type RuleOptions } from "./generate-rules";
import { recordKeepingKeys } from "./json-record";
import type { DeepEqual } from "./type-equality";
import { grammarSchemaProblem, toGrammarSchema, ToolRequestError } from "./grammar-schema";

/** OpenAI's rule for function names; node-llama-cpp's name grammar needs no spaces either. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const PROTO_KEY = 'the key "__proto__" is not allowed';

/** A tool call in the history, with what it returned (text or JSON, as shown to the model). */
const ToolCallRecordSchema = z
  .object({
    name: z.string().regex(TOOL_NAME, "must be 1–64 letters, digits, '_' or '-'"),
    arguments: z.unknown(),
    result: z.unknown(),
  })
  .strict();
export type ToolCallRecord = z.output<typeof ToolCallRecordSchema>;

const ChatTurnSchema = z
  .object({
    role: z.enum(["system", "user", "assistant"]),
    text: z.string(),
    /**
     * Assistant turns: the tool calls the model made after `text`, each with the result it was
     * given. Consecutive assistant turns are one model response (text, calls, text, calls, …), as
     * OpenAI's assistant `tool_calls` + `tool` messages are; a trailing assistant turn is continued.
     */
    calls: z.array(ToolCallRecordSchema).max(128).optional(),
  })
  .strict()
  .refine((turn) => !turn.calls || turn.calls.length === 0 || turn.role === "assistant", {
    message: "only assistant turns carry tool calls",
    path: ["calls"],
  });
export type ChatTurn = z.output<typeof ChatTurnSchema>;

/** A function the model may call (OpenAI's `tools[].function`). */
const ToolDefinitionSchema = z
  .object({
    /** ^[a-zA-Z0-9_-]{1,64}$ */
    name: z.string().regex(TOOL_NAME, "must be 1–64 letters, digits, '_' or '-'"),
    description: z.string().max(16_384).optional(),
    /** JSON Schema of the arguments (an object schema); absent = no arguments. */
    parameters: recordKeepingKeys(z.string(), z.unknown(), PROTO_KEY).optional(),
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
export type ToolDefinition = z.output<typeof ToolDefinitionSchema>;

/**
 * "auto": the model decides (text or calls); "required": it must call one of the tools; `{name}`:
 * it must call that one. "none" is expressed by passing no tools.
 */
const ToolChoiceSchema = z.union([
  z.literal("auto"),
  z.literal("required"),
  z.object({ name: z.string().regex(TOOL_NAME) }).strict(),
]);
export type ToolChoice = z.output<typeof ToolChoiceSchema>;

/**
 * A tool-call syntax that overrides the chat wrapper's (node-llama-cpp `settings.functions`), for
 * an adapter trained to call tools in its own format (the demo's Agent writes
 * `{"tool":"set_timer","arguments":{"minutes":15}}`). The call is `callPrefix` + name +
 * `paramsPrefix` + JSON arguments + `callSuffix`; a result is `resultPrefix` + JSON + `resultSuffix`.
 * `documented` — false: no function documentation in the system prompt (the adapter learned its
 * tools); true: the chat wrapper's own documentation; "compact": one short line per tool
 * (native/engine/tool-docs.ts), what the demo Agent is trained on. The schema is the adapter
 * manifest's (common/adapter-manifest.ts), which carries the same format.
 */
export type ToolCallFormat = z.output<typeof ToolCallFormatSchema>;

/** One LoRA adapter applied to the live context, validated by core before it gets here. */
const AdapterUseSchema = z
  .object({
    /** Absolute path of the adapter GGUF. */
    path: z.string().refine(isAbsolute, "must be an absolute path to an adapter file"),
    // llama.cpp takes any float; beyond ±4 a LoRA only produces noise.
    scale: z.number().min(-4).max(4),
  })
  .strict();
export type AdapterUse = z.output<typeof AdapterUseSchema>;

/**
 * What happens to the KV cache when the adapter set differs from the one the cached history was
 * evaluated under:
 * - "reevaluate": exact — the history is evaluated again under the new adapters.
 * - "sequence-per-set": one cached sequence per adapter set; exact, costs context memory.
 * - "activated": activated-LoRA style — the cached history is never re-evaluated; adapters
 *   apply only to the tokens after the cached prefix (the new user turn and the answer). Each
 *   cached token keeps the keys/values of the turn that first evaluated it (under the base or
 *   under that turn's adapters), so it is exact only when the cached prefix was evaluated under
 *   the same set or the adapters touch only the output layer (see native/engine/kv-slots.ts).
 */
const KvPolicySchema = z.enum(["reevaluate", "sequence-per-set", "activated"]);
export type KvPolicy = z.output<typeof KvPolicySchema>;

const RepeatPenaltySchema = z
  .object({
    /** Multiplicative penalty (llama.cpp `repeat_penalty`; 1 = off). */
    // llama.cpp divides positive logits by it: 0 or less is meaningless; beyond 10 it only bans tokens.
    penalty: z.number().gt(0).max(10).optional(),
    /** OpenAI `frequency_penalty` (-2..2): subtracted per earlier occurrence. */
    frequencyPenalty: z.number().min(-2).max(2).optional(),
    /** OpenAI `presence_penalty` (-2..2): subtracted once for any earlier occurrence. */
    presencePenalty: z.number().min(-2).max(2).optional(),
    /** How many recent tokens the penalties look at (default node-llama-cpp's 64). */
    lastTokens: z.number().int().min(0).max(1_048_576).optional(),
  })
  .strict();
export type RepeatPenaltyOptions = z.output<typeof RepeatPenaltySchema>;

const TOKEN_ID_MESSAGE = "token ids must be integers ≥ 0";

/**
 * OpenAI's `logit_bias` by token id. Keys arrive as strings (JSON object keys); whether an id is
 * inside the vocabulary is checked by the model session, which knows it.
 */
const TokenBiasSchema = recordKeepingKeys(
  z.string().regex(/^(0|[1-9][0-9]{0,9})$/, TOKEN_ID_MESSAGE),
  z.number().min(-100).max(100),
  `${TOKEN_ID_MESSAGE}, not "__proto__"`,
)
  .refine((bias) => Object.keys(bias).length <= 1024, "at most 1024 token biases")
  .transform((bias) => {
    const out: Record<number, number> = {};
    for (const [key, value] of Object.entries(bias)) out[Number(key)] = value;
    return out;
  });

const GenerateOptionsSchema = z
  .object({
    /** 0 = greedy. */
    temperature: z.number().min(0).max(5),
    maxTokens: z.number().int().positive(),
    /** Extra stop strings (OpenAI `stop`). */
    stop: z.array(z.string().min(1)).optional(),
    seed: z.number().int().optional(),
    /** Adapters for this generation ([] or absent = the base model alone). */
    adapters: z.array(AdapterUseSchema).max(8).optional(),
    kvPolicy: KvPolicySchema.optional(),
    /**
     * Constrain the answer to JSON matching this schema (node-llama-cpp's JSON-schema grammar).
     * The grammar guarantees syntax only: validate the parsed answer afterwards.
     */
    // A JSON schema object the grammar can express (else the answer could parse and not match).
    jsonSchema: recordKeepingKeys(z.string(), z.unknown(), PROTO_KEY)
      .superRefine((schema, ctx) => {
        const problem = grammarSchemaProblem(schema, "jsonSchema");
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
    /**
     * The conversation this generation continues (core passes the conversation id). The engine
     * keeps a KV cache per (sessionKey, adapter set) in its sequences and, with a `stateDir`,
     * on disk, so reopening a conversation evaluates only its new tokens. Absent: a shared cache.
     */
    sessionKey: z.string().max(512).optional(),
    /**
     * Functions the model may call (node-llama-cpp function calling: the name and the arguments
     * are grammar-constrained to these definitions). Not together with `jsonSchema`.
     */
    tools: z.array(ToolDefinitionSchema).max(128).optional(),
    /** Default "auto". */
    toolChoice: ToolChoiceSchema.optional(),
    /** More than one call in one answer (default true). */
    parallelToolCalls: z.boolean().optional(),
    /** The adapter's own call syntax (see ToolCallFormat); absent = the chat wrapper's. */
    toolFormat: ToolCallFormatSchema.optional(),
    /**
     * Samplers, passed to node-llama-cpp as they are (absent: node-llama-cpp's defaults). top-p,
     * top-k and min-p apply only when temperature > 0, as in llama.cpp (greedy decoding ignores
     * them); repeatPenalty and tokenBias adjust the logits before either, so they act on greedy
     * decoding too.
     */
    topP: z.number().min(0).max(1).optional(),
    topK: z.number().int().min(0).optional(),
    minP: z.number().min(0).max(1).optional(),
    /** Repetition penalties over the last `lastTokens` tokens (node-llama-cpp `repeatPenalty`). */
    repeatPenalty: RepeatPenaltySchema.optional(),
    /**
     * Logit biases by token id (OpenAI `logit_bias`: -100..100 added to the logit; -100 = never).
     * Ids outside the vocabulary are refused (invalid_request).
     */
    tokenBias: TokenBiasSchema.optional(),
    /**
     * Constrain the answer to any JSON value (OpenAI `response_format: json_object`; node-llama-cpp's
     * built-in "json" grammar). Not together with `jsonSchema` or `tools`.
     */
    json: z.boolean().optional(),
    /**
     * Report the log-probability of each generated token and the `top` most likely alternatives
     * (0..20) at each position, from the model's distribution (temperature 1, before samplers,
     * biases and grammar; see native/engine/logprobs.ts) (GenerateResult.logprobs). The tokens
     * of `text` only: not a tool call's.
     */
    logprobs: z
      .object({ top: z.number().int().min(0).max(20) })
      .strict()
      .optional(),
  })
  // Strict: a field the sender adds that the engine does not know is refused, never dropped.
  .strict();
export type GenerateOptions = z.output<typeof GenerateOptionsSchema>;

/** What the options mean together (each field alone is checked above): common/generate-rules.ts. */
const GenerateOptionsChecked = GenerateOptionsSchema.superRefine((options, ctx) => {
  for (const conflict of optionConflicts(options))
    ctx.addIssue({ code: "custom", message: conflict.message, path: [conflict.field] });
});

const id = z.number().int();

/** "auto": as many layers as fit the GPU (0 without one); "max": all; N: that many. */
const GpuLayersSchema = z.union([z.literal("auto"), z.literal("max"), z.number().int().min(0).max(1000)]);
export type GpuLayersSetting = z.output<typeof GpuLayersSchema>;
const FlashAttentionSchema = z.enum(["auto", "on", "off"]);
/** KV cache element type (node-llama-cpp's `experimentalKvCacheKeyType/ValueType`). */
const KvCacheTypeSchema = z.enum(["f16", "q8_0", "q4_0"]);
export type KvCacheType = z.output<typeof KvCacheTypeSchema>;

/**
 * How a model is loaded. Every field is optional: absent = decided at load time (context from
 * the memory that is free, capped at the training context; flash attention by
 * `flashAttentionFor`; threads from the machine; batch by node-llama-cpp).
 */
const LoadOptionsShape = {
  /** Tokens per sequence, at most the model's training context. */
  contextSize: z.number().int().positive().optional(),
  gpuLayers: GpuLayersSchema.optional(),
  flashAttention: FlashAttentionSchema.optional(),
  kvCacheType: KvCacheTypeSchema.optional(),
  batchSize: z.number().int().min(1).max(65_536).optional(),
  threads: z.number().int().min(1).max(512).optional(),
};
export const LoadOptionsSchema = z.object(LoadOptionsShape).strict();
export type LoadOptions = z.output<typeof LoadOptionsSchema>;

/** A GGUF to estimate: a local file, or a remote one (only its header is read). */
const FitSourceSchema = z.union([
  z.object({ path: z.string().min(1).max(4096) }).strict(),
  z
    .object({
      url: z
        .string()
        .max(8192)
        .refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL"),
      headers: recordKeepingKeys(z.string(), z.string(), PROTO_KEY).optional(),
    })
    .strict(),
]);
export type FitSource = z.output<typeof FitSourceSchema>;

/** Every request core sends the engine, by `type`; each has an `id`, which its reply echoes. */
export const EngineRequestSchema = z.discriminatedUnion("type", [
  z
    .object({
      id,
      type: z.literal("load"),
      path: z.string().min(1),
      /**
       * Context sequences (KV caches) to allocate, each of `contextSize` tokens; the
       * "sequence-per-set" policy keeps one per adapter set. Default: up to 8, as memory allows;
       * 1 saves memory and makes "sequence-per-set" behave like "reevaluate".
       */
      sequences: z.number().int().min(1).max(16).optional(),
      /**
       * Folder (absolute) where conversations' KV states are saved after each answer and
       * restored when a conversation's cache is no longer in a sequence (evicted, reloaded,
       * engine restarted). Absent: nothing is saved. Core passes `<dataDir>/kv`.
       */
      stateDir: z.string().refine(isAbsolute, "must be an absolute folder path").optional(),
      ...LoadOptionsShape,
    })
    .strict(),
  z.object({ id, type: z.literal("unload") }).strict(),
  z
    .object({
      id,
      type: z.literal("generate"),
      /** Full history ending with the user turn to answer. */
      history: z.array(ChatTurnSchema).min(1),
      options: GenerateOptionsChecked,
      /** false: no "token" messages, only the result (whose text is the whole answer). Default true. */
      stream: z.boolean().optional(),
    })
    .strict(),
  /** Abort the generation started by request `target`. The generation then ends with reason "abort". */
  z.object({ id, type: z.literal("abort"), target: id }).strict(),
  z.object({ id, type: z.literal("ping") }).strict(),
  /** Mean-pooled embeddings of each text under the base model (no adapters): for the router. */
  z.object({ id, type: z.literal("embed"), texts: z.array(z.string()).max(1024) }).strict(),
  /**
   * As "embed", with token counts (EmbedResult); a text over EMBEDDING_MAX_TOKENS is refused
   * (context_length_exceeded naming its index), or with `truncate` cut to its first
   * EMBEDDING_MAX_TOKENS tokens (Ollama's /api/embed) and counted as cut.
   */
  z
    .object({
      id,
      type: z.literal("embedCounted"),
      texts: z.array(z.string()).max(2048),
      truncate: z.boolean().optional(),
    })
    .strict(),
  /** How many tokens each text is under the loaded model's tokenizer (no special tokens, no BOS). */
  z
    .object({ id, type: z.literal("countTokens"), texts: z.array(z.string().max(1_000_000)).max(64) })
    .strict(),
  /**
   * Continue a raw prompt (OpenAI /v1/completions): no chat template; the prompt is tokenized as
   * is (with BOS when the model wants one). Same options and result as "generate", except tools
   * (refused) and sessionKey (ignored: a shared cache).
   */
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
  /**
   * Drop a conversation's cached KV (live sequences and saved state files in `stateDir`): its
   * conversation was deleted, and the cache holds its tokens.
   */
  z
    .object({
      id,
      type: z.literal("forget"),
      sessionKey: z.string().min(1).max(200),
      stateDir: z.string().min(1).max(4096).optional(),
    })
    .strict(),
  /**
   * Memory estimate of a GGUF for a context size and GPU layers on this machine, from its
   * header (GgufInsights); nothing is loaded. `sequences`: as a load would allocate (default: up to 8 as memory allows).
   */
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
  /** Which binaries llama.cpp runs from (prebuilt or built for this machine). */
  z.object({ id, type: z.literal("info") }).strict(),
]);

/** A request core sends the engine: the schema's output, as the engine has it after parsing. */
export type EngineRequest = z.output<typeof EngineRequestSchema>;

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
 * generate-rules.ts reads the options by shape (it sits below this module, which applies it):
 * the options must be what it reads, and its tool choice this one, or the typecheck fails.
 */
const rulesReadTheseOptions: {
  options: GenerateOptions extends RuleOptions ? true : false;
  toolChoice: DeepEqual<NonNullable<RuleOptions["toolChoice"]>, ToolChoice>;
} = { options: true, toolChoice: true };
void rulesReadTheseOptions;
