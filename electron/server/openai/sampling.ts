/**
 * OpenAI's sampling fields as the engine's GenerateOptions, shared by /v1/chat/completions,
 * /v1/completions and /v1/responses: every field either reaches node-llama-cpp or is refused
 * with a 400 naming it, never accepted and dropped (issue 14).
 */
import { randomInt } from "node:crypto";
import type { FastifyReply } from "fastify";
import { z } from "zod";
import type {
  GenerateOptions,
  LoadedModel,
  RepeatPenaltyOptions,
  TokenLogprob,
} from "../../core/engine/types";
import { checkArguments, schemaProblem } from "../../core/tools/argument-check";
import { toGrammarSchema } from "../../../common/grammar-schema";
import { recordKeepingKeys } from "../../../common/json-record";
import { OpenAiError } from "./errors";
import { checkMaxTokens } from "./turn";

/** When the client gives no limit; the engine also stops when the context is full. */
export const DEFAULT_MAX_TOKENS = 1024;
/** OpenAI's default. */
export const DEFAULT_TEMPERATURE = 1;
/** OpenAI's bound for `top_logprobs`; node-llama-cpp reports as many as asked. */
export const MAX_TOP_LOGPROBS = 20;
/**
 * The response header that says which seed sampled the answer (the request's, or a fresh random
 * one when it sent none): sending it back as `seed` reproduces the answer.
 */
export const SEED_HEADER = "x-macaron-seed";

/**
 * A fresh seed for a request without one: 0 to 2^32 - 2 (llama.cpp reads seeds as uint32, and
 * 0xFFFFFFFF is its "pick one yourself"). node-llama-cpp's own default is the current second,
 * so identical requests within a second (parallel clients) gave the same answer.
 */
export function requestSeed(seed: number | null | undefined): number {
  return seed ?? randomInt(0, 0xffff_ffff);
}

/** Says which seed the answer was sampled with (before any byte is sent, SSE included). */
export function sendSeed(reply: FastifyReply, options: { seed?: number }): void {
  if (options.seed !== undefined) reply.header(SEED_HEADER, String(options.seed));
}

/** OpenAI accepts up to 300 biased tokens. */
const MAX_LOGIT_BIAS = 300;

/**
 * The sampler fields of chat and text completions (zod shape, spread into each request
 * schema). `top_k`, `min_p`, `repeat_penalty` and `repeat_last_n` are llama.cpp's, sent by
 * clients of llama-server, LM Studio and Ollama's OpenAI API.
 */
export const SamplerFields = {
  max_tokens: z.number().int().min(1).max(1_000_000).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
  /** Token id (a decimal string, as JSON keys are) → bias -100..100. */
  logit_bias: recordKeepingKeys(
    z.string(),
    z.number().min(-100).max(100),
    `Invalid 'logit_bias': the key "__proto__" is not a token id (a non-negative integer).`,
  ).nullish(),
  top_k: z.number().int().min(0).max(1000).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  repeat_penalty: z.number().gt(0).max(10).nullish(),
  repeat_last_n: z.number().int().min(0).max(4096).nullish(),
};

type SamplerBody = {
  [K in keyof typeof SamplerFields]?: z.infer<(typeof SamplerFields)[K]>;
};

/**
 * Fields real clients send that change nothing on a local model: accepted (so that default
 * client calls never get a 400) and ignored. Any other unknown field gets OpenAI's own 400,
 * "Unrecognized request argument supplied: <field>".
 * - `user`, `safety_identifier`, `metadata`, `store`, `service_tier`, `prompt_cache_key`:
 *   account-side bookkeeping (abuse tracking, stored completions, tiers, OpenAI's prompt cache;
 *   the engine keeps its own KV cache).
 * - `reasoning_effort`, `verbosity`: hints for OpenAI's reasoning models (the Vercel AI SDK
 *   sends them when set in its options).
 */
