import { useCallback, useEffect, useId, useRef, useState } from "react";
import {
  Button,
  Dialog,
  DialogTrigger,
  Heading,
  Label,
  Popover,
  Slider,
  SliderOutput,
  SliderThumb,
  SliderTrack,
  Switch,
} from "react-aria-components";
import type { AdapterInfo } from "../../../electron/api";
import { useAdapterState, useController, useReleaseState } from "../app/controller-context";
import { formatBytes } from "../../../common/format-bytes";
import { formatScale } from "./adapter-logic";
import { AdapterCompare } from "./AdapterCompare";
import { VersionHistory } from "./VersionHistory";

// A slider sends many changes while dragged (or while an arrow key repeats): save once it rests.
const SCALE_SAVE_DELAY_MS = 300;

/**
 * One installed adapter in the Adapters panel, as a card: name, role, version, state, routing
 * weight (its scale), the enable switch and the actions. Compare and Versions open inside the
 * card that asked for them, so the result is next to what was clicked.
 */
export function AdapterCard({ adapter }: { adapter: AdapterInfo }) {
  const controller = useController();
  const busy = useAdapterState((s) => s.busyIds.includes(adapter.id));
  const compare = useAdapterState((s) => (s.compare?.adapterId === adapter.id ? s.compare : null));
  const showingVersions = useReleaseState((s) => s.openId === adapter.id);
  const headingId = useId();
  // The Adapters panel is a native modal <dialog> (the top layer; the rest of the page is
  // inert): a popover portalled to <body> would sit under it, unclickable. Portal into it.
  const [portal, setPortal] = useState<Element | null>(null);
  const cardRef = useCallback((el: HTMLElement | null) => setPortal(el?.closest("dialog") ?? null), []);

  const fits = adapter.fitsLoadedModel !== false;
  const state = !fits ? "Does not fit" : adapter.enabled ? "On" : "Off";
  const expanded = compare !== null || showingVersions;

  return (
    <article
      ref={cardRef}
      className={`adapter-card${adapter.enabled ? "" : " adapter-card--disabled"}${expanded ? " adapter-card--expanded" : ""}`}
      aria-labelledby={headingId}
    >
      <header className="adapter-card__header">
        <h3 id={headingId} className="adapter-card__name">
          {adapter.name}
        </h3>
        <span
          className={`adapter-card__state adapter-card__state--${fits ? (adapter.enabled ? "on" : "off") : "error"}`}
        >
          {state}
        </span>
      </header>
      {adapter.description && <p className="adapter-card__description muted">{adapter.description}</p>}
      {!fits && (
        <p className="badge badge--error adapter-card__warning">
          Does not fit the loaded model{adapter.incompatibleReason ? `: ${adapter.incompatibleReason}` : ""}
        </p>
      )}
      <dl className="adapter-card__facts">
        <div>
          <dt>Role</dt>
          <dd>{adapter.domain}</dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd>{adapter.version}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{formatBytes(adapter.sizeBytes)}</dd>
        </div>
        <div>
          <dt>Uses</dt>
          <dd>{adapter.usageCount}</dd>
        </div>
        <div className="adapter-card__base">
          <dt>Base model</dt>
          <dd>
            {adapter.base.baseName ?? `${adapter.base.architecture}, ${adapter.base.embeddingLength}-dim`}
          </dd>
        </div>
      </dl>
      <div className="adapter-card__controls">
        <Switch
          className="adapter-switch"
          isSelected={adapter.enabled}
          isDisabled={busy}
          onChange={(on) => void controller.adapters.setEnabled(adapter.id, on)}
        >
          <span className="adapter-switch__track" aria-hidden="true">
            <span className="adapter-switch__thumb" />
          </span>
          {/* The name says which adapter; the visible word starts it (label in name). */}
          <span>
            Enable<span className="visually-hidden"> {adapter.name}</span>
          </span>
        </Switch>
        <ScaleSlider adapter={adapter} />
      </div>
      <div className="adapter-card__actions">
        <Button
          className="button button--small"
          aria-label={`Compare ${adapter.name} with the base model`}
          aria-pressed={compare !== null}
          onPress={() => controller.adapters.openCompare(compare ? null : adapter.id)}
        >
          Compare…
        </Button>
        <Button
          className="button button--small"
          aria-label={`Versions of ${adapter.name}`}
          aria-expanded={showingVersions}
          onPress={() => controller.releases.openVersions(showingVersions ? null : adapter.id)}
        >
          Versions
        </Button>
        <RemoveAdapter adapter={adapter} busy={busy} portal={portal} />
      </div>
      {compare && <AdapterCompare key={adapter.id} adapter={adapter} compare={compare} />}
      {showingVersions && <VersionHistory key={adapter.id} adapter={adapter} />}
    </article>
  );
}

