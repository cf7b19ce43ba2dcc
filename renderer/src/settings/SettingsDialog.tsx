import type { KvPolicySetting } from "../../../electron/api";
import { useController, useSettingsState } from "../app/controller-context";
import { Modal } from "../app/Modal";

const KV_POLICY_LABELS: Record<KvPolicySetting, string> = {
  reevaluate: "Exact: re-evaluate history",
  "sequence-per-set": "One cache per adapter set",
  activated: "Activated LoRA (fastest, approximate)",
};

const KV_POLICY_HINTS: Record<KvPolicySetting, string> = {
  reevaluate: "Always exact; switching adapters re-reads the whole conversation, which takes longer on long chats.",
  "sequence-per-set": "Exact and fast when you switch back and forth, at the cost of more memory.",
  activated: "Keeps the cache across switches: fastest, but earlier text is not re-read with the new adapters.",
};

/** App settings; for now how the model's cache follows adapter switches. */
export function SettingsDialog() {
  const controller = useController();
  const settings = useSettingsState((s) => s.settings);
  const saving = useSettingsState((s) => s.saving);
  const error = useSettingsState((s) => s.error);

  return (
    <Modal title="Settings" onClose={() => controller.settings.setOpen(false)} className="settings-dialog">
      {settings === null && !error && <p role="status">Loading settings…</p>}
      {settings && (
        <div className="field">
          <label htmlFor="kv-policy">KV cache policy when adapters change</label>
          <select
            id="kv-policy"
            className="input"
            value={settings.kvPolicy}
            disabled={saving}
            aria-describedby="kv-policy-hint"
            onChange={(e) => void controller.settings.update({ kvPolicy: e.target.value as KvPolicySetting })}
          >
            {(Object.keys(KV_POLICY_LABELS) as KvPolicySetting[]).map((policy) => (
              <option key={policy} value={policy}>
                {KV_POLICY_LABELS[policy]}
              </option>
            ))}
          </select>
          <p id="kv-policy-hint" className="muted">
            {KV_POLICY_HINTS[settings.kvPolicy]}
          </p>
        </div>
      )}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </Modal>
  );
}
