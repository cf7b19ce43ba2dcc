import { useAppState, useController } from "../app/controller-context";
import { FileChooser } from "../app/FileChooser";
import { LoadProgress } from "./LoadProgress";

/**
 * Choosing a model: the empty state when none is loaded, and the panel behind the header's
 * Model button. Electron opens a native file dialog; the browser asks for a path on the
 * machine that runs the server (the browser cannot hand over a local file's path).
 */
export function ModelPanel() {
  const controller = useController();
  const engine = useAppState((s) => s.engine);
  const busy = useAppState((s) => s.modelBusy);
  // A failed open, else the engine's own error (e.g. a model that could not be reloaded).
  const error = useAppState((s) => s.modelError ?? (s.engine?.state === "error" ? s.engine.error : null));
  const hasModel = !!engine?.model;
  const loading = busy || engine?.state === "loading";

  const heading = hasModel ? "Switch model" : loading ? "Loading model…" : "No model loaded";

  return (
    <section id="model-panel" className="model-panel" aria-labelledby="model-panel-heading">
      <h2 id="model-panel-heading">{heading}</h2>
      {!hasModel && (
        <p>
          Macaron runs a language model on this computer. Open a <code>.gguf</code> model file, or try the
          tiny demo model to see how the app works (a 0.7M-parameter model trained for this app: short, simple
          answers).
        </p>
      )}
      {hasModel && engine?.model && (
        <p>
          Loaded: <strong>{engine.model.name}</strong> <span className="muted">({engine.model.path})</span>
        </p>
      )}
      {loading && <LoadProgress progress={engine?.state === "loading" ? engine.progress : null} />}
      <div className="model-panel__actions">
        <FileChooser
          canPick={controller.api.platform.kind === "electron"}
          onPick={() => void controller.pickAndOpenModel()}
          pickLabel="Open model…"
          busy={busy}
          primary
          formClassName="model-panel__path"
          rowClassName="model-panel__path-row"
          inputId="model-path"
          label="Model file path"
          placeholder="/home/me/models/model.gguf"
          submitLabel="Open model"
          note="A path on the machine running the Macaron server."
          onSubmit={(path) => controller.openModel(path)}
          keepPath
        />
        <button type="button" className="button" disabled={busy} onClick={() => void controller.openDemo()}>
          Try the demo model
        </button>
        {hasModel && (
          <button
            type="button"
            className="button button--ghost"
            onClick={() => controller.setModelPanelOpen(false)}
          >
            Close
          </button>
        )}
      </div>
      {error && (
        <div className="model-panel__error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
