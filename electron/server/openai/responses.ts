/** POST /v1/responses: OpenAI's Responses API, the subset coding agents use (issue 14: to build). */
import type { FastifyReply, FastifyRequest } from "fastify";
import { OpenAiError, sendOpenAiError } from "./errors";
import type { V1Context } from "./turn";

export function createResponsesHandler(_v1: V1Context) {
  return async function responses(_request: FastifyRequest, reply: FastifyReply) {
    return sendOpenAiError(
      reply,
      new OpenAiError(501, "server_error", "not_implemented", "Not implemented yet."),
    );
  };
}