export const IgnoredFields = {
  user: z.string().max(256).nullish(),
  safety_identifier: z.string().max(256).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  store: z.boolean().nullish(),
  service_tier: z.string().max(64).nullish(),
  prompt_cache_key: z.string().max(1024).nullish(),
  reasoning_effort: z.string().max(64).nullish(),
  verbosity: z.string().max(64).nullish(),
};

export const ResponseFormat = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json_object") }),
  z.strictObject({
    type: z.literal("json_schema"),
    json_schema: z.strictObject({
      name: z.string().min(1).max(64),
      description: z.string().nullish(),
      schema: z.record(z.string(), z.unknown()).nullish(),
      /** Always enforced here: the grammar constrains the answer whether strict or not. */
      strict: z.boolean().nullish(),
    }),
  }),
]);
export type ResponseFormat = z.infer<typeof ResponseFormat>;

function badField(param: string, message: string): OpenAiError {
  return new OpenAiError(400, "invalid_request_error", "invalid_request", message, param);
}

/** The sampler part of GenerateOptions; throws OpenAiError (400) naming a field it cannot honour. */
export function samplingOptions(
  body: SamplerBody & { max_completion_tokens?: number | null },
  loaded: LoadedModel,
): Pick<
  GenerateOptions,
  "temperature" | "maxTokens" | "stop" | "seed" | "topP" | "topK" | "minP" | "repeatPenalty" | "tokenBias"
> {
  // As OpenAI: max_completion_tokens replaces the deprecated max_tokens when both are given.
  const maxParam = body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens";
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  checkMaxTokens(maxTokens, loaded, maxParam);

  const repeatPenalty: RepeatPenaltyOptions = {
    ...(body.repeat_penalty != null ? { penalty: body.repeat_penalty } : {}),
    ...(body.frequency_penalty != null ? { frequencyPenalty: body.frequency_penalty } : {}),
    ...(body.presence_penalty != null ? { presencePenalty: body.presence_penalty } : {}),
    ...(body.repeat_last_n != null ? { lastTokens: body.repeat_last_n } : {}),
  };
  const tokenBias = body.logit_bias != null ? logitBias(body.logit_bias) : undefined;
  return {
    temperature: body.temperature ?? DEFAULT_TEMPERATURE,
    maxTokens: maxTokens ?? DEFAULT_MAX_TOKENS,
    ...stopOption(body.stop),
    seed: requestSeed(body.seed),
    ...(body.top_p != null ? { topP: body.top_p } : {}),
    ...(body.top_k != null ? { topK: body.top_k } : {}),
    ...(body.min_p != null ? { minP: body.min_p } : {}),
    ...(Object.keys(repeatPenalty).length > 0 ? { repeatPenalty } : {}),
    ...(tokenBias ? { tokenBias } : {}),
  };
}

/** An empty stop string can never end an answer: left out rather than refused (clients send `[""]`). */
function stopOption(stop: string | string[] | null | undefined): Pick<GenerateOptions, "stop"> {
  const strings = (typeof stop === "string" ? [stop] : (stop ?? [])).filter((s) => s.length > 0);
  return strings.length > 0 ? { stop: strings } : {};
}

/**
 * The request field an engine refusal is about, where the engine cannot name it: a token id
 * outside the vocabulary is only known to the loaded model, and its refusal names "token
 * biases", which is `logit_bias` here.
 */
export function withEngineParam(
  error: OpenAiError,
  options: Pick<GenerateOptions, "tokenBias">,
): OpenAiError {
  if (error.param !== null || error.code !== "invalid_request" || !options.tokenBias) return error;
  if (!/token bias/i.test(error.message)) return error;
  return new OpenAiError(error.status, error.type, error.code, error.message, "logit_bias");
}

