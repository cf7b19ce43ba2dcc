import { useEffect, useId, useRef, useState } from "react";
import type { AdapterInfo, AdapterVersionInfo } from "../../../electron/api";
import { useReleaseController, useReleaseState } from "../app/controller-context";
import { formatBytes } from "../../../common/format-bytes";
import { prunable } from "./release-logic";
import { ConfirmButtons } from "./ConfirmButtons";
import { VersionCard } from "./VersionCard";

const NO_VERSIONS: AdapterVersionInfo[] = [];

/** Every known version of one adapter, newest first, with "Delete old versions". */
export function VersionHistory({ adapter }: { adapter: AdapterInfo }) {
  const releases = useReleaseController();
  const versions = useReleaseState((s) => s.versions[adapter.id]);
  const error = useReleaseState((s) => s.versionsError);
  const actionError = useReleaseState((s) => s.actionError);
  const headingId = useId();
  const ref = useRef<HTMLElement>(null);
  // It opens at the end of its card: bring it into view (without stealing focus from the button).
  useEffect(() => {
    ref.current?.scrollIntoView({ block: "nearest" });
  }, []);

  return (
    <section ref={ref} className="version-history" aria-labelledby={headingId}>
      <div className="version-history__header">
        <h4 id={headingId}>Versions of {adapter.name}</h4>
        <button
          type="button"
          className="button button--small button--ghost"
          onClick={() => releases.openVersions(null)}
        >
          Hide versions
        </button>
      </div>
      <p className="muted">
        A new version goes live only after it passes the evaluation contract. The previous one is kept, so you
        can roll back to it at once.
      </p>
      {error && (
        <div className="form-error" role="alert">
          Could not list the versions: {error}
        </div>
      )}
      {versions === undefined && !error && <p role="status">Loading versions…</p>}
      {versions && (
        <ol className="version-list">
          {versions.map((v) => (
            <li key={v.version}>
              <VersionCard info={v} />
            </li>
          ))}
        </ol>
      )}
      {actionError && (
        <div className="form-error" role="alert">
          {actionError}
        </div>
      )}
      <PruneVersions adapter={adapter} versions={versions ?? NO_VERSIONS} />
    </section>
  );
}

/** Deletes the kept files of retired and rejected versions, after a confirmation. */
function PruneVersions({ adapter, versions }: { adapter: AdapterInfo; versions: AdapterVersionInfo[] }) {
  const releases = useReleaseController();
  const pruning = useReleaseState((s) => s.pruning === adapter.id);
  const result = useReleaseState((s) => s.pruneResult);
  const [confirming, setConfirming] = useState(false);
  const { count, bytes } = prunable(versions);

  return (
    <div className="version-prune">
      {confirming ? (
        <div
          className="version-prune__confirm"
          role="group"
          aria-label={`Delete old versions of ${adapter.name}?`}
        >
          <span>
            Delete the kept files of {count} old version{count === 1 ? "" : "s"} ({formatBytes(bytes)})? You
            can no longer roll back to them.
          </span>
          <ConfirmButtons
            confirmLabel="Yes, delete"
            busy={pruning}
            onConfirm={() => void releases.prune(adapter.id).then(() => setConfirming(false))}
            onCancel={() => setConfirming(false)}
          />
        </div>
      ) : (
        <button
          type="button"
          className="button button--small"
          disabled={count === 0 || pruning}
          title={count === 0 ? "No old version files are kept" : undefined}
          onClick={() => setConfirming(true)}
        >
          Delete old versions
        </button>
      )}
      {result && <p role="status">{result}</p>}
    </div>
  );
}
