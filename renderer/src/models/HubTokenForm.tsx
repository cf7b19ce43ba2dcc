import { useId, useState } from "react";
import { useHubController, useHubState } from "../app/controller-context";

/** Where the token is kept, for the user. */
export function tokenStorageText(storage: "safeStorage" | "file"): string {
  return storage === "safeStorage"
    ? "It is stored only on this computer, encrypted with the system's keychain (Electron safeStorage)."
    : "It is stored only on this computer, in a file in the data folder that only your user can read (mode 0600).";
}

/**
 * Paste a Hugging Face access token (a password field: it is never shown back). Used for a
 * gated repo's prompt and in Settings; `onDone` runs after it was saved.
 */
export function HubTokenForm({
  submitLabel = "Save token",
  onDone,
}: {
  submitLabel?: string;
  onDone?: () => void;
}) {
  const hub = useHubController();
  const saving = useHubState((s) => s.tokenSaving);
  const error = useHubState((s) => s.tokenError);
  const storage = useHubState((s) => s.token?.storage ?? null);
  const [value, setValue] = useState("");
  const id = useId();

  return (
    <form
      className="token-form"
      onSubmit={(e) => {
        e.preventDefault();
        e.stopPropagation();
        void hub.setToken(value).then((ok) => {
          if (!ok) return;
          setValue("");
          onDone?.();
        });
      }}
    >
      <label htmlFor={`${id}-token`}>Hugging Face access token</label>
      <div className="token-form__row">
        <input
          id={`${id}-token`}
          className="input"
          type="password"
          autoComplete="off"
          spellCheck={false}
          placeholder="hf_…"
          value={value}
          aria-describedby={`${id}-hint`}
          onChange={(e) => setValue(e.target.value)}
        />
        <button type="submit" className="button button--primary" disabled={saving}>
          {saving ? "Saving…" : submitLabel}
        </button>
      </div>
      <p id={`${id}-hint`} className="muted">
        Create a read token at huggingface.co → Settings → Access Tokens.{" "}
        {storage ? tokenStorageText(storage) : "It is stored only on this computer."}
      </p>
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </form>
  );
}
