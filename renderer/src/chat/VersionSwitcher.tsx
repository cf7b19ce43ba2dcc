import type { Message } from "../../../electron/api";
import { useAppState, useChatController } from "../app/controller-context";
import { isStreaming } from "./chat-logic";
import { versionPlace } from "./versions-logic";

/**
 * "‹ 2 / 3 ›" on a message that has other versions (an edited question, an answer given
 * again): shows the previous or next one, and with it the branch that followed it. Off while
 * the conversation is busy: core refuses to switch under a streaming answer.
 */
export function VersionSwitcher({ message }: { message: Message }) {
  const chat = useChatController();
  const busy = useAppState((s) => s.sending || isStreaming(s.messages[message.conversationId]));
  const place = versionPlace(message);
  if (!place) return null;
  const show = (id: string | null) => {
    if (id) void chat.showVersion(message.conversationId, id);
  };
  return (
    <div className="versions" role="group" aria-label="Versions">
      <button
        type="button"
        className="versions__step"
        aria-label="Previous version"
        disabled={busy || !place.previous}
        onClick={() => show(place.previous)}
      >
        ‹
      </button>
      <span className="versions__count">
        {place.index + 1} / {place.count}
      </span>
      <button
        type="button"
        className="versions__step"
        aria-label="Next version"
        disabled={busy || !place.next}
        onClick={() => show(place.next)}
      >
        ›
      </button>
    </div>
  );
}
