import { useDatabaseController, useDatabaseState } from "../app/controller-context";
import { formatBytes, formatTime } from "../privacy/privacy-logic";

/**
 * Full screen shown when core could not open the conversation database: why, the backups
 * to restore, or a fresh start. The damaged file is always kept, never deleted.
 */
export function DatabaseScreen() {
  const databaseController = useDatabaseController();
  const status = useDatabaseState((s) => s.status);
  const busy = useDatabaseState((s) => s.busy);
  const error = useDatabaseState((s) => s.error);
  const backups = status?.backups ?? [];

  return (
    <section className="database-screen" aria-labelledby="database-heading">
      <h1 id="database-heading">Your conversation database could not be opened</h1>
      {status?.message && <p className="database-screen__reason">{status.message}</p>}
      {status?.state === "from_future" && (
        <p>
          It was written by a newer version of Macaron. Update Macaron, or restore a backup made by this
          version.
        </p>
      )}
      {status && (
        <p className="muted">
          File: <code>{status.path}</code>. Whatever you choose, this file is kept as it is.
        </p>
      )}
      <h2>Backups</h2>
      {backups.length === 0 ? (
        <p className="muted">There are no backups.</p>
      ) : (
        <ul className="database-screen__backups" aria-label="Backups">
          {[...backups]
            .sort((a, b) => b.createdAt - a.createdAt)
            .map((b) => (
              <li key={b.id}>
                <span>
                  {formatTime(b.createdAt)} — {formatBytes(b.sizeBytes)}
                </span>
                <button
                  type="button"
                  className="button button--primary"
                  disabled={busy}
                  aria-label={`Restore this backup (${formatTime(b.createdAt)})`}
                  onClick={() => void databaseController.restoreBackup(b.id)}
                >
                  Restore this backup
                </button>
              </li>
            ))}
        </ul>
      )}
      <button
        type="button"
        className="button"
        disabled={busy}
        onClick={() => void databaseController.startFresh()}
      >
        Start fresh (keep the damaged file)
      </button>
      {busy && <p role="status">Working…</p>}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
