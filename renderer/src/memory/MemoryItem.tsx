import { useId, useState } from "react";
import type { Memory } from "../../../electron/api";
import { useMemoryController, useMemoryState } from "../app/controller-context";
import { hashForConversation } from "../app/hash-route";
import { memorySourceLabel } from "./memory-logic";

/** One memory: its text and source; Keep/Discard when proposed, else Edit and Delete (confirmed). */
export function MemoryItem({ memory, onNavigate }: { memory: Memory; onNavigate: () => void }) {
  const memoryController = useMemoryController();
  const busy = useMemoryState((s) => s.busyIds.includes(memory.id));
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [draft, setDraft] = useState(memory.text);
  const id = useId();
  const proposed = memory.status === "proposed";

  return (
    <li className="memory" aria-label={memory.text}>
      {editing ? (
        <form
          className="memory__edit"
          onSubmit={(e) => {
            e.preventDefault();
            e.stopPropagation();
            void memoryController.edit(memory.id, draft).then((ok) => ok && setEditing(false));
          }}
        >
          <label htmlFor={id} className="visually-hidden">
            Memory text
          </label>
          <input
            id={id}
            className="input"
            value={draft}
            maxLength={2000}
            autoFocus
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                e.preventDefault();
                e.stopPropagation();
                setEditing(false);
              }
            }}
          />
          <button
            type="submit"
            className="button button--small button--primary"
            disabled={busy || !draft.trim()}
          >
            Save
          </button>
          <button type="button" className="button button--small" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <p className="memory__text">{memory.text}</p>
      )}
      <p className="memory__source muted">
        {memorySourceLabel(memory)}
        {memory.conversationId && (
          <>
            {" · "}
            <a href={hashForConversation(memory.conversationId)} onClick={onNavigate}>
              Open the conversation
            </a>
          </>
        )}
      </p>
      {!editing && (
        <div className="memory__actions">
          {proposed ? (
            <>
              <button
                type="button"
                className="button button--small button--primary"
                disabled={busy}
                onClick={() => void memoryController.keep(memory.id)}
              >
                Keep
              </button>
              <button
                type="button"
                className="button button--small"
                disabled={busy}
                onClick={() => void memoryController.remove(memory.id)}
              >
                Discard
              </button>
            </>
          ) : confirming ? (
            <>
              <span>Delete this memory?</span>
              <button
                type="button"
                className="button button--small button--danger"
                disabled={busy}
                onClick={() => void memoryController.remove(memory.id)}
              >
                Yes, delete
              </button>
              <button type="button" className="button button--small" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </>
          ) : (
            <>
              <button
                type="button"
                className="button button--small"
                disabled={busy}
                onClick={() => {
                  setDraft(memory.text);
                  setEditing(true);
                }}
              >
                Edit
              </button>
              <button
                type="button"
                className="button button--small"
                disabled={busy}
                onClick={() => setConfirming(true)}
              >
                Delete
              </button>
            </>
          )}
        </div>
      )}
    </li>
  );
}
