/**
 * Ollama's `options` (its Modelfile parameters) onto the same samplers as /v1: each sampler
 * option reaches node-llama-cpp through samplingOptions (same ranges, same seed handling); the
 * options Ollama applies when it loads a model are accepted and change nothing (the app loads
 * the model with its own settings); anything else is a 400 naming the option.
 */
import { z } from "zod";
import type { GenerateOptions, LoadedModel } from "../../core/engine/types";
import { OpenAiError } from "../openai/errors";
import { SamplerFields, samplingOptions } from "../openai/sampling";

/** Ollama's default temperature (OpenAI's is 1). */
export const OLLAMA_DEFAULT_TEMPERATURE = 0.8;

/** Sampler options and the /v1 sampler field each one is. */
const SAMPLERS = {
  temperature: "temperature",
  top_p: "top_p",
  top_k: "top_k",
  min_p: "min_p",
  seed: "seed",
  stop: "stop",
  repeat_penalty: "repeat_penalty",
  repeat_last_n: "repeat_last_n",
  presence_penalty: "presence_penalty",
  frequency_penalty: "frequency_penalty",
} as const satisfies Record<string, keyof typeof SamplerFields>;

/**
 * Load-time options: Ollama applies them when it loads the model (context size, batch, GPU
 * layers, threads, memory mapping). The app loads its model once with the settings chosen in
 * Settings → Engine, so they are accepted and change nothing; a prompt that does not fit the
 * loaded context is refused with its own error.
 */
export const LOAD_TIME_OPTIONS: readonly string[] = [
  "num_ctx",
  "num_batch",
  "num_gpu",
  "main_gpu",
  "num_thread",
  "use_mmap",
  "use_mlock",
  "numa",
  "low_vram",
  "vocab_only",
  "f16_kv",
  "logits_all",
  "embedding_only",
  "num_keep",
];

/**
 * Samplers llama.cpp has but this engine does not offer: accepted at their neutral value only
 * (clients that send Ollama's whole default set), else refused.
 */
const NEUTRAL: Record<string, unknown> = {
  typical_p: 1,
  tfs_z: 1,
  mirostat: 0,
  mirostat_tau: 5,
  mirostat_eta: 0.1,
  penalize_newline: false,
};

function bad(message: string): OpenAiError {
  return new OpenAiError(400, "invalid_request_error", "invalid_request", message, "options");
}

type Sampling = ReturnType<typeof samplingOptions>;

/**
 * `options` as GenerateOptions' samplers. `num_predict` -1 (Ollama's default, "until done") and
 * -2 ("fill the context") are the loaded context; the engine stops where the context is full.
 */
export function ollamaSampling(
  options: Record<string, unknown> | null | undefined,
  loaded: LoadedModel,
): Sampling {
  const body: Record<string, unknown> = {};
  const schema: Record<string, z.ZodType> = {};
  for (const [name, value] of Object.entries(options ?? {})) {
    if (value === null || value === undefined) continue;
    if (name in SAMPLERS) {
      const field = SAMPLERS[name as keyof typeof SAMPLERS];
      body[field] = value;
      schema[field] = SamplerFields[field];
    } else if (name === "num_predict") {
      if (typeof value !== "number" || !Number.isInteger(value) || value < -2 || value === 0)
        throw bad(`Invalid option 'num_predict': ${JSON.stringify(value)} (a positive integer, or -1 / -2).`);
      body.max_tokens = value < 0 ? loaded.contextSize : value;
      schema.max_tokens = SamplerFields.max_tokens;
    } else if (LOAD_TIME_OPTIONS.includes(name)) {
      continue;
    } else if (name in NEUTRAL) {
      if (value !== NEUTRAL[name])
        throw bad(
          `The option '${name}' is not supported by this server's sampler (only its neutral value ${JSON.stringify(NEUTRAL[name])}); leave it out.`,
        );
    } else {
      throw bad(
        `Unknown option '${name}'. Supported: ${[...Object.keys(SAMPLERS), "num_predict"].join(", ")}; ` +
          `accepted without effect (set at load time here): ${LOAD_TIME_OPTIONS.join(", ")}.`,
      );
    }
  }
  const parsed = z.object(schema).safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = String(issue.path[0]);
    const option = Object.entries(SAMPLERS).find(([, f]) => f === field)?.[0] ?? "num_predict";
    throw bad(`Invalid option '${option}': ${issue.message}`);
  }
  try {
    // As Ollama: without num_predict the answer runs until it ends (or the context is full).
    return samplingOptions(
      {
        temperature: OLLAMA_DEFAULT_TEMPERATURE,
        max_tokens: loaded.contextSize,
        ...(parsed.data as Record<string, never>),
      },
      loaded,
    );
  } catch (error) {
    if (!(error instanceof OpenAiError) || error.param !== "max_tokens") throw error;
    throw bad(error.message.replace("'max_tokens'", "The option 'num_predict'"));
  }
}

/** The generate options every Ollama endpoint shares, without the format and tools. */
export type OllamaSampling = Pick<GenerateOptions, keyof Sampling>;
