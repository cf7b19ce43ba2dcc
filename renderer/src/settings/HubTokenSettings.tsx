import { useEffect, useId, useState } from "react";
import { useHubController, useHubState } from "../app/controller-context";
import { HubTokenForm, tokenStorageText } from "../models/HubTokenForm";

/**
 * The Hugging Face access token for gated repos: whether one is stored (never the token
 * itself), where, and set / replace / remove.
 */
export function HubTokenSettings() {
  const hub = useHubController();
  const token = useHubState((s) => s.token);
  const error = useHubState((s) => s.tokenError);
  const saving = useHubState((s) => s.tokenSaving);
  const [replacing, setReplacing] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState(false);
  const headingId = useId();
  useEffect(() => {
    void hub.loadToken();
  }, [hub]);

  return (
    <section className="settings-section" aria-labelledby={headingId}>
      <h3 id={headingId}>Hugging Face access token</h3>
      <p className="muted">
        Needed only for gated models (their makers ask you to accept terms first) and for higher download
        limits.
      </p>
      {token === null && !error && <p role="status">Checking…</p>}
      {token && (
        <p role="status">
          {token.set ? "A token is stored." : "No token is stored."}{" "}
          {token.set && tokenStorageText(token.storage)}
        </p>
      )}
      {token && (!token.set || replacing) ? (
        <HubTokenForm
          submitLabel={token.set ? "Replace token" : "Save token"}
          onDone={() => setReplacing(false)}
        />
      ) : (
        error && (
          <div className="form-error" role="alert">
            {error}
          </div>
        )
      )}
      {token?.set && !replacing && (
        <div className="settings-section__actions">
          <button type="button" className="button" onClick={() => setReplacing(true)}>
            Replace token…
          </button>
          {confirmRemove ? (
            <span className="adapter-row__confirm" role="group" aria-label="Remove the token?">
              <span>Remove the token from this computer?</span>
              <button
                type="button"
                className="button button--small button--danger"
                disabled={saving}
                onClick={() => void hub.setToken(null).then(() => setConfirmRemove(false))}
              >
                Yes, remove
              </button>
              <button
                type="button"
                className="button button--small button--ghost"
                autoFocus
                onClick={() => setConfirmRemove(false)}
              >
                Cancel
              </button>
            </span>
          ) : (
            <button type="button" className="button button--ghost" onClick={() => setConfirmRemove(true)}>
              Remove token
            </button>
          )}
        </div>
      )}
      {replacing && (
        <button
          type="button"
          className="button button--ghost button--small"
          onClick={() => setReplacing(false)}
        >
          Keep the stored token
        </button>
      )}
    </section>
  );
}
