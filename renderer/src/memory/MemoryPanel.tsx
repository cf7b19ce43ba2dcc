import { useId, useMemo, useState } from "react";
import { useController, useMemoryState, useSettingsState } from "../app/controller-context";
import { Modal } from "../app/Modal";
import { ConfirmButtons } from "../adapters/ConfirmButtons";
import { splitMemories } from "./memory-logic";
import { MemoryItem } from "./MemoryItem";

/**
 * The Memory panel: whether memory is used at all, what Macaron proposed to remember (kept
 * only when the user says so), everything it remembers, and a field to add a memory.
 */
export function MemoryPanel() {
  const controller = useController();
  const memories = useMemoryState((s) => s.memories);
  const listError = useMemoryState((s) => s.listError);
  const actionError = useMemoryState((s) => s.actionError);
  const settings = useSettingsState((s) => s.settings);
  const saving = useSettingsState((s) => s.saving);
  const { proposed, active } = useMemo(() => splitMemories(memories ?? []), [memories]);
  const close = () => controller.memory.setOpen(false);

  return (
    <Modal title="Memory" onClose={close} className="memory-panel">
      <label className="switch">
        <input
          type="checkbox"
          role="switch"
          checked={settings?.memoryEnabled ?? false}
          disabled={!settings || saving}
          onChange={(e) => void controller.settings.update({ memoryEnabled: e.target.checked })}
        />
        Use memory
      </label>
      <p className="muted">
        {settings?.memoryEnabled === false
          ? "Memory is off: nothing is remembered from your messages and no memories go into prompts."
          : "Macaron puts relevant memories into its prompts. Start a message with “remember that …” to add one."}
      </p>
      <AddMemory />
      {actionError && (
        <div className="form-error" role="alert">
          {actionError}
        </div>
      )}
      {memories === null && !listError && <p role="status">Loading memories…</p>}
      {listError && (
        <div className="form-error" role="alert">
          {listError}
        </div>
      )}
      {proposed.length > 0 && (
        <section aria-labelledby="memory-proposed">
          <h3 id="memory-proposed">Proposed</h3>
          <p className="muted">
            Macaron thinks these are worth remembering. Nothing is used until you keep it.
          </p>
          <DiscardAll count={proposed.length} />
          <ul className="memory-list" aria-labelledby="memory-proposed">
            {proposed.map((m) => (
              <MemoryItem key={m.id} memory={m} onNavigate={close} />
            ))}
          </ul>
        </section>
      )}
      {memories !== null && (
        <section aria-labelledby="memory-active">
          <h3 id="memory-active">Remembered</h3>
          {active.length === 0 ? (
            <p className="muted">Nothing yet. Add a memory above, or say “remember that …” in a chat.</p>
          ) : (
            <ul className="memory-list" aria-labelledby="memory-active">
              {active.map((m) => (
                <MemoryItem key={m.id} memory={m} onNavigate={close} />
              ))}
            </ul>
          )}
        </section>
      )}
    </Modal>
  );
}

/** "Discard all" proposals, after an inline confirmation naming how many. */
function DiscardAll({ count }: { count: number }) {
  const controller = useController();
  const busy = useMemoryState((s) => s.busyIds.length > 0);
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button type="button" className="button button--small" onClick={() => setConfirming(true)}>
        Discard all
      </button>
    );
  }
  return (
    <div className="memory-discard-all" role="group" aria-label="Discard all proposed memories">
      <span>
        Discard {count === 1 ? "the proposed memory" : `all ${count} proposed memories`}? Kept memories stay.
      </span>{" "}
      <ConfirmButtons
        confirmLabel={`Discard ${count}`}
        busy={busy}
        onConfirm={() => void controller.memory.discardProposed().then(() => setConfirming(false))}
        onCancel={() => setConfirming(false)}
      />
    </div>
  );
}

function AddMemory() {
  const controller = useController();
  const adding = useMemoryState((s) => s.adding);
  const [text, setText] = useState("");
  const id = useId();
  return (
    <form
      className="memory-add"
      onSubmit={(e) => {
        // The dialog is portalled; its form must not submit an owner's form.
        e.preventDefault();
        e.stopPropagation();
        void controller.memory.create(text).then((ok) => ok && setText(""));
      }}
    >
      <label htmlFor={id} className="visually-hidden">
        New memory
      </label>
      <input
        id={id}
        className="input"
        placeholder="Something Macaron should remember about you"
        value={text}
        maxLength={2000}
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit" className="button button--primary" disabled={adding || !text.trim()}>
        Add memory
      </button>
    </form>
  );
}
