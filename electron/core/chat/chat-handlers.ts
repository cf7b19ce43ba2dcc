import type { DomainHandlers } from "../handlers";
import type { TurnPipeline } from "./turn-pipeline";

export function chatHandlers(pipeline: TurnPipeline): DomainHandlers<"chat"> {
  return {
    "chat.send": (input) => pipeline.send(input),
    "chat.regenerate": (input) => pipeline.regenerate(input),
    "chat.edit": ({ messageId, ...input }) => pipeline.send({ ...input, editOf: messageId }),
    "chat.showVersion": ({ messageId }) => ({ messages: pipeline.showVersion(messageId) }),
    "chat.decideTool": ({ conversationId, stepId, decision }) =>
      pipeline.decideTool(conversationId, stepId, decision),
    "chat.stop": ({ conversationId }) => ({ stopped: pipeline.stop(conversationId) }),
  };
}
