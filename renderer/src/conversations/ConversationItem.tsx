import { memo, useEffect, useRef, useState } from "react";
import type { Conversation } from "../../../electron/api";
import { useAppState, useController } from "../app/controller-context";
import { hashForConversation } from "../app/hash-route";
import { downloadText } from "../app/download";
import { DownloadIcon, PencilIcon, TrashIcon } from "../app/icons";
import { pendingStep } from "../chat/tool-logic";

/**
 * One conversation: a link that opens it, inline rename (Enter saves, Escape cancels), export
 * as a .json file, delete with Undo. A dot marks a tool call there waiting for the user's
 * permission (its answer waits too, also while another conversation is open).
 */
export const ConversationItem = memo(function ConversationItem({
  conversation,
  current,
}: {
  conversation: Conversation;
  current: boolean;
}) {
  const controller = useController();
  const waiting = useAppState((s) => pendingStep(s.messages[conversation.id]) !== null);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(conversation.title);
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  // Escape unmounts the field, which fires blur: this flag keeps that blur from saving.
  const cancelled = useRef(false);

  useEffect(() => {
    if (editing) {
      input.current?.focus();
      input.current?.select();
    }
  }, [editing]);

  const startRename = () => {
    cancelled.current = false;
    setDraft(conversation.title);
    setEditing(true);
  };

  const finish = (save: boolean) => {
    if (!editing) return;
    setEditing(false);
    const title = draft.trim();
    if (save && title && title !== conversation.title)
      void controller.conversations.rename(conversation.id, title);
    requestAnimationFrame(() => renameButton.current?.focus());
  };

  return (
    <li className={current ? "conversation conversation--current" : "conversation"}>
      {editing ? (
        <input
          ref={input}
          className="input conversation__rename"
          aria-label="Conversation title"
          value={draft}
          maxLength={200}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              finish(true);
            } else if (e.key === "Escape") {
              e.preventDefault();
              e.stopPropagation();
              cancelled.current = true;
              finish(false);
            }
          }}
          onBlur={() => {
            if (!cancelled.current) finish(true);
          }}
        />
      ) : (
        <a
          className="conversation__link"
          href={hashForConversation(conversation.id)}
          aria-current={current ? "page" : undefined}
          title={conversation.title}
        >
          {/* Before the title, which an ellipsis may cut. */}
          {waiting && (
            <span className="conversation__waiting" title="A tool call is waiting for your permission">
              <span className="visually-hidden">A tool call is waiting for your permission: </span>
            </span>
          )}
          {conversation.title || "Untitled"}
        </a>
      )}
      {!editing && (
        <span className="conversation__actions">
          <button
            ref={renameButton}
            type="button"
            className="icon-button"
            // One Tab stop per conversation: the arrows reach these (ConversationNav).
            tabIndex={-1}
            aria-label="Rename"
            title="Rename"
            onClick={startRename}
          >
            <PencilIcon />
          </button>
          <button
            type="button"
            className="icon-button"
            tabIndex={-1}
            aria-label="Export"
            title="Export as a file"
            onClick={() =>
              void controller.transfer.exportJson(conversation.id).then((file) => {
                if (file) downloadText(file.fileName, file.json);
              })
            }
          >
            <DownloadIcon />
          </button>
          <button
            type="button"
            className="icon-button"
            tabIndex={-1}
            aria-label="Delete"
            title="Delete"
            onClick={() => controller.deletes.request(conversation.id)}
          >
            <TrashIcon />
          </button>
        </span>
      )}
    </li>
  );
});
