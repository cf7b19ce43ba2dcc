import { useEffect, useMemo, useRef, useState } from "react";
import { formatBytes } from "../../../common/format-bytes";
import { splitAttachments } from "./attachments";
import "./attachments.css";
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

  const parts = useMemo(() => splitAttachments(message.content), [message.content]);

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
      {parts.text && <p className="message__plain">{parts.text}</p>}
      {parts.files.length > 0 && <SentAttachments files={parts.files} />}
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

/** The files sent with a question, as chips: name and size; the text on demand. */
function SentAttachments({ files }: { files: readonly { name: string; text: string }[] }) {
  return (
    <ul className="attachments__list sent-attachments" aria-label="Files sent with this message">
      {files.map((f, i) => (
        <li key={`${i}:${f.name}`} className="sent-attachments__item">
          <details>
            <summary className="attachment-chip">
              <span className="attachment-chip__name">{f.name}</span>{" "}
              <span className="muted">{formatBytes(new TextEncoder().encode(f.text).length)}</span>
            </summary>
            <pre className="sent-attachments__text">{f.text}</pre>
          </details>
        </li>
      ))}
    </ul>
  );
}
