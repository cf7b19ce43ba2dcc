import type { DomainHandlers } from "../handlers";
import type { TurnPipeline } from "./turn-pipeline";

export function chatHandlers(pipeline: TurnPipeline): DomainHandlers<"chat"> {
  return {
    "chat.send": ({ conversationId, text, sampling }) => pipeline.send({ conversationId, text, sampling }),
    "chat.stop": ({ conversationId }) => ({ stopped: pipeline.stop(conversationId) }),
  };
}
