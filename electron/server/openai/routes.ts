/** The OpenAI-compatible API under /v1, for tools that speak OpenAI (editors, agents, scripts). */
import type { FastifyInstance } from "fastify";
import type { Core } from "../../core/core-types";
import { createCountTokensHandler, createMessagesHandler } from "../anthropic/messages";
import { createChatCompletionHandler } from "./chat-completions";
import { createCompletionHandler } from "./completions";
import { createEmbeddingsHandler } from "./embeddings";
import { createResponsesHandler } from "./responses";
import { anthropicModel, isAnthropicClient, listModels } from "./models";
import { OpenAiError, sendOpenAiError } from "./errors";
import { sendAnthropicError } from "../anthropic/errors";
import { createV1Context } from "./turn";

/** Conversations sent whole by clients can be long; still bounded. */
export const OPENAI_BODY_LIMIT = 8 * 1024 * 1024;

export function registerOpenAiRoutes(app: FastifyInstance, core: Core): void {
  // One queue for every generating endpoint: generations run one at a time, in arrival order.
  const v1 = createV1Context(core);
  // One path for both SDKs' models.list / models.retrieve: Anthropic's clients say so with
  // `anthropic-version` and get Anthropic's shapes (and errors).
  app.get("/v1/models", async (request) => {
    const models = await listModels(core);
    if (!isAnthropicClient(request)) return { object: "list", data: models };
    const data = models.map(anthropicModel);
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  });
  app.get<{ Params: { id: string } }>("/v1/models/:id", async (request, reply) => {
    const anthropic = isAnthropicClient(request);
    const model = (await listModels(core)).find((m) => m.id === request.params.id);
    if (model) return anthropic ? anthropicModel(model) : model;
    const missing = new OpenAiError(
      404,
      "invalid_request_error",
      "model_not_found",
      `The model '${request.params.id}' does not exist. See GET /v1/models.`,
      "model",
    );
    return anthropic ? sendAnthropicError(reply, missing) : sendOpenAiError(reply, missing);
  });
  app.post("/v1/chat/completions", { bodyLimit: OPENAI_BODY_LIMIT }, createChatCompletionHandler(v1));
  app.post("/v1/completions", { bodyLimit: OPENAI_BODY_LIMIT }, createCompletionHandler(v1));
  app.post("/v1/embeddings", { bodyLimit: OPENAI_BODY_LIMIT }, createEmbeddingsHandler(v1));
  app.post("/v1/responses", { bodyLimit: OPENAI_BODY_LIMIT }, createResponsesHandler(v1));
  // Anthropic's Messages API (Claude Code–style clients), errors in Anthropic's shape.
  app.post("/v1/messages", { bodyLimit: OPENAI_BODY_LIMIT }, createMessagesHandler(v1));
  app.post("/v1/messages/count_tokens", { bodyLimit: OPENAI_BODY_LIMIT }, createCountTokensHandler(v1));
}
