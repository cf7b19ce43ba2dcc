import type { DomainHandlers } from "../handlers";
import type { TokenCounter } from "./token-count";
import type { TurnPipeline } from "./turn-pipeline";

export function chatHandlers(pipeline: TurnPipeline, counter: TokenCounter): DomainHandlers<"chat"> {
  return {
    "chat.countTokens": ({ text }) => counter.count(text),
    "chat.send": (input) => pipeline.send(input),
    "chat.regenerate": (input) => pipeline.regenerate(input),
    "chat.edit": ({ messageId, ...input }) => pipeline.send({ ...input, editOf: messageId }),
    "chat.showVersion": ({ messageId }) => ({ messages: pipeline.showVersion(messageId) }),
    "chat.decideTool": ({ conversationId, stepId, decision }) =>
      pipeline.decideTool(conversationId, stepId, decision),
    "chat.stop": ({ conversationId }) => ({ stopped: pipeline.stop(conversationId) }),
  };
}
