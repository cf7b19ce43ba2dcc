import { useController, useReleaseState } from "../app/controller-context";
import { FileChooser } from "../app/FileChooser";

/**
 * A new version of an installed adapter from a file. Electron: a native file dialog. Browser:
 * a path on the machine that runs the server. The manifest beside the file names the adapter.
 */
export function InstallVersion() {
  const controller = useController();
  const installing = useReleaseState((s) => s.installing);
  const error = useReleaseState((s) => s.installError);

  return (
    <section className="adapter-install" aria-labelledby="version-install-heading">
      <h3 id="version-install-heading">Install a new version</h3>
      <p className="muted">
        The manifest (.json) beside the file says which adapter and version it is. It is checked by the
        evaluation contract before it goes live.
      </p>
      <FileChooser
        canPick={!!controller.api.platform.pickModelFile}
        onPick={() => void controller.releases.pickAndInstallVersion()}
        pickLabel="Install new version from file…"
        busy={installing}
        formClassName="adapter-install__form"
        rowClassName="adapter-install__row"
        inputId="version-path"
        label="Version file path"
        placeholder="/home/me/adapters/coding-1.1.0.gguf"
        submitLabel="Install version"
        onSubmit={(path) => controller.releases.installVersion(path)}
      />
      {installing && <p role="status">Checking the new version…</p>}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
