import { useAppState, useController } from "../app/controller-context";

/** Undo for deletes (the conversation is only deleted when its toast expires) and short notices. */
export function Toasts() {
  const controller = useController();
  const pendingDeletes = useAppState((s) => s.pendingDeletes);
  const notice = useAppState((s) => s.notice);

  return (
    <div className="toasts" role="status" aria-live="polite">
      {pendingDeletes.map((c) => (
        <div key={c.id} className="toast">
          <span>Deleted “{c.title || "Untitled"}”</span>
          <button type="button" className="button button--small" onClick={() => controller.undoDelete(c.id)}>
            Undo
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
