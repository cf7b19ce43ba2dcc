import { useMemo, useState } from "react";
import { useAdapterState, useAppState, useConversationController } from "../app/controller-context";
import { currentAdapters } from "../state/app-store";
import {
  adapterNames,
  describeSelection,
  pickerValue,
  selectableAdapters,
  selectionFromPicker,
} from "./adapter-logic";
import { BlendDialog } from "./BlendDialog";

const OPEN_BLEND = "open-blend";

/**
 * The conversation's adapters, beside the composer: the router, the base model alone, one
 * pinned adapter, or a blend (edited in a dialog). It can change while an answer streams:
 * the change applies from the next turn.
 */
export function AdapterPicker() {
  const conversations = useConversationController();
  const selection = useAppState(currentAdapters);
  const adapters = useAdapterState((s) => s.adapters);
  const [blendOpen, setBlendOpen] = useState(false);
  const names = useMemo(() => adapterNames(adapters), [adapters]);
  const choices = selectableAdapters(adapters);
  const value = pickerValue(selection);
  // A pin on an adapter that is now disabled or removed still shows what the conversation has.
  const pinnedMissing =
    typeof selection === "object" && "pinned" in selection && !choices.some((a) => a.id === selection.pinned);

  return (
    <div className="adapter-picker">
      <label htmlFor="adapter-picker">Adapters</label>
      <select
        id="adapter-picker"
        className="input input--small"
        value={value}
        title="Which specialist adapters answer in this conversation"
        onChange={(e) => {
          if (e.target.value === OPEN_BLEND) {
            setBlendOpen(true);
            return;
          }
          const next = selectionFromPicker(e.target.value);
          if (next) void conversations.setAdapters(next);
        }}
      >
        <option value="auto">Auto (router)</option>
        <option value="base">Base model only</option>
        {choices.map((a) => (
          <option key={a.id} value={`pin:${a.id}`}>
            {a.name}
          </option>
        ))}
        {pinnedMissing && (
          <option value={value}>{`${describeSelection(selection, names)} (unavailable)`}</option>
        )}
        {value === "blend" && <option value="blend">{describeSelection(selection, names)}</option>}
        <option value={OPEN_BLEND} disabled={choices.length === 0}>
          Blend…
        </option>
      </select>
      {blendOpen && (
        <BlendDialog
          adapters={choices}
          selection={selection}
          onApply={(next) => {
            setBlendOpen(false);
            void conversations.setAdapters(next);
          }}
          onClose={() => setBlendOpen(false)}
        />
      )}
    </div>
  );
}
