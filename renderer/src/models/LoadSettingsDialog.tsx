import { useId, useState } from "react";
import type { LoadSettings } from "../../../electron/api";
import { useAppState, useLocalModelsController, useLocalModelsState } from "../app/controller-context";
import { COMPOSER_INPUT_ID } from "../app/dom-ids";
import { Modal } from "../app/Modal";
import type { LoadDialogState } from "./local-models-controller";
import { draftFromSettings, fitInputFromDraft, formatTokens, settingsFromDraft } from "./hub-logic";
import type { LoadDraft } from "./hub-logic";
import { FitSummary } from "./FitSummary";
import { LoadProgress } from "./LoadProgress";

const KV_LABELS: Record<LoadSettings["kvCacheType"], string> = {
  f16: "F16 (exact, default)",
  q8_0: "Q8_0 (half the memory, nearly exact)",
  q4_0: "Q4_0 (quarter of the memory, less exact)",
};

/**
 * How a model loads: context size (up to its training context, default from the fit
 * estimate), GPU layers, flash attention, KV cache type, batch size, threads; the fit estimate
 * follows context and GPU layers. Remembered per model by core. Load shows the engine's progress.
 */
export function LoadSettingsDialog({ onLoaded }: { onLoaded?: () => void }) {
  const localModels = useLocalModelsController();
  const load = useLocalModelsState((s) => s.load);
  if (!load) return null;
  return (
    <Modal title={`Load ${load.name}`} onClose={() => localModels.closeLoadDialog()} className="load-dialog">
      {load.status === "loading" && <p role="status">Reading the model's settings…</p>}
      {load.status === "error" && (
        <div className="form-error" role="alert">
          {load.error}
        </div>
      )}
      {load.status === "ready" && load.settings && (
        <LoadForm key={load.path} load={load} settings={load.settings} onLoaded={onLoaded} />
      )}
    </Modal>
  );
}

function LoadForm({
  load,
  settings,
  onLoaded,
}: {
  load: LoadDialogState;
  settings: LoadSettings;
  onLoaded?: () => void;
}) {
  const localModels = useLocalModelsController();
  const engine = useAppState((s) => s.engine);
  const [draft, setDraft] = useState<LoadDraft>(() => draftFromSettings(settings));
  const [fieldError, setFieldError] = useState<{ field: keyof LoadDraft; error: string } | null>(null);
  const [saved, setSaved] = useState(false);
  const id = useId();
  const fit = load.fit;
  const train = fit?.trainContextSize || load.contextLength;
  const totalLayers = fit?.totalLayers ?? 0;
  const cores = fit?.machine.cpuCores ?? null;
  const limits = { maxContext: train, totalLayers };

  const change = (patch: Partial<LoadDraft>) => {
    const next = { ...draft, ...patch };
    setDraft(next);
    setFieldError(null);
    setSaved(false);
    if ("contextSize" in patch || "gpuMode" in patch || "gpuLayers" in patch)
      localModels.fitSoon(load.path, fitInputFromDraft(next));
  };
  const parsed = () => {
    const result = settingsFromDraft(draft, limits);
    if (!result.ok) {
      setFieldError({ field: result.field, error: result.error });
      document.getElementById(`${id}-${result.field}`)?.focus();
      return null;
    }
    return result.settings;
  };
  const errorFor = (field: keyof LoadDraft) =>
    fieldError?.field === field ? (
      <p id={`${id}-${field}-error`} className="form-error">
        {fieldError.error}
      </p>
    ) : null;
  const describedBy = (field: keyof LoadDraft, hint?: string) =>
    [hint, fieldError?.field === field ? `${id}-${field}-error` : null].filter(Boolean).join(" ") ||
    undefined;

  return (
    <form
      className="load-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        e.stopPropagation();
        const s = parsed();
        if (!s) return;
        void localModels.load(load.path, s).then((ok) => {
          if (!ok) return;
          onLoaded?.();
          // The dialogs close; the conversation is where the user goes next.
          requestAnimationFrame(() => document.getElementById(COMPOSER_INPUT_ID)?.focus());
        });
      }}
    >
      <p className="muted load-form__path">{load.path}</p>
      <p className="muted">
        {load.remembered ? "The settings you used last time." : "Defaults for this model and this computer."}
      </p>
      {load.profile && (
        <div className="load-form__profile" role="note" aria-label={`${load.profile.label} profile`}>
          <p>
            <strong>{load.profile.label}</strong> — {load.profile.hardware}
          </p>
          {load.profile.notes.length > 0 && (
            <ul>
              {load.profile.notes.map((n) => (
                <li key={n}>{n}</li>
              ))}
            </ul>
          )}
        </div>
      )}

      <div className="load-form__grid">
        <div className="field">
          <label htmlFor={`${id}-contextSize`}>Context size (tokens)</label>
          <input
            id={`${id}-contextSize`}
            className="input"
            type="number"
            inputMode="numeric"
            min={256}
            max={train || undefined}
            step={256}
            placeholder={fit ? `Automatic: ${fit.contextSize}` : "Automatic"}
            value={draft.contextSize}
            aria-invalid={fieldError?.field === "contextSize"}
            aria-describedby={describedBy("contextSize", `${id}-contextSize-hint`)}
            onChange={(e) => change({ contextSize: e.target.value })}
          />
          <p id={`${id}-contextSize-hint`} className="muted field__hint">
            {train > 0 ? `Up to ${formatTokens(train)} (what the model was trained for). ` : ""}
            Empty: the largest that fits{fit ? ` (${formatTokens(fit.maxContextSize)})` : ""}.
          </p>
          {errorFor("contextSize")}
        </div>

        <div className="field">
          <label htmlFor={`${id}-gpuMode`}>GPU layers</label>
          <div className="fit-controls__row">
            <select
              id={`${id}-gpuMode`}
              className="input"
              value={draft.gpuMode}
              onChange={(e) => {
                const gpuMode = e.target.value as LoadDraft["gpuMode"];
                change({
                  gpuMode,
                  gpuLayers:
                    gpuMode === "custom" && draft.gpuLayers === ""
                      ? String(fit?.gpuLayers ?? 0)
                      : draft.gpuLayers,
                });
              }}
            >
              <option value="auto">Auto (as many as fit)</option>
              <option value="max">All layers</option>
              <option value="custom">A number of layers</option>
            </select>
            {draft.gpuMode === "custom" && (
              <input
                id={`${id}-gpuLayers`}
                className="input fit-controls__layers"
                type="number"
                inputMode="numeric"
                min={0}
                max={totalLayers || undefined}
                aria-label={`Layers on the GPU${totalLayers ? ` (of ${totalLayers})` : ""}`}
                aria-invalid={fieldError?.field === "gpuLayers"}
                aria-describedby={describedBy("gpuLayers")}
                value={draft.gpuLayers}
                onChange={(e) => change({ gpuLayers: e.target.value })}
              />
            )}
          </div>
          {errorFor("gpuLayers")}
        </div>

        <div className="field">
          <label htmlFor={`${id}-fa`}>Flash attention</label>
          <select
            id={`${id}-fa`}
            className="input"
            value={draft.flashAttention}
            onChange={(e) => change({ flashAttention: e.target.value as LoadDraft["flashAttention"] })}
          >
            <option value="auto">Auto</option>
            <option value="on">On</option>
            <option value="off">Off</option>
          </select>
        </div>

        <div className="field">
          <label htmlFor={`${id}-kv`}>KV cache type</label>
          <select
            id={`${id}-kv`}
            className="input"
            value={draft.kvCacheType}
            onChange={(e) => change({ kvCacheType: e.target.value as LoadDraft["kvCacheType"] })}
          >
            {(Object.keys(KV_LABELS) as Array<LoadDraft["kvCacheType"]>).map((k) => (
              <option key={k} value={k}>
                {KV_LABELS[k]}
              </option>
            ))}
          </select>
        </div>

        <div className="field">
          <label htmlFor={`${id}-batchSize`}>Batch size</label>
          <input
            id={`${id}-batchSize`}
            className="input"
            type="number"
            inputMode="numeric"
            min={1}
            placeholder="Automatic"
            value={draft.batchSize}
            aria-invalid={fieldError?.field === "batchSize"}
            aria-describedby={describedBy("batchSize")}
            onChange={(e) => change({ batchSize: e.target.value })}
          />
          {errorFor("batchSize")}
        </div>

        <div className="field">
          <label htmlFor={`${id}-threads`}>Threads</label>
          <input
            id={`${id}-threads`}
            className="input"
            type="number"
            inputMode="numeric"
            min={1}
            placeholder={cores ? `Automatic (${cores} cores here)` : "Automatic"}
            value={draft.threads}
            aria-invalid={fieldError?.field === "threads"}
            aria-describedby={describedBy("threads")}
            onChange={(e) => change({ threads: e.target.value })}
          />
          {errorFor("threads")}
        </div>
      </div>

      <FitSummary fit={fit} status={load.fitStatus} error={load.fitError} />

      {load.opening && <LoadProgress progress={engine?.state === "loading" ? engine.progress : null} />}
      {load.openError && (
        <div className="form-error" role="alert">
          {load.openError}
        </div>
      )}
      {saved && (
        <p role="status" className="muted">
          Saved for this model.
        </p>
      )}
      <div className="modal__actions">
        <button
          type="button"
          className="button button--ghost"
          disabled={load.opening}
          onClick={() => {
            const s = parsed();
            if (s) void localModels.saveSettings(load.path, s).then(setSaved);
          }}
        >
          Save without loading
        </button>
        <button type="submit" className="button button--primary" disabled={load.opening}>
          {load.opening ? "Loading…" : "Load model"}
        </button>
      </div>
    </form>
  );
}
