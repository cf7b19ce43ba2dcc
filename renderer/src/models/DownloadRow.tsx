import { useState } from "react";
import type { Download } from "../../../electron/api";
import { useHubController } from "../app/controller-context";
import {
  describeDownload,
  downloadAnnouncement,
  downloadPercent,
  fileName,
  isActiveDownload,
} from "./hub-logic";

/**
 * One download: progress bar with %, speed and ETA, pause / resume / cancel (asked twice: it
 * deletes the partial file), the error when it failed, keep or discard when the hub gave no
 * sha256 to check it against, and Load once it is done.
 */
export function DownloadRow({ download, onLoad }: { download: Download; onLoad?: (path: string) => void }) {
  const hub = useHubController();
  const [confirmCancel, setConfirmCancel] = useState(false);
  const pct = downloadPercent(download);
  const name = fileName(download.file);
  const active = isActiveDownload(download);
  const canPause = download.state === "downloading" || download.state === "queued";

  return (
    <li className={`download download--${download.state}`} aria-label={`Download of ${name}`}>
      <div className="download__head">
        <span className="download__name" title={`${download.repo}/${download.file}`}>
          {name}
        </span>
        <span className="muted download__repo">{download.repo}</span>
        {pct !== null && <span className="download__pct">{pct}%</span>}
      </div>
      {download.state !== "error" && download.state !== "cancelled" && (
        <progress
          className="download__bar"
          aria-label={`Downloading ${name}`}
          max={100}
          value={pct ?? undefined}
          aria-valuetext={
            pct === null ? describeDownload(download) : `${pct}% — ${describeDownload(download)}`
          }
        />
      )}
      <p className={download.state === "error" ? "download__line form-error" : "download__line muted"}>
        {describeDownload(download)}
      </p>
      {/* Screen readers hear state changes and 10 % steps, not every progress event. */}
      <span className="visually-hidden" aria-live="polite">
        {downloadAnnouncement(download)}
      </span>
      <div className="download__actions">
        {canPause && (
          <button type="button" className="button button--small" onClick={() => void hub.pause(download.id)}>
            Pause
          </button>
        )}
        {(download.state === "paused" || download.state === "error") && (
          <button
            type="button"
            className="button button--small"
            // A failed download continues from its partial file too.
            onClick={() => void hub.resume(download.id)}
          >
            {download.state === "paused" ? "Resume" : "Try again"}
          </button>
        )}
        {active &&
          (confirmCancel ? (
            <span className="download__confirm" role="group" aria-label={`Cancel the download of ${name}?`}>
              <span>Cancel and delete the partial file?</span>
              <button
                type="button"
                className="button button--small button--danger"
                onClick={() => {
                  setConfirmCancel(false);
                  void hub.cancel(download.id);
                }}
              >
                Yes, cancel
              </button>
              <button
                type="button"
                className="button button--small button--ghost"
                autoFocus
                onClick={() => setConfirmCancel(false)}
              >
                Keep downloading
              </button>
            </span>
          ) : (
            <button
              type="button"
              className="button button--small button--ghost"
              onClick={() => setConfirmCancel(true)}
            >
              Cancel
            </button>
          ))}
        {download.state === "unverified" && (
          <>
            <button
              type="button"
              className="button button--small"
              onClick={() => void hub.acceptUnverified(download.id)}
            >
              Keep unchecked file
            </button>
            <button
              type="button"
              className="button button--small button--ghost"
              onClick={() => void hub.cancel(download.id)}
            >
              Discard
            </button>
          </>
        )}
        {download.state === "done" && download.kind === "model" && onLoad && (
          <button
            type="button"
            className="button button--small button--primary"
            onClick={() => onLoad(download.path)}
          >
            Load…
          </button>
        )}
        {!active && download.state !== "unverified" && (
          <button
            type="button"
            className="button button--small button--ghost"
            aria-label={`Remove ${name} from the list`}
            onClick={() => hub.dismiss(download.id)}
          >
            Dismiss
          </button>
        )}
      </div>
    </li>
  );
}
