import {
  useAdapterState,
  useAppState,
  useController,
  useHubState,
  useMemoryState,
  usePrivacyState,
  useSettingsState,
} from "../app/controller-context";
import { MenuIcon } from "../app/icons";
import { downloadsSummary } from "./hub-logic";
import { LoadProgress } from "./LoadProgress";

/** Header: the loaded model, GPU or CPU, load progress and engine errors, and the Model button. */
export function ModelBar({
  navOpen,
  onToggleNav,
  showEngineError,
}: {
  navOpen: boolean;
  onToggleNav: () => void;
  /** False while the model panel is shown: it shows the error itself (one alert, not two). */
  showEngineError: boolean;
}) {
  const controller = useController();
  const engine = useAppState((s) => s.engine);
  const panelOpen = useAppState((s) => s.modelPanelOpen);
  const model = engine?.model ?? null;
  const adaptersOpen = useAdapterState((s) => s.panelOpen);
  const settingsOpen = useSettingsState((s) => s.open);
  const memoryOpen = useMemoryState((s) => s.open);
  const privacyOpen = usePrivacyState((s) => s.open);
  const downloads = useHubState((s) => s.downloads);
  const hubOpen = useHubState((s) => s.open);
  const running = downloadsSummary(downloads);

  return (
    <header className="model-bar">
      <button
        type="button"
        className="icon-button model-bar__nav-toggle"
        aria-label="Show conversations"
        aria-controls="conversation-nav"
        aria-expanded={navOpen}
        onClick={onToggleNav}
      >
        <MenuIcon />
      </button>
      <div className="model-bar__info">
        {model ? (
          <>
            <span className="model-bar__name" title={model.path}>
              {model.name}
            </span>
            {model.isDemo && <span className="badge badge--warn">Demo — a tiny trained model</span>}
            <span className="badge" title={engine?.gpu ? `GPU backend: ${engine.gpu}` : "Running on the CPU"}>
              {engine?.gpu ? `GPU (${engine.gpu})` : "CPU"}
            </span>
          </>
        ) : (
          <span className="model-bar__name model-bar__name--none">No model</span>
        )}
        {engine?.state === "restarting" && <span className="badge badge--warn">Engine restarting…</span>}
      </div>
      {engine?.state === "loading" && <LoadProgress progress={engine.progress} />}
      {engine?.state === "error" && engine.error && showEngineError && (
        <div className="model-bar__error" role="alert">
          {engine.error}
        </div>
      )}
      {running && (
        <button
          type="button"
          className="button button--small model-bar__downloads"
          aria-haspopup="dialog"
          aria-expanded={hubOpen}
          onClick={() => controller.openModels("find")}
        >
          {running.label}
        </button>
      )}
      {model && (
        <button
          type="button"
          className="button"
          aria-expanded={panelOpen}
          aria-controls="model-panel"
          onClick={() => controller.models.setPanelOpen(!panelOpen)}
        >
          Model
        </button>
      )}
      <DialogButton open={adaptersOpen} onClick={() => controller.adapters.setPanelOpen(true)}>
        Adapters
      </DialogButton>
      <DialogButton
        open={memoryOpen}
        onClick={() => {
          controller.memory.setOpen(true);
          // The panel's "Use memory" switch shows the current setting.
          void controller.settings.load();
        }}
      >
        Memory
      </DialogButton>
      <DialogButton open={privacyOpen} onClick={() => controller.privacy.setOpen(true)}>
        Privacy
      </DialogButton>
      <DialogButton open={settingsOpen} onClick={() => controller.settings.setOpen(true)}>
        Settings
      </DialogButton>
    </header>
  );
}

/** A header button that opens one of the app's dialogs. */
function DialogButton({ open, onClick, children }: { open: boolean; onClick: () => void; children: string }) {
  return (
    <button type="button" className="button" aria-haspopup="dialog" aria-expanded={open} onClick={onClick}>
      {children}
    </button>
  );
}
