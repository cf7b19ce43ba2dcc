import { usePrivacyController, usePrivacyState } from "../app/controller-context";

/** "Delete my uploaded data", behind a confirm step; the service's answer is shown. */
export function DeleteUploaded() {
  const privacy = usePrivacyController();
  const confirming = usePrivacyState((s) => s.confirmingDelete);
  const deleting = usePrivacyState((s) => s.deleting);
  const result = usePrivacyState((s) => s.deleteResult);

  return (
    <section className="privacy__delete" aria-label="Uploaded data">
      {!confirming && (
        <button
          type="button"
          className="button button--danger"
          disabled={deleting}
          onClick={() => privacy.setConfirmingDelete(true)}
        >
          {deleting ? "Deleting…" : "Delete my uploaded data"}
        </button>
      )}
      {confirming && (
        <div className="confirm" role="group" aria-label="Confirm deletion">
          <p>
            Ask the feedback service to delete everything uploaded from this install? This cannot be undone.
          </p>
          <div className="confirm__actions">
            <button
              type="button"
              className="button button--danger"
              onClick={() => void privacy.deleteUploaded()}
            >
              Yes, delete my data
            </button>
            <button type="button" className="button" onClick={() => privacy.setConfirmingDelete(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {result && <p role="status">{result}</p>}
    </section>
  );
}
