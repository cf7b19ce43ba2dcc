import { useState } from "react";
import { useController, useReleaseState } from "../app/controller-context";

/**
 * A new version of an installed adapter from a file. Electron: a native file dialog. Browser:
 * a path on the machine that runs the server. The manifest beside the file names the adapter.
 */
export function InstallVersion() {
  const controller = useController();
  const installing = useReleaseState((s) => s.installing);
  const error = useReleaseState((s) => s.installError);
  const [path, setPath] = useState("");
  const canPick = !!controller.api.platform.pickModelFile;

  return (
    <section className="adapter-install" aria-labelledby="version-install-heading">
      <h3 id="version-install-heading">Install a new version</h3>
      <p className="muted">
        The manifest (.json) beside the file says which adapter and version it is. It is checked by the
        evaluation contract before it goes live.
      </p>
      {canPick ? (
        <button
          type="button"
          className="button"
          disabled={installing}
          onClick={() => void controller.releases.pickAndInstallVersion()}
        >
          Install new version from file…
        </button>
      ) : (
        <form
          className="adapter-install__form"
          onSubmit={(e) => {
            e.preventDefault();
            e.stopPropagation();
            void controller.releases.installVersion(path).then((ok) => ok && setPath(""));
          }}
        >
          <label htmlFor="version-path">Version file path</label>
          <div className="adapter-install__row">
            <input
              id="version-path"
              className="input"
              type="text"
              spellCheck={false}
              autoComplete="off"
              placeholder="/home/me/adapters/coding-1.1.0.gguf"
              value={path}
              onChange={(e) => setPath(e.target.value)}
            />
            <button type="submit" className="button" disabled={installing}>
              Install version
            </button>
          </div>
        </form>
      )}
      {installing && <p role="status">Checking the new version…</p>}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
