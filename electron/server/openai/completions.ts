/** POST /v1/completions: a raw prompt continued without the chat template (issue 14: to build). */
import type { FastifyReply, FastifyRequest } from "fastify";
import { OpenAiError, sendOpenAiError } from "./errors";
import type { V1Context } from "./turn";

export function createCompletionHandler(_v1: V1Context) {
  return async function completion(_request: FastifyRequest, reply: FastifyReply) {
    return sendOpenAiError(
      reply,
      new OpenAiError(501, "server_error", "not_implemented", "Not implemented yet."),
    );
  };
}
