/**
 * Interactions with an answer in UI mode (genui.interact): the user and assistant messages an
 * interaction starts join the transcript like chat.send's. Shares the app store.
 */
import type { Message } from "../../../electron/api";
import type { InteractionValues } from "../../../electron/api/genui";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { mergeSent } from "../chat/chat-logic";
import type { AppStore } from "../state/app-store";

export class GenuiController {
  constructor(
    private readonly api: RendererApi,
    private readonly store: AppStore,
  ) {}

  /**
   * Send component `componentId`'s `action` with `values` for the answer `answer`. Rejects with
   * the server's reason (an Error whose message the component shows).
   */
  async interact(
    answer: Pick<Message, "conversationId" | "id">,
    componentId: string,
    action: string,
    values: InteractionValues,
  ): Promise<void> {
    try {
      const r = await this.api.call("genui.interact", {
        conversationId: answer.conversationId,
        messageId: answer.id,
        componentId,
        action,
        values,
      });
      const sent = [r.userMessage, r.assistantMessage].filter((m): m is Message => m !== null);
      if (sent.length > 0) this.store.setState((s) => ({ messages: mergeSent(s.messages, sent) }));
    } catch (err) {
      throw new Error(errorMessage(err));
    }
  }
}
