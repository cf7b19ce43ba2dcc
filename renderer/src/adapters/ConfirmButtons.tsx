/** The answers to an inline "are you sure?": the destructive action, and Cancel. */
export function ConfirmButtons({
  confirmLabel,
  busy,
  onConfirm,
  onCancel,
}: {
  confirmLabel: string;
  /** Disables the action while it (or another on the same item) runs. */
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <>
      <button
        type="button"
        className="button button--small button--danger"
        disabled={busy}
        onClick={onConfirm}
      >
        {confirmLabel}
      </button>
      <button type="button" className="button button--small button--ghost" onClick={onCancel}>
        Cancel
      </button>
    </>
  );
}
