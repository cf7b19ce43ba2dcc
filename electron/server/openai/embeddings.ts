/** POST /v1/embeddings: vectors from the engine embedder (issue 14: to build). */
import type { FastifyReply, FastifyRequest } from "fastify";
import { OpenAiError, sendOpenAiError } from "./errors";
import type { V1Context } from "./turn";

export function createEmbeddingsHandler(_v1: V1Context) {
  return async function embeddings(_request: FastifyRequest, reply: FastifyReply) {
    return sendOpenAiError(
      reply,
      new OpenAiError(501, "server_error", "not_implemented", "Not implemented yet."),
    );
  };
}
