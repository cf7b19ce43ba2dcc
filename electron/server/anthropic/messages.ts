/** POST /v1/messages: Anthropic's Messages API on the local model (issue 14: to build). */
import type { FastifyReply, FastifyRequest } from "fastify";
import { OpenAiError } from "../openai/errors";
import type { V1Context } from "../openai/turn";
import { sendAnthropicError } from "./errors";

export function createMessagesHandler(_v1: V1Context) {
  return async function messages(_request: FastifyRequest, reply: FastifyReply) {
    return sendAnthropicError(
      reply,
      new OpenAiError(501, "server_error", "not_implemented", "Not implemented yet."),
    );
  };
}
