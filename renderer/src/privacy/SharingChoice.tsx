import { useId } from "react";
import type { PrivacyState, SharingLevel } from "../../../electron/api";
import { usePrivacyController, usePrivacyState } from "../app/controller-context";
import { SHARING_HINTS, SHARING_LABELS, SHARING_LEVELS } from "./privacy-logic";

/**
 * The "Feedback sharing" radio group. Choosing a level that shares more shows a confirm step
 * here in the page; turning sharing down or off applies at once and says what was deleted.
 */
export function SharingChoice({ privacy }: { privacy: PrivacyState }) {
  const privacyController = usePrivacyController();
  const pending = usePrivacyState((s) => s.pendingLevel);
  const saving = usePrivacyState((s) => s.saving);
  const applying = usePrivacyState((s) => s.applyingLevel);
  const stopped = usePrivacyState((s) => s.stoppedMessage);
  const groupId = useId();
  const selected = pending ?? applying ?? privacy.sharing;

  return (
    <section className="privacy__sharing">
      <h3 id={`${groupId}-label`}>Feedback sharing</h3>
      <div role="radiogroup" aria-labelledby={`${groupId}-label`} className="radio-group">
        {SHARING_LEVELS.map((level: SharingLevel) => (
          <div key={level} className="radio-group__item">
            <input
              type="radio"
              id={`${groupId}-${level}`}
              name={`${groupId}-sharing`}
              value={level}
              checked={selected === level}
              disabled={saving}
              aria-describedby={`${groupId}-${level}-hint`}
              onChange={() => void privacyController.chooseLevel(level)}
            />
            <label htmlFor={`${groupId}-${level}`}>{SHARING_LABELS[level]}</label>
            <p id={`${groupId}-${level}-hint`} className="muted radio-group__hint">
              {SHARING_HINTS[level]}
            </p>
          </div>
        ))}
      </div>
      {pending && (
        <div className="confirm" role="group" aria-label="Confirm sharing">
          <p>
            Share <strong>{SHARING_LABELS[pending].toLowerCase()}</strong> with the feedback service? From now
            on, feedback you give is redacted on this device and queued for upload. You can turn it off at any
            time.
          </p>
          <div className="confirm__actions">
            <button
              type="button"
              className="button button--primary"
              disabled={saving}
              onClick={() => void privacyController.confirmLevel()}
            >
              Turn on sharing
            </button>
            <button type="button" className="button" onClick={() => privacyController.cancelLevel()}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {stopped && (
        <p className="privacy__stopped" role="status">
          {stopped}
        </p>
      )}
    </section>
  );
}
