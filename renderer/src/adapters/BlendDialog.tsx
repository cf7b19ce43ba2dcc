import { useState } from "react";
import type { AdapterInfo, AdapterSelection } from "../../../electron/api";
import { Modal } from "../app/Modal";
import { blendFromScales, formatScale, initialBlendScales } from "./adapter-logic";

/** Mix adapters: one slider per adapter (0 leaves it out, 1 is full strength, up to 2). */
export function BlendDialog({
  adapters,
  selection,
  onApply,
  onClose,
}: {
  adapters: readonly AdapterInfo[];
  selection: AdapterSelection;
  onApply: (selection: AdapterSelection) => void;
  onClose: () => void;
}) {
  const [scales, setScales] = useState(() => initialBlendScales(selection, adapters));
  const [error, setError] = useState<string | null>(null);
  const apply = () => {
    const next = blendFromScales(scales);
    if (next === "base") {
      setError("Give at least one adapter a scale above 0.");
      return;
    }
    onApply(next);
  };

  return (
    <Modal title="Blend adapters" onClose={onClose} className="blend-dialog">
      {/* No <form>: the dialog's owner sits in the composer's form, which would receive the submit. */}
      <div className="blend-dialog__content">
        <p className="muted">Each answer mixes the adapters at these strengths. 0 leaves one out.</p>
        {adapters.map((a) => {
          const id = `blend-${a.id}`;
          const value = scales[a.id] ?? 0;
          return (
            <div key={a.id} className="slider-row">
              <label htmlFor={id}>{a.name}</label>
              <input
                id={id}
                type="range"
                min={0}
                max={2}
                step={0.05}
                value={value}
                onChange={(e) => {
                  const scale = Number(e.target.value);
                  setScales((s) => ({ ...s, [a.id]: scale }));
                  setError(null);
                }}
              />
              <output htmlFor={id} aria-hidden="true">
                {formatScale(value)}
              </output>
            </div>
          );
        })}
        {error && (
          <div className="form-error" role="alert">
            {error}
          </div>
        )}
        <div className="modal__actions">
          <button type="button" className="button button--ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="button button--primary" onClick={apply}>
            Apply blend
          </button>
        </div>
      </div>
    </Modal>
  );
}
