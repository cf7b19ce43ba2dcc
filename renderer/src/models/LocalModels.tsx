import { useState } from "react";
import type { LocalModel } from "../../../electron/api";
import { useAppState, useLocalModelsController, useLocalModelsState } from "../app/controller-context";
import { formatBytes } from "../../../common/format-bytes";
import { formatParameters, formatTokens } from "./hub-logic";

/**
 * "My models": the model files in the data folder (downloaded here or put there), with Load
 * (through the load settings dialog) and Delete (asked twice; core refuses the loaded model and
 * says why).
 */
export function LocalModels({ onLoad, onFind }: { onLoad: (model: LocalModel) => void; onFind: () => void }) {
  const localModels = useLocalModelsController();
  const models = useLocalModelsState((s) => s.models);
  const listError = useLocalModelsState((s) => s.listError);
  const loadedPath = useAppState((s) => s.engine?.model?.path ?? null);

  return (
    <div className="local-models">
      {listError && (
        <div className="hub-error">
          <div className="form-error" role="alert">
            Could not list the models on this computer: {listError}
          </div>
          <button type="button" className="button" onClick={() => void localModels.refresh()}>
            Try again
          </button>
        </div>
      )}
      {models === null && !listError && <p role="status">Looking for models…</p>}
      {models?.length === 0 && (
        <div className="empty-state">
          <p>
            <strong>No models on this computer yet</strong>
          </p>
          <p className="muted">Models you download from the hub appear here.</p>
          <button type="button" className="button button--primary" onClick={onFind}>
            Find a model
          </button>
        </div>
      )}
      {models && models.length > 0 && (
        <div className="table-scroll">
          <table className="local-models__table">
            <caption className="visually-hidden">Models on this computer</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Architecture</th>
                <th scope="col">Parameters</th>
                <th scope="col">Quantization</th>
                <th scope="col">Size</th>
                <th scope="col">Context</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {models.map((m) => (
                <LocalModelRow
                  key={m.path}
                  model={m}
                  loaded={m.path === loadedPath}
                  onLoad={() => onLoad(m)}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {models && models.length > 0 && (
        <p className="muted local-models__where">Stored in {folderOf(models[0]!.path)}</p>
      )}
    </div>
  );
}

function folderOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i > 0 ? path.slice(0, i) : path;
}

function LocalModelRow({
  model,
  loaded,
  onLoad,
}: {
  model: LocalModel;
  loaded: boolean;
  onLoad: () => void;
}) {
  const localModels = useLocalModelsController();
  const deleting = useLocalModelsState((s) => s.deleting === model.path);
  const deleteError = useLocalModelsState((s) =>
    s.deleteError?.path === model.path ? s.deleteError.message : null,
  );
  const busy = useAppState((s) => s.modelBusy);
  const [confirming, setConfirming] = useState(false);
  const label = model.name || model.fileName;

  return (
    <tr>
      <th scope="row">
        <span className="local-models__name">{label}</span>
        {loaded && <span className="badge badge--ok">Loaded</span>}
        <span className="local-models__file muted">
          {model.fileName}
          {model.repo ? ` · from ${model.repo}` : ""}
        </span>
        {deleteError && (
          <span className="badge badge--error local-models__error" role="alert">
            {deleteError}
          </span>
        )}
      </th>
      <td data-label="Architecture">{model.architecture}</td>
      <td data-label="Parameters">{model.parameters > 0 ? formatParameters(model.parameters) : "—"}</td>
      <td data-label="Quantization">{model.quant ?? "—"}</td>
      <td data-label="Size">{formatBytes(model.sizeBytes)}</td>
      <td data-label="Context">{model.contextLength > 0 ? formatTokens(model.contextLength) : "—"}</td>
      <td className="local-models__actions">
        <button
          type="button"
          className="button button--small button--primary"
          aria-label={`Load ${label}`}
          aria-haspopup="dialog"
          disabled={busy}
          onClick={onLoad}
        >
          Load…
        </button>
        {confirming ? (
          <span className="adapter-row__confirm" role="group" aria-label={`Delete ${label}?`}>
            <span>Delete the file?</span>
            <button
              type="button"
              className="button button--small button--danger"
              disabled={deleting}
              onClick={() => void localModels.remove(model.path).then(() => setConfirming(false))}
            >
              Yes, delete
            </button>
            <button
              type="button"
              className="button button--small button--ghost"
              autoFocus
              onClick={() => setConfirming(false)}
            >
              Cancel
            </button>
          </span>
        ) : (
          <button
            type="button"
            className="button button--small button--ghost"
            aria-label={`Delete ${label}`}
            disabled={deleting}
            onClick={() => {
              localModels.dismissDeleteError();
              setConfirming(true);
            }}
          >
            Delete
          </button>
        )}
      </td>
    </tr>
  );
}