/** The adapter's scale (its weight when routed or pinned): react-aria's slider, saved once it rests. */
function ScaleSlider({ adapter }: { adapter: AdapterInfo }) {
  const controller = useController();
  // The value while dragged or saving; null shows the stored scale.
  const [draft, setDraft] = useState<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  // Bumped on every change: a save that resolves after a newer change must not drop that
  // change's draft (the slider would jump back to the older stored value mid-drag).
  const changes = useRef(0);
  const onChange = (value: number) => {
    const change = ++changes.current;
    setDraft(value);
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      void controller.adapters.setScale(adapter.id, value).then(() => {
        if (changes.current === change) setDraft(null);
      });
    }, SCALE_SAVE_DELAY_MS);
  };

  return (
    <Slider
      className="adapter-slider"
      minValue={0}
      maxValue={2}
      step={0.05}
      value={draft ?? adapter.scale}
      onChange={(v: number | number[]) => onChange(Array.isArray(v) ? (v[0] ?? 0) : v)}
    >
      <div className="adapter-slider__head">
        <Label className="adapter-slider__label">
          Scale<span className="visually-hidden"> for {adapter.name}</span>
        </Label>
        <SliderOutput className="adapter-slider__output">
          {({ state }) => formatScale(state.getThumbValue(0))}
        </SliderOutput>
      </div>
      <SliderTrack className="adapter-slider__track">
        <SliderThumb className="adapter-slider__thumb" />
      </SliderTrack>
      <span className="muted adapter-card__default">default {formatScale(adapter.defaultScale)}</span>
    </Slider>
  );
}

/**
 * "Remove" asks first in a popover dialog that react-aria places inside the viewport (flipping
 * above the button near the bottom edge); Escape or Cancel closes it and focus returns to the
 * Remove button.
 */
function RemoveAdapter({
  adapter,
  busy,
  portal,
}: {
  adapter: AdapterInfo;
  busy: boolean;
  portal: Element | null;
}) {
  const controller = useController();
  return (
    <DialogTrigger>
      <Button
        className="button button--small button--ghost"
        aria-label={`Remove ${adapter.name}`}
        isDisabled={busy}
      >
        Remove
      </Button>
      <Popover
        className="adapter-popover"
        placement="bottom end"
        containerPadding={8}
        UNSTABLE_portalContainer={portal ?? undefined}
      >
        <Dialog className="adapter-confirm">
          {({ close }) => (
            <>
              <Heading slot="title" className="adapter-confirm__title">
                Remove {adapter.name}?
              </Heading>
              <p className="muted">
                Its file is deleted. Conversations pinned to it keep the pin and say it is not installed.
              </p>
              <div className="adapter-confirm__actions">
                <Button
                  className="button button--small button--danger"
                  isDisabled={busy}
                  onPress={() => void controller.adapters.remove(adapter.id)}
                >
                  Yes, remove
                </Button>
                <Button className="button button--small button--ghost" onPress={close}>
                  Cancel
                </Button>
              </div>
            </>
          )}
        </Dialog>
      </Popover>
    </DialogTrigger>
  );
}