/** `{"50256": -100}` → `{50256: -100}`; a key that is not a token id is a 400 naming `logit_bias`. */
function logitBias(bias: Record<string, number>): Record<number, number> {
  const entries = Object.entries(bias);
  if (entries.length > MAX_LOGIT_BIAS)
    throw badField("logit_bias", `'logit_bias' has ${entries.length} entries; at most ${MAX_LOGIT_BIAS}.`);
  const out: Record<number, number> = {};
  for (const [key, value] of entries) {
    if (!/^\d{1,9}$/.test(key))
      throw badField(
        "logit_bias",
        `Invalid 'logit_bias': the key ${JSON.stringify(key)} is not a token id (a non-negative integer).`,
      );
    out[Number(key)] = value;
  }
  return out;
}

/**
 * How a structured answer is checked after generation: the grammar guarantees syntax while the
 * answer is whole, so what is left is an answer cut short (max_tokens) and the schema keywords
 * the grammar does not enforce (bounds, patterns), checked with ajv against the client's schema.
 */
export type StructuredCheck = { kind: "json" } | { kind: "schema"; schema: Record<string, unknown> } | null;

/**
 * `response_format` as GenerateOptions (`json` or `jsonSchema`) and the check to run on the
 * answer. A schema the grammar cannot express is a 400 naming
 * `response_format.json_schema.schema`. `param` is where the field sits in the request
 * (`response_format`, or `text.format` on /v1/responses).
 */
export function responseFormatOptions(
  format: ResponseFormat | null | undefined,
  param = "response_format",
): { options: Pick<GenerateOptions, "json" | "jsonSchema">; check: StructuredCheck } {
  if (!format || format.type === "text") return { options: {}, check: null };
  if (format.type === "json_object") return { options: { json: true }, check: { kind: "json" } };
  const schema = format.json_schema.schema ?? { type: "object", additionalProperties: true };
  const where = `${param}.json_schema.schema`;
  const problem = schemaProblem(schema, where);
  if (problem) throw badField(where, problem.replace("The tool's input schema", `'${where}'`));
  return {
    options: { jsonSchema: toGrammarSchema(schema, where) },
    check: { kind: "schema", schema },
  };
}

/** Whether a structured answer is whole and valid (true when no format was asked for). */
export function structuredAnswerOk(text: string, check: StructuredCheck): boolean {
  if (!check) return true;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  return check.kind === "json" || checkArguments(check.schema, value).ok;
}

/** `logprobs` + `top_logprobs` (chat) as GenerateOptions.logprobs; top_logprobs needs logprobs. */
export function logprobsOption(
  logprobs: boolean | null | undefined,
  top: number | null | undefined,
): Pick<GenerateOptions, "logprobs"> {
  if (top != null && !logprobs)
    throw badField("top_logprobs", "'top_logprobs' needs 'logprobs' set to true.");
  return logprobs ? { logprobs: { top: top ?? 0 } } : {};
}

export const TopLogprobs = z.number().int().min(0).max(MAX_TOP_LOGPROBS).nullish();

/** OpenAI's chat form: `choices[].logprobs = {content: [{token, logprob, bytes, top_logprobs}], refusal}`. */
export function chatLogprobs(logprobs: readonly TokenLogprob[] | undefined) {
  return {
    content: (logprobs ?? []).map((entry) => ({
      token: entry.token,
      logprob: entry.logprob,
      bytes: entry.bytes,
      top_logprobs: entry.top.map((alt) => ({ token: alt.token, logprob: alt.logprob, bytes: alt.bytes })),
    })),
    refusal: null,
  };
}

/**
 * The legacy completions form: parallel arrays, each alternative as `{token: logprob}`, and
 * `text_offset` counted in characters from the start of the prompt (as OpenAI counts them).
 */
export function legacyLogprobs(logprobs: readonly TokenLogprob[] | undefined, promptLength: number) {
  const entries = logprobs ?? [];
  const textOffset: number[] = [];
  let offset = promptLength;
  for (const entry of entries) {
    textOffset.push(offset);
    offset += entry.token.length;
  }
  return {
    tokens: entries.map((e) => e.token),
    token_logprobs: entries.map((e) => e.logprob),
    top_logprobs: entries.map((e) => Object.fromEntries(e.top.map((alt) => [alt.token, alt.logprob]))),
    text_offset: textOffset,
  };
}
