/**
 * POST /v1/embeddings: vectors from the engine's embedder, for RAG tools and editors that index
 * with the same server they chat with. The vectors always come from the loaded base model, under
 * any model name: LoRA adapters change how the model writes, and an index must not shift with
 * the adapter a request names; clients send their own default names (`text-embedding-3-small`,
 * LangChain's `text-embedding-ada-002`, Ollama's `nomic-embed-text`), which all get the base's
 * vectors. The response's `model` is the name the request sent.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { OpenAiError, sendOpenAiError } from "./errors";
import { describeIssue, EmbeddingRequest } from "./schemas";
import { abortOnClose, toOpenAiError, withParam, type V1Context } from "./turn";

function invalid(message: string, param: string | null): OpenAiError {
  return new OpenAiError(400, "invalid_request_error", "invalid_request", message, param);
}

/** OpenAI's clients accept token ids; this server tokenizes itself, so the text is needed. */
function tokenArrays(input: unknown): boolean {
  if (!Array.isArray(input) || input.length === 0) return false;
  return input.every((item) => typeof item === "number" || Array.isArray(item));
}

/** OpenAI's base64 form: the float32 values, little-endian, back to back. */
export function toBase64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return bytes.toString("base64");
}

export function createEmbeddingsHandler({ core }: V1Context) {
  /** Vector size by model file, once known: a wrong `dimensions` is then refused before any work. */
  const sizes = new Map<string, number>();
  const wrongDimensions = (requested: number, size: number) =>
    invalid(
      `'dimensions' is ${requested}, but this model's embeddings have ${size}; leave it out or send ${size}.`,
      "dimensions",
    );
  return async function embeddings(request: FastifyRequest, reply: FastifyReply) {
    const raw = (request.body as { input?: unknown } | null)?.input;
    if (tokenArrays(raw))
      return sendOpenAiError(
        reply,
        invalid(
          "Token arrays are not supported as 'input': send text (a string or an array of strings).",
          "input",
        ),
      );
    const parsed = EmbeddingRequest.safeParse(request.body);
    if (!parsed.success) {
      const { message, param } = describeIssue(parsed.error);
      return sendOpenAiError(reply, invalid(message, param));
    }
    const body = parsed.data;
    const texts = typeof body.input === "string" ? [body.input] : body.input;
    try {
      const loaded = core.generation.loaded;
      if (!loaded)
        throw new OpenAiError(503, "server_error", "model_not_loaded", "No model is loaded. Load one first.");
      const known = sizes.get(loaded.path);
      if (body.dimensions != null && known !== undefined && body.dimensions !== known)
        throw wrongDimensions(body.dimensions, known);
      if (!core.generation.canEmbed)
        throw new OpenAiError(
          501,
          "server_error",
          "not_implemented",
          "This engine cannot report embeddings.",
        );
      // In line with the generations: an embedding waits for a running one instead of failing
      // with "busy" (the engine does one thing at a time).
      const { vectors, tokens } = await core.generation.embed(texts, abortOnClose(reply));
      const size = vectors[0]?.length ?? 0;
      sizes.set(loaded.path, size);
      if (body.dimensions != null && body.dimensions !== size) throw wrongDimensions(body.dimensions, size);
      const promptTokens = tokens.reduce((sum, n) => sum + n, 0);
      return reply.send({
        object: "list",
        data: vectors.map((vector, index) => ({
          object: "embedding",
          index,
          embedding: body.encoding_format === "base64" ? toBase64(vector) : vector,
        })),
        model: body.model,
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      });
    } catch (error) {
      return sendOpenAiError(reply, withParam(toOpenAiError(error), "input"));
    }
  };
}
