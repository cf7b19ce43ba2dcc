import { useEffect, useId, useRef } from "react";
import type { HubFile } from "../../../electron/api";
import { useHubController, useHubState, useLocalModelsState } from "../app/controller-context";
import { formatBytes } from "../../../common/format-bytes";
import {
  contextChoices,
  downloadFor,
  fileName,
  formatTokens,
  hubErrorHint,
  localModelFor,
  modelFiles,
} from "./hub-logic";
import type { GpuLayers } from "./hub-logic";
import { DownloadRow } from "./DownloadRow";
import { FitSummary } from "./FitSummary";
import { HubTokenForm } from "./HubTokenForm";

/**
 * One hub repo: its GGUF files (quantization, size, parts), the fit estimate for the chosen
 * file with context and GPU-layer controls, shown before downloading, then Download (or the
 * running download, or Load for a file already here).
 */
export function HubRepoView({ onBack, onLoad }: { onBack: () => void; onLoad: (path: string) => void }) {
  const hubController = useHubController();
  const view = useHubState((s) => s.repo);
  const selected = useHubState((s) => s.selectedFile);
  const token = useHubState((s) => s.token);
  const downloadError = useHubState((s) => s.downloadError);
  const downloads = useHubState((s) => s.downloads);
  const locals = useLocalModelsState((s) => s.models);
  const headingId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const repoId = view?.repo;
  // The button that opened the repo is gone: focus goes to what replaced it.
  useEffect(() => {
    heading.current?.focus();
  }, [repoId]);
  if (!view) return null;

  const files = view.data ? modelFiles(view.data) : [];
  const adapterCount = view.data ? view.data.files.length - files.length : 0;
  const file = files.find((f) => f.path === selected) ?? null;
  const local = file ? localModelFor(locals, view.repo, file.path) : null;
  const download = file ? downloadFor(downloads, view.repo, file.path) : null;
  const needsToken = !!view.data?.gated && token !== null && !token.set;

  return (
    <section className="hub-repo" aria-labelledby={headingId}>
      <button type="button" className="button button--ghost button--small hub-repo__back" onClick={onBack}>
        ← Back to the list
      </button>
      <h3 id={headingId} ref={heading} tabIndex={-1} className="hub-repo__title">
        {view.repo}
        {view.data?.gated && <span className="badge badge--warn">Gated</span>}
      </h3>
      {view.data?.baseModel && <p className="muted">Based on {view.data.baseModel}</p>}

      {view.status === "loading" && <p role="status">Loading the repo's files…</p>}
      {view.status === "error" && view.error && (
        <div className="hub-error">
          <div className="form-error" role="alert">
            {view.error.message}
            {hubErrorHint(view.error.kind) && (
              <span className="hub-error__hint"> {hubErrorHint(view.error.kind)}</span>
            )}
          </div>
          {view.error.kind === "token" ? (
            <HubTokenForm submitLabel="Save token and try again" />
          ) : (
            <button
              type="button"
              className="button"
              onClick={() => void hubController.openRepo(view.repo, view.preferredQuant)}
            >
              Try again
            </button>
          )}
        </div>
      )}

      {view.status === "loaded" && files.length === 0 && (
        <div className="empty-state">
          <p>
            <strong>No GGUF model in this repo</strong>
          </p>
          <p className="muted">
            Macaron runs GGUF models (llama.cpp). Look for a repo of the same model whose name ends in “GGUF”.
            {adapterCount > 0 &&
              ` This repo has ${adapterCount} adapter file(s): install those from the Adapters panel.`}
          </p>
        </div>
      )}

      {files.length > 0 && (
        <>
          <FileChoice files={files} selected={selected} repo={view.repo} />
          {adapterCount > 0 && (
            <p className="muted">
              {adapterCount} LoRA adapter file(s) in this repo are not listed: install them from the Adapters
              panel.
            </p>
          )}
          {file && <FitControls />}
          {needsToken && !local && (
            <div className="hub-token-prompt">
              <p>
                <strong>This repo is gated.</strong> Accept its terms on huggingface.co with your account,
                then give Macaron an access token to download it.
              </p>
              <HubTokenForm />
            </div>
          )}
          {file && (
            <div className="hub-repo__action">
              {local ? (
                <p className="hub-repo__here">
                  <span className="badge badge--ok">Downloaded</span> {local.fileName} is on this computer.{" "}
                  <button type="button" className="button button--primary" onClick={() => onLoad(local.path)}>
                    Load…
                  </button>
                </p>
              ) : download && download.state !== "error" ? (
                <ul className="downloads" aria-label="Download">
                  <DownloadRow download={download} onLoad={onLoad} />
                </ul>
              ) : (
                <button
                  type="button"
                  className="button button--primary"
                  onClick={() => void hubController.download(view.repo, file.path)}
                >
                  Download {file.quant ?? fileName(file.path)} ({formatBytes(file.sizeBytes)})
                </button>
              )}
              {download?.state === "error" && (
                <div className="form-error" role="alert">
                  The last download failed: {download.error ?? "unknown error"}
                </div>
              )}
            </div>
          )}
          {downloadError && (
            <div className="hub-error">
              <div className="form-error" role="alert">
                {downloadError.message}
                {hubErrorHint(downloadError.kind) && (
                  <span className="hub-error__hint"> {hubErrorHint(downloadError.kind)}</span>
                )}
              </div>
              {downloadError.kind === "token" && !needsToken && (
                <HubTokenForm submitLabel="Save token and try again" />
              )}
            </div>
          )}
        </>
      )}
    </section>
  );
}

function FileChoice({ files, selected, repo }: { files: HubFile[]; selected: string | null; repo: string }) {
  const hubController = useHubController();
  const locals = useLocalModelsState((s) => s.models);
  const name = useId();
  return (
    <fieldset className="hub-files">
      <legend>Choose a file</legend>
      <p className="muted hub-files__hint">
        Smaller quantizations (Q4) need less memory; larger ones (Q8, F16) answer a little better.
      </p>
      <ul className="hub-files__list">
        {files.map((f) => {
          const id = `${name}-${f.path}`;
          const here = localModelFor(locals, repo, f.path);
          return (
            <li key={f.path} className={`hub-file${f.path === selected ? " hub-file--selected" : ""}`}>
              <input
                type="radio"
                id={id}
                name={name}
                value={f.path}
                checked={f.path === selected}
                onChange={() => hubController.selectFile(f.path)}
              />
              <label htmlFor={id}>
                <span className="hub-file__quant">{f.quant ?? "—"}</span>
                <span className="hub-file__name">{fileName(f.path)}</span>
                <span className="hub-file__size">{formatBytes(f.sizeBytes)}</span>
                {f.parts.length > 1 && <span className="badge">{f.parts.length} parts</span>}
                {here && <span className="badge badge--ok">Downloaded</span>}
              </label>
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}

/** Context size and GPU layers for the estimate (the load settings dialog offers the rest). */
function FitControls() {
  const hubController = useHubController();
  const contextSize = useHubState((s) => s.contextSize);
  const gpuLayers = useHubState((s) => s.gpuLayers);
  const fit = useHubState((s) => s.fit);
  const id = useId();
  const train = fit.estimate?.trainContextSize ?? 0;
  const choices = train > 0 ? contextChoices(train) : [2048, 4096, 8192, 16384, 32768];
  const gpuMode = typeof gpuLayers === "number" ? "custom" : gpuLayers;
  const total = fit.estimate?.totalLayers ?? 0;
  const setGpu = (value: GpuLayers) => hubController.setFitInput({ gpuLayers: value });

  return (
    <div className="fit-block">
      <h4 className="fit-block__title">Will it run on this computer?</h4>
      <div className="fit-controls">
        <div className="field">
          <label htmlFor={`${id}-ctx`}>Context size</label>
          <select
            id={`${id}-ctx`}
            className="input"
            value={contextSize === null ? "" : String(contextSize)}
            onChange={(e) =>
              hubController.setFitInput({
                contextSize: e.target.value === "" ? null : Number(e.target.value),
              })
            }
          >
            <option value="">
              Automatic{fit.estimate ? ` (${formatTokens(fit.estimate.contextSize)})` : ""}
            </option>
            {choices.map((n) => (
              <option key={n} value={n}>
                {formatTokens(n)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-gpu`}>GPU layers</label>
          <div className="fit-controls__row">
            <select
              id={`${id}-gpu`}
              className="input"
              value={gpuMode}
              onChange={(e) => {
                const v = e.target.value;
                setGpu(
                  v === "custom" ? Math.min(total || 0, fit.estimate?.gpuLayers ?? 0) : (v as "auto" | "max"),
                );
              }}
            >
              <option value="auto">Auto (as many as fit)</option>
              <option value="max">All layers</option>
              <option value="custom">A number of layers</option>
            </select>
            {typeof gpuLayers === "number" && (
              <input
                className="input fit-controls__layers"
                type="number"
                min={0}
                max={total || 1000}
                aria-label={`Layers on the GPU${total ? ` (of ${total})` : ""}`}
                value={gpuLayers}
                onChange={(e) => {
                  const n = Math.max(0, Math.min(total || 1000, Math.floor(Number(e.target.value) || 0)));
                  setGpu(n);
                }}
              />
            )}
          </div>
        </div>
      </div>
      <FitSummary fit={fit.estimate} status={fit.status} error={fit.error} />
    </div>
  );
}
