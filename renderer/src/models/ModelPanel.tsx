import { useEffect } from "react";
import { useAppState, useController, useHubState, useLocalModelsState } from "../app/controller-context";
import { formatBytes } from "../../../common/format-bytes";
import { FileChooser } from "../app/FileChooser";
import { LoadProgress } from "./LoadProgress";

/**
 * Choosing a model: the empty state when none is loaded, and the panel behind the header's
 * Model button. The way in is the model hub (Find a model); the demo is one click away, and a
 * .gguf file already on the machine opens too: Electron with a native file dialog, the browser
 * with a path on the machine that runs the server (a browser cannot hand over a file's path).
 */
export function ModelPanel() {
  const controller = useController();
  const engine = useAppState((s) => s.engine);
  const busy = useAppState((s) => s.modelBusy);
  const localCount = useLocalModelsState((s) => s.models?.length ?? 0);
  const recommended = useHubState((s) => s.recommended);
  // A failed open, else the engine's own error (e.g. a model that could not be reloaded).
  const error = useAppState((s) => s.modelError ?? (s.engine?.state === "error" ? s.engine.error : null));
  const hasModel = !!engine?.model;
  const loading = busy || engine?.state === "loading";

  // First run: a few small models, one click from their files and fit estimate.
  const picks =
    hasModel || localCount > 0 ? [] : (recommended ?? []).filter((m) => m.tier === "small").slice(0, 3);
  const heading = hasModel ? "Switch model" : loading ? "Loading model…" : "No model loaded";

  // Esc closes "Switch model" (focus back on the header's Model button), before the app-wide
  // Escape (stop generating, on window) sees it; an open dialog above it keeps Esc for itself.
  useEffect(() => {
    if (!hasModel) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== "Escape" || event.defaultPrevented || event.isComposing) return;
      if (document.querySelector("dialog[open]")) return;
      event.preventDefault();
      controller.models.setPanelOpen(false);
      document.querySelector<HTMLElement>("[aria-controls='model-panel']")?.focus();
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [controller, hasModel]);

  return (
    <section id="model-panel" className="model-panel" aria-labelledby="model-panel-heading">
      <h2 id="model-panel-heading">{heading}</h2>
      {!hasModel && (
        <p>
          Macaron runs a language model on this computer. Start with the tiny demo model that comes with the
          app to see how it works (short, simple answers, no download), then find a real one on Hugging Face
          and download it here (the recommended list suits most computers, and each model says whether it fits
          this one).
        </p>
      )}
      {hasModel && engine?.model && (
        <p>
          Loaded: <strong>{engine.model.name}</strong> <span className="muted">({engine.model.path})</span>
        </p>
      )}
      {loading && <LoadProgress progress={engine?.state === "loading" ? engine.progress : null} />}
      <div className="model-panel__actions">
        {/* First run: the demo ships with the app, so it is the fastest way to a working chat. */}
        {!hasModel && (
          <button
            type="button"
            className="button button--primary"
            disabled={busy}
            onClick={() => void controller.models.openDemo()}
          >
            Try the demo model
          </button>
        )}
        <button
          type="button"
          className={hasModel ? "button button--primary" : "button"}
          aria-haspopup="dialog"
          onClick={() => controller.openModels("find")}
        >
          Find a model
        </button>
        {localCount > 0 && (
          <button
            type="button"
            className="button"
            aria-haspopup="dialog"
            onClick={() => controller.openModels("local")}
          >
            My models ({localCount})
          </button>
        )}
        {hasModel && (
          <button
            type="button"
            className="button"
            disabled={busy}
            onClick={() => void controller.models.openDemo()}
          >
            Try the demo model
          </button>
        )}
        {hasModel && (
          <button
            type="button"
            className="button"
            disabled={busy}
            title="Free the memory the model uses; load one again here when you need it"
            onClick={() => void controller.models.unload()}
          >
            Unload model
          </button>
        )}
        {hasModel && (
          <button
            type="button"
            className="button button--ghost"
            onClick={() => controller.models.setPanelOpen(false)}
          >
            Close
          </button>
        )}
      </div>
      {picks.length > 0 && (
        <div className="model-panel__picks">
          <h3 className="model-panel__subheading">Good first models</h3>
          <ul className="model-panel__pick-list">
            {picks.map((m) => (
              <li key={`${m.repo}:${m.quant}`}>
                <button
                  type="button"
                  className="button"
                  aria-haspopup="dialog"
                  disabled={busy}
                  onClick={() => {
                    controller.openModels("find");
                    void controller.hub.openRepo(m.repo, m.quant);
                  }}
                >
                  {m.label}{" "}
                  <span className="muted">
                    · {m.quant} · about {formatBytes(m.approxSizeBytes)}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="model-panel__file">
        <h3 className="model-panel__subheading">Or open a .gguf file you already have</h3>
        <FileChooser
          canPick={controller.api.platform.kind === "electron"}
          onPick={() => void controller.models.pickAndOpen()}
          pickLabel="Open model…"
          busy={busy}
          formClassName="model-panel__path"
          rowClassName="model-panel__path-row"
          inputId="model-path"
          label="Model file path"
          placeholder="/home/me/models/model.gguf"
          submitLabel="Open model"
          note="A path on the machine running the Macaron server."
          onSubmit={(path) => controller.models.open(path)}
          keepPath
        />
      </div>
      {error && (
        <div className="model-panel__error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
