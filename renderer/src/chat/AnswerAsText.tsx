/**
 * "Answer as text": under a UI answer that (in part) could not be shown, answer the same
 * question again without generated components (chat.regenerate with format "text", the path
 * "Regenerate" takes). Offered for the last answer of the open conversation only: regenerate
 * replaces the last answer.
 */
import type { Message } from "../../../electron/api";
import { useAppState, useChatController } from "../app/controller-context";

export function AnswerAsText({ message }: { message: Message }) {
  const chat = useChatController();
  const sending = useAppState((s) => s.sending);
  const last = useAppState(
    (s) =>
      s.currentId === message.conversationId && s.messages[message.conversationId]?.at(-1)?.id === message.id,
  );
  if (!last || message.status === "streaming") return null;
  return (
    <div className="answer-as-text">
      <button
        type="button"
        className="button button--small"
        disabled={sending}
        title="Answer this question again as text, without generated components"
        onClick={() => void chat.regenerate(undefined, "text")}
      >
        Answer as text
      </button>
    </div>
  );
}
