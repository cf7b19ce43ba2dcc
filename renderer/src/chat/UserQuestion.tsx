import { useEffect, useRef, useState } from "react";
import type { Message } from "../../../electron/api";
import { useAppState, useChatController } from "../app/controller-context";
import { isStreaming } from "./chat-logic";
import { MessageEditor } from "./MessageEditor";
import { VersionSwitcher } from "./VersionSwitcher";

/**
 * A question the user typed: its text, "Edit" (an inline editor; sending it makes a new
 * version with a new answer, chat.edit) and the switcher between its versions.
 */
export function UserQuestion({ message }: { message: Message }) {
  const chat = useChatController();
  const busy = useAppState((s) => s.sending || isStreaming(s.messages[message.conversationId]));
  const [editing, setEditing] = useState(false);
  const editButton = useRef<HTMLButtonElement>(null);
  // Cancelling gives focus back to the button that opened the editor (it is rendered again).
  const refocus = useRef(false);
  useEffect(() => {
    if (!editing && refocus.current) {
      refocus.current = false;
      editButton.current?.focus();
    }
  }, [editing]);

  if (editing) {
    return (
      <MessageEditor
        initial={message.content}
        busy={busy}
        onSend={(text) => {
          // On success the new version replaces this message; on failure the editor stays.
          void chat.edit(message.conversationId, message.id, text);
        }}
        onCancel={() => {
          refocus.current = true;
          setEditing(false);
        }}
      />
    );
  }
  return (
    <>
      <p className="message__plain">{message.content}</p>
      <div className="message__actions">
        <VersionSwitcher message={message} />
        <button
          ref={editButton}
          type="button"
          className="button button--small button--ghost"
          aria-label="Edit message"
          disabled={busy}
          onClick={() => setEditing(true)}
        >
          Edit
        </button>
      </div>
    </>
  );
}
