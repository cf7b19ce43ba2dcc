import type { FitEstimate } from "../../../electron/api";
import { describeFit } from "./hub-logic";

const ADVICE =
  "Try a smaller context, fewer GPU layers or a smaller quantization (Q4); loading as it is may fail or be very slow.";

/**
 * The advice under a "does not fit" verdict, or the room it takes, kept empty: whatever the
 * estimate says, the summary is as tall as while it loaded, so nothing below it (the Download
 * button) moves when it arrives or changes.
 */
function Advice({ shown }: { shown: boolean }) {
  return shown ? (
    <p className="fit-summary__advice">{ADVICE}</p>
  ) : (
    <p className="fit-summary__advice fit-summary__reserved" aria-hidden="true">
      {ADVICE}
    </p>
  );
}

/**
 * The fit estimate in plain words: fits or not, RAM and VRAM against this machine, the context
 * that fits. A polite live region: it updates as the user changes context or GPU layers.
 */
export function FitSummary({
  fit,
  status,
  error,
}: {
  fit: FitEstimate | null;
  status: "idle" | "loading" | "done" | "error";
  error: string | null;
}) {
  const words = fit ? describeFit(fit) : null;
  return (
    <div
      className={`fit-summary${words ? (fit?.fits ? " fit-summary--fits" : " fit-summary--no-fit") : ""}`}
      role="status"
      aria-live="polite"
      aria-busy={status === "loading"}
      aria-label="Fit estimate"
    >
      {status === "error" && <p className="fit-summary__error">Could not estimate the fit: {error}</p>}
      {status !== "error" && !words && (
        // The same lines as the estimate, so that nothing below it (the Download button) moves
        // when it arrives: a click aimed at the button must not land elsewhere.
        <>
          <p className="fit-summary__verdict muted">Estimating whether it fits this machine…</p>
          <ul className="fit-summary__lines muted" aria-hidden="true">
            <li>Memory: …</li>
            <li>GPU: …</li>
            <li>Context: …</li>
          </ul>
          <Advice shown={false} />
        </>
      )}
      {status !== "error" && words && fit && (
        <>
          <p className="fit-summary__verdict">
            <strong>{words.verdict}</strong>
            {status === "loading" && <span className="muted"> (updating…)</span>}
          </p>
          <ul className="fit-summary__lines">
            <li>{words.ram}</li>
            <li>{words.gpu}</li>
            <li>{words.context}</li>
          </ul>
          <Advice shown={!fit.fits} />
        </>
      )}
    </div>
  );
}
