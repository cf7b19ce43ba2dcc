import { useEffect, useId, useState } from "react";
import { useAppState, useEngineBuildController, useEngineBuildState } from "../app/controller-context";

const STATE_TEXT = {
  prebuilt: "Not built for this computer yet.",
  building: "Building llama.cpp for this computer…",
  built: "Built for this computer.",
  failed: "The last build failed.",
} as const;

/**
 * What bench/README.md measured ("Built for this machine", "ttft"): on a 2-core CPU a local build
 * was no faster at one thread, 1.5× on a 2k-token prompt at two; its real gain is a GPU
 * toolkit's backend where no prebuilt one exists. Keep this sentence in line with those numbers.
 */
export const BUILD_SPEED_CLAIM =
  "Measured on a 2-core CPU it was no faster than the prebuilt binaries with one thread, and about 1.5× faster on a long prompt with two; it matters most for a GPU toolkit no prebuilt binary supports.";

/**
 * "Build llama.cpp for this machine": which binaries run now, the build with its progress, the
 * log tail when it fails (the prebuilt binaries stay in use), and going back to prebuilt.
 */
export function EngineBuildSettings() {
  const engineBuild = useEngineBuildController();
  const status = useEngineBuildState((s) => s.status);
  const error = useEngineBuildState((s) => s.error);
  const busy = useEngineBuildState((s) => s.busy);
  // The backend is known once the engine has loaded a model (EngineStatus.gpu: null on the CPU).
  const backend = useAppState((s) =>
    s.engine?.model ? (s.engine.gpu === null ? "CPU" : s.engine.gpu.toUpperCase()) : null,
  );
  const [showLog, setShowLog] = useState(false);
  const headingId = useId();
  useEffect(() => {
    void engineBuild.load();
  }, [engineBuild]);
  const building = status?.state === "building";

  return (
    <section className="settings-section" aria-labelledby={headingId}>
      <h3 id={headingId}>Build llama.cpp for this machine</h3>
      <p className="muted">
        Compiles the engine from its bundled source for this CPU (and GPU toolkit, when one is installed).
        {BUILD_SPEED_CLAIM} The build takes several minutes. If it fails, the prebuilt binaries stay in use.
      </p>
      {status === null && !error && <p role="status">Checking…</p>}
      {status && (
        <div role="status" aria-live="polite" className="engine-build__status">
          <p>
            {STATE_TEXT[status.state]}{" "}
            <strong>
              In use: {status.using === "local" ? "built for this computer" : "prebuilt binaries"}.
            </strong>
            {backend && <> Backend: {backend}.</>}
          </p>
          {building && (
            <div className="load-progress">
              <progress aria-label="Building llama.cpp" max={1} value={status.progress ?? undefined} />
              <span>{status.progress === null ? "Building…" : `${Math.round(status.progress * 100)}%`}</span>
            </div>
          )}
        </div>
      )}
      {status?.state === "failed" && (
        <div className="form-error" role="alert">
          {status.error ?? "The build failed."} The prebuilt binaries are in use.
        </div>
      )}
      {status && status.log.length > 0 && (status.state === "failed" || showLog) && (
        <pre className="engine-build__log" aria-label="Build output (last lines)" tabIndex={0}>
          {status.log.join("\n")}
        </pre>
      )}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
      {status && (
        <div className="settings-section__actions">
          <button
            type="button"
            className="button"
            disabled={busy || building}
            onClick={() => void engineBuild.build()}
          >
            {status.state === "built" || status.state === "failed"
              ? "Build again"
              : "Build llama.cpp for this machine"}
          </button>
          {status.using === "local" && (
            <button
              type="button"
              className="button button--ghost"
              disabled={busy || building}
              onClick={() => void engineBuild.usePrebuilt()}
            >
              Use the prebuilt binaries
            </button>
          )}
          {status.log.length > 0 && status.state !== "failed" && (
            <button
              type="button"
              className="button button--ghost button--small"
              aria-expanded={showLog}
              onClick={() => setShowLog((v) => !v)}
            >
              {showLog ? "Hide the build output" : "Show the build output"}
            </button>
          )}
        </div>
      )}
    </section>
  );
}
