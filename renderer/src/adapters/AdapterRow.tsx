import { useEffect, useRef, useState } from "react";
import type { AdapterInfo } from "../../../electron/api";
import { useAdapterState, useController, useReleaseState } from "../app/controller-context";
import { formatBytes } from "../../../common/format-bytes";
import { formatScale } from "./adapter-logic";
import { ConfirmButtons } from "./ConfirmButtons";

// A slider sends many changes while dragged: save once it rests.
const SCALE_SAVE_DELAY_MS = 300;

/** One installed adapter in the Adapters panel: facts, enable switch, scale, compare, versions, remove. */
export function AdapterRow({ adapter }: { adapter: AdapterInfo }) {
  const controller = useController();
  const busy = useAdapterState((s) => s.busyIds.includes(adapter.id));
  const comparing = useAdapterState((s) => s.compare?.adapterId === adapter.id);
  const showingVersions = useReleaseState((s) => s.openId === adapter.id);
  const [confirming, setConfirming] = useState(false);
  // The slider's value while dragged or saving; null shows the stored scale.
  const [draftScale, setDraftScale] = useState<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );

  const scale = draftScale ?? adapter.scale;
  const scaleId = `scale-${adapter.id}`;
  const onScale = (value: number) => {
    setDraftScale(value);
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      void controller.adapters.setScale(adapter.id, value).then(() => setDraftScale(null));
    }, SCALE_SAVE_DELAY_MS);
  };

  return (
    <tr className={adapter.enabled ? undefined : "adapter-row--disabled"}>
      <th scope="row">
        <span className="adapter-row__name">{adapter.name}</span>
        {adapter.description && <span className="adapter-row__description muted">{adapter.description}</span>}
      </th>
      <td>{adapter.domain}</td>
      <td>{adapter.version}</td>
      <td>{formatBytes(adapter.sizeBytes)}</td>
      <td>
        <span>
          {adapter.base.baseName ?? `${adapter.base.architecture}, ${adapter.base.embeddingLength}-dim`}
        </span>
        {adapter.fitsLoadedModel === false && (
          <span className="badge badge--error adapter-row__warning">
            Does not fit the loaded model{adapter.incompatibleReason ? `: ${adapter.incompatibleReason}` : ""}
          </span>
        )}
      </td>
      <td>
        <div className="adapter-row__scale">
          <input
            id={scaleId}
            type="range"
            min={0}
            max={2}
            step={0.05}
            value={scale}
            aria-label={`Scale for ${adapter.name}`}
            onChange={(e) => onScale(Number(e.target.value))}
          />
          <output htmlFor={scaleId}>{formatScale(scale)}</output>
        </div>
        <span className="muted adapter-row__default">default {formatScale(adapter.defaultScale)}</span>
      </td>
      <td>{adapter.usageCount}</td>
      <td>
        <input
          type="checkbox"
          role="switch"
          aria-label={`Enable ${adapter.name}`}
          checked={adapter.enabled}
          disabled={busy}
          onChange={(e) => void controller.adapters.setEnabled(adapter.id, e.target.checked)}
        />
      </td>
      <td className="adapter-row__actions">
        <button
          type="button"
          className="button button--small"
          aria-label={`Compare ${adapter.name} with the base model`}
          aria-pressed={comparing}
          onClick={() => controller.adapters.openCompare(comparing ? null : adapter.id)}
        >
          Compare…
        </button>
        <button
          type="button"
          className="button button--small"
          aria-label={`Versions of ${adapter.name}`}
          aria-expanded={showingVersions}
          onClick={() => controller.releases.openVersions(showingVersions ? null : adapter.id)}
        >
          Versions
        </button>
        {confirming ? (
          <span className="adapter-row__confirm" role="group" aria-label={`Remove ${adapter.name}?`}>
            <span>Remove {adapter.name}?</span>
            <ConfirmButtons
              confirmLabel="Yes, remove"
              busy={busy}
              onConfirm={() => void controller.adapters.remove(adapter.id)}
              onCancel={() => setConfirming(false)}
            />
          </span>
        ) : (
          <button
            type="button"
            className="button button--small button--ghost"
            aria-label={`Remove ${adapter.name}`}
            disabled={busy}
            onClick={() => setConfirming(true)}
          >
            Remove
          </button>
        )}
      </td>
    </tr>
  );
}
