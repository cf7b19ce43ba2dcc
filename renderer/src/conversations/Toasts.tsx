import { useAppState, useController, useReleaseState } from "../app/controller-context";

/**
 * Undo for deletes (the conversation is only deleted when its toast expires, with or without
 * the memories that came from it), short notices, and what the evaluation gate decided
 * ("Coding 2.0.0 is live").
 */
export function Toasts() {
  const controller = useController();
  const pendingDeletes = useAppState((s) => s.pendingDeletes);
  const notice = useAppState((s) => s.notice);
  const deleteMemoryIds = useAppState((s) => s.deleteMemoryIds);
  const releaseNotices = useReleaseState((s) => s.notices);

  return (
    <div className="toasts" role="status" aria-live="polite" aria-label="Notifications">
      {pendingDeletes.map((c) => (
        <div key={c.id} className="toast">
          <span>Deleted “{c.title || "Untitled"}”</span>
          <label className="toast__option">
            <input
              type="checkbox"
              checked={deleteMemoryIds.includes(c.id)}
              onChange={(e) => controller.deletes.setDeleteMemories(c.id, e.target.checked)}
            />
            Also delete memories from this conversation
          </label>
          <button
            type="button"
            className="button button--small"
            onClick={() => controller.deletes.undo(c.id)}
          >
            Undo
          </button>
        </div>
      ))}
      {releaseNotices.map((n) => (
        <div key={n.id} className={`toast toast--notice toast--${n.tone}`}>
          <span>{n.text}</span>
          <button
            type="button"
            className="button button--small"
            onClick={() => controller.releases.dismissNotice(n.id)}
          >
            Dismiss
          </button>
        </div>
      ))}
      {notice && (
        <div className="toast toast--notice">
          <span>{notice}</span>
          <button type="button" className="button button--small" onClick={() => controller.dismissNotice()}>
            Dismiss
          </button>
        </div>
      )}
    </div>
  );
}
