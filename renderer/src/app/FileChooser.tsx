import { useState } from "react";

/**
 * Choosing a file on the machine that runs core. Electron: one button that opens the native
 * file dialog. Browser: a form that asks for the path (a browser cannot hand over a local
 * file's path).
 */
export function FileChooser({
  canPick,
  onPick,
  pickLabel,
  busy,
  primary = false,
  formClassName,
  rowClassName,
  inputId,
  label,
  placeholder,
  submitLabel,
  note,
  onSubmit,
  keepPath = false,
}: {
  /** Whether there is a native file dialog (Electron). */
  canPick: boolean;
  onPick: () => void;
  pickLabel: string;
  /** Disables both buttons while the chosen file is being checked. */
  busy: boolean;
  /** The buttons as the panel's main action. */
  primary?: boolean;
  formClassName: string;
  rowClassName: string;
  inputId: string;
  label: string;
  placeholder: string;
  submitLabel: string;
  /** A line under the path field. */
  note?: string;
  /** Sends the typed path; the field empties when it resolves true, unless `keepPath`. */
  onSubmit: (path: string) => Promise<boolean>;
  keepPath?: boolean;
}) {
  const [path, setPath] = useState("");
  const buttonClass = primary ? "button button--primary" : "button";

  if (canPick) {
    return (
      <button type="button" className={buttonClass} disabled={busy} onClick={onPick}>
        {pickLabel}
      </button>
    );
  }
  return (
    <form
      className={formClassName}
      onSubmit={(e) => {
        e.preventDefault();
        // It may sit in a dialog, whose React events still reach the dialog's owner.
        e.stopPropagation();
        void onSubmit(path).then((ok) => ok && !keepPath && setPath(""));
      }}
    >
      <label htmlFor={inputId}>{label}</label>
      <div className={rowClassName}>
        <input
          id={inputId}
          className="input"
          type="text"
          spellCheck={false}
          autoComplete="off"
          placeholder={placeholder}
          value={path}
          onChange={(e) => setPath(e.target.value)}
        />
        <button type="submit" className={buttonClass} disabled={busy}>
          {submitLabel}
        </button>
      </div>
      {note && <p className="muted">{note}</p>}
    </form>
  );
}
