/** The OpenAI-compatible API under /v1, for tools that speak OpenAI (editors, agents, scripts). */
import type { FastifyInstance } from "fastify";
import type { Core } from "../../core/core-types";
import { createMessagesHandler } from "../anthropic/messages";
import { createChatCompletionHandler } from "./chat-completions";
import { createCompletionHandler } from "./completions";
import { createEmbeddingsHandler } from "./embeddings";
import { createResponsesHandler } from "./responses";
import { listModels } from "./models";
import { createV1Context } from "./turn";

/** Conversations sent whole by clients can be long; still bounded. */
export const OPENAI_BODY_LIMIT = 8 * 1024 * 1024;

export function registerOpenAiRoutes(app: FastifyInstance, core: Core): void {
  // One queue for every generating endpoint: generations run one at a time, in arrival order.
  const v1 = createV1Context(core);
  app.get("/v1/models", async () => ({ object: "list", data: await listModels(core) }));
  app.post("/v1/chat/completions", { bodyLimit: OPENAI_BODY_LIMIT }, createChatCompletionHandler(v1));
  app.post("/v1/completions", { bodyLimit: OPENAI_BODY_LIMIT }, createCompletionHandler(v1));
  app.post("/v1/embeddings", { bodyLimit: OPENAI_BODY_LIMIT }, createEmbeddingsHandler(v1));
  app.post("/v1/responses", { bodyLimit: OPENAI_BODY_LIMIT }, createResponsesHandler(v1));
  // Anthropic's Messages API (Claude Code–style clients), errors in Anthropic's shape.
  app.post("/v1/messages", { bodyLimit: OPENAI_BODY_LIMIT }, createMessagesHandler(v1));
}
