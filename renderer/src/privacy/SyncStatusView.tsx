import type { SyncStatus } from "../../../electron/api";
import { usePrivacyController, usePrivacyState } from "../app/controller-context";
import { formatTime, queuedLabel, syncStateLabel } from "./privacy-logic";

/** Live sync status (privacy.sync events), refusals with the server's reasons, "Sync now". */
export function SyncStatusView({ sync }: { sync: SyncStatus }) {
  const privacyController = usePrivacyController();
  const syncing = usePrivacyState((s) => s.syncing);
  const sharing = usePrivacyState((s) => s.privacy?.sharing ?? "off");
  const endpoint = usePrivacyState((s) => s.privacy?.endpoint ?? "");

  return (
    <section className="privacy__sync" aria-labelledby="privacy-sync-heading">
      <h3 id="privacy-sync-heading">Sync status</h3>
      <dl className="privacy__facts">
        <div>
          <dt>State</dt>
          <dd>{syncStateLabel(sync.state, endpoint)}</dd>
        </div>
        <div>
          <dt>Last sync</dt>
          <dd>{formatTime(sync.lastSyncAt)}</dd>
        </div>
        <div>
          <dt>Queue</dt>
          <dd>{queuedLabel(sync.queued)}</dd>
        </div>
        {sync.nextAttemptAt !== null && (
          <div>
            <dt>Next attempt</dt>
            <dd>{formatTime(sync.nextAttemptAt)}</dd>
          </div>
        )}
        {sync.lastError && (
          <div>
            <dt>Last error</dt>
            <dd>{sync.lastError}</dd>
          </div>
        )}
      </dl>
      {sync.rejected.length > 0 && (
        <>
          <h4>Refused by the service</h4>
          <ul aria-label="Refused items" className="privacy__rejected">
            {sync.rejected.map((r) => (
              <li key={r.key}>
                {r.kind}: {r.reason}
              </li>
            ))}
          </ul>
        </>
      )}
      <button
        type="button"
        className="button"
        disabled={syncing || sharing === "off"}
        onClick={() => void privacyController.syncNow()}
      >
        {syncing ? "Syncing…" : "Sync now"}
      </button>
    </section>
  );
}
