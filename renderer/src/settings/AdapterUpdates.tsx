import { useState } from "react";
import type { UpdateCheck } from "../../../electron/api";
import { useController, useReleaseState, useUpdateState } from "../app/controller-context";
import type { NameOf } from "../adapters/release-logic";
import {
  describeCheck,
  describeUpdate,
  describeUpdateItem,
  downloadFraction,
  versionKey,
} from "../adapters/release-logic";

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/**
 * "Adapter updates" in Settings: automatic updates, the update server, "Check for updates"
 * with its live progress, and where each version found stands (downloaded, gated, live).
 */
export function AdapterUpdates() {
  const controller = useController();
  const settings = useUpdateState((s) => s.settings);
  const loadError = useUpdateState((s) => s.loadError);
  const saving = useUpdateState((s) => s.saving);
  const saveError = useUpdateState((s) => s.saveError);
  const checking = useUpdateState((s) => s.checking);
  const checkError = useUpdateState((s) => s.checkError);
  const nameOf = useNameOf();

  return (
    <section className="settings-section" aria-labelledby="adapter-updates-heading">
      <h3 id="adapter-updates-heading">Adapter updates</h3>
      {loadError && (
        <div className="form-error" role="alert">
          Could not read the update settings: {loadError}
        </div>
      )}
      {settings === null && !loadError && <p role="status">Loading…</p>}
      {settings && (
        <>
          <label className="switch-row">
            <input
              type="checkbox"
              role="switch"
              checked={settings.autoUpdate}
              disabled={saving}
              aria-describedby="auto-update-hint"
              onChange={(e) => void controller.updates.configure({ autoUpdate: e.target.checked })}
            />
            Install adapter updates automatically
          </label>
          <p id="auto-update-hint" className="muted">
            New versions are downloaded, verified and run through the evaluation contract before they go live;
            a version that fails stays out. Checked every {formatInterval(settings.intervalMinutes)}.
          </p>
          <UpdateServerForm key={settings.registryUrl ?? ""} current={settings.registryUrl} saving={saving} />
          <div className="update-check">
            <button
              type="button"
              className="button"
              disabled={checking || !settings.registryUrl}
              onClick={() => void controller.updates.check()}
            >
              Check for updates
            </button>
            <span className="muted">
              {!settings.registryUrl
                ? "Set an update server first."
                : settings.lastCheckAt
                  ? `Last checked ${timeFormat.format(settings.lastCheckAt)}`
                  : "Never checked"}
            </span>
          </div>
          {settings.lastError && <p className="form-error">The last check failed: {settings.lastError}</p>}
        </>
      )}
      {saveError && (
        <div className="form-error" role="alert">
          {saveError}
        </div>
      )}
      {checkError && (
        <div className="form-error" role="alert">
          {checkError}
        </div>
      )}
      <UpdateProgressView nameOf={nameOf} />
    </section>
  );
}

function formatInterval(minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? "day" : `${minutes / 1440} days`;
  if (minutes % 60 === 0) return minutes === 60 ? "hour" : `${minutes / 60} hours`;
  return `${minutes} minutes`;
}

/** Adapter names from the adapters store, for the progress lines. */
function useNameOf(): NameOf {
  const controller = useController();
  return (id) => controller.adapters.store.getState().adapters?.find((a) => a.id === id)?.name ?? id;
}

function UpdateServerForm({ current, saving }: { current: string | null; saving: boolean }) {
  const controller = useController();
  const [draft, setDraft] = useState(current ?? "");
  const [overridden, setOverridden] = useState(false);
  const save = async () => {
    const wanted = draft.trim().replace(/\/+$/, "") || null;
    if (!(await controller.updates.configure({ registryUrl: draft }))) return;
    // A server given at start-up (MACARON_REGISTRY_URL) wins over the saved setting.
    setOverridden(controller.updates.store.getState().settings?.registryUrl !== wanted);
  };
  return (
    <form
      className="update-server"
      onSubmit={(e) => {
        e.preventDefault();
        e.stopPropagation();
        void save();
      }}
    >
      <label htmlFor="update-server">Update server</label>
      <div className="adapter-install__row">
        <input
          id="update-server"
          className="input"
          type="url"
          spellCheck={false}
          autoComplete="off"
          placeholder="https://updates.example.com"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <button type="submit" className="button" disabled={saving || draft.trim() === (current ?? "")}>
          Save
        </button>
      </div>
      {overridden && (
        <p className="muted" role="status">
          Saved, but the update server set when Macaron was started ({current}) is used while it runs.
        </p>
      )}
    </form>
  );
}

/** The registry's live progress and, for the last check, where each version found stands. */
function UpdateProgressView({ nameOf }: { nameOf: NameOf }) {
  const progress = useUpdateState((s) => s.progress);
  const lastCheck = useUpdateState((s) => s.lastCheck);
  const line = progress ? describeUpdate(progress, nameOf) : null;
  const fraction = progress?.state === "downloading" ? downloadFraction(progress) : null;
  return (
    <div className="update-progress" role="status" aria-live="polite">
      {line && <p>{line}</p>}
      {progress?.state === "downloading" && (
        <progress
          aria-label="Download progress"
          value={fraction === null ? undefined : Math.round(fraction * 100)}
          max={100}
        />
      )}
      {lastCheck && <CheckResults check={lastCheck} nameOf={nameOf} />}
    </div>
  );
}

function CheckResults({ check, nameOf }: { check: UpdateCheck; nameOf: NameOf }) {
  const byVersion = useUpdateState((s) => s.byVersion);
  const gates = useReleaseState((s) => s.gates);
  return (
    <>
      <p>{describeCheck(check, nameOf)}</p>
      {check.available.length > 0 && (
        <ul className="update-results" aria-label="Update results">
          {check.available.map((a) => {
            const key = versionKey(a.adapterId, a.version);
            return (
              <li key={key}>
                <strong>
                  {nameOf(a.adapterId)} {a.version}
                </strong>
                : {describeUpdateItem(byVersion[key], gates[key])}
              </li>
            );
          })}
        </ul>
      )}
    </>
  );
}
