import { useAdapterState, useController } from "../app/controller-context";
import { FileChooser } from "../app/FileChooser";
import { Modal } from "../app/Modal";
import { AdapterCard } from "./AdapterCard";
import { FindAdapters } from "./FindAdapters";
import { InstallVersion } from "./InstallVersion";

/** The installed specialist adapters: what they are, on/off, strength, compare, install, remove. */
export function AdaptersPanel() {
  const controller = useController();
  const adapters = useAdapterState((s) => s.adapters);
  const listError = useAdapterState((s) => s.listError);
  const actionError = useAdapterState((s) => s.actionError);
  const close = () => {
    controller.releases.openVersions(null);
    controller.adapters.setPanelOpen(false);
  };

  return (
    <Modal title="Adapters" onClose={close} className="adapters-panel">
      <p className="muted">
        Specialist LoRA adapters sit on top of the base model. The router picks one per message, or you pin
        one (or a blend) per conversation.
      </p>
      {listError && (
        <div className="form-error" role="alert">
          Could not list the adapters: {listError}
        </div>
      )}
      {adapters === null && !listError && <p role="status">Loading adapters…</p>}
      {adapters?.length === 0 && (
        <div className="empty-state">
          <p>
            <strong>No adapters installed</strong>
          </p>
          <p className="muted">
            Install a LoRA adapter file (.gguf) made for the loaded base model. Until then every answer comes
            from the base model alone.
          </p>
        </div>
      )}
      {adapters && adapters.length > 0 && (
        <ul className="adapter-cards" aria-label="Installed adapters">
          {adapters.map((a) => (
            <li key={a.id}>
              <AdapterCard adapter={a} />
            </li>
          ))}
        </ul>
      )}
      {actionError && (
        <div className="form-error" role="alert">
          {actionError}
        </div>
      )}
      <InstallAdapter />
      <FindAdapters />
      {adapters && adapters.length > 0 && <InstallVersion />}
    </Modal>
  );
}

/** Electron: a native file dialog. Browser: a path on the machine that runs the server. */
function InstallAdapter() {
  const controller = useController();
  const installing = useAdapterState((s) => s.installing);
  const error = useAdapterState((s) => s.installError);

  return (
    <section className="adapter-install" aria-labelledby="adapter-install-heading">
      <h3 id="adapter-install-heading">Install an adapter</h3>
      <FileChooser
        canPick={!!controller.api.platform.pickModelFile}
        onPick={() => void controller.adapters.pickAndInstall()}
        pickLabel="Install adapter from file…"
        busy={installing}
        primary
        formClassName="adapter-install__form"
        rowClassName="adapter-install__row"
        inputId="adapter-path"
        label="Adapter file path"
        placeholder="/home/me/adapters/coding.gguf"
        submitLabel="Install adapter"
        note="A path on the machine running the Macaron server: a .gguf file, or a Hugging Face PEFT adapter folder (converted for the loaded model)."
        onSubmit={(path) => controller.adapters.install(path)}
      />
      {installing && <p role="status">Checking and installing…</p>}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
