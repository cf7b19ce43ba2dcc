import { useEffect } from "react";
import type { AppSettings, KvPolicySetting } from "../../../electron/api";
import { useController, useSettingsState } from "../app/controller-context";
import { Modal } from "../app/Modal";
import { AdapterUpdates } from "./AdapterUpdates";
import { EngineBuildSettings } from "./EngineBuildSettings";
import { HubTokenSettings } from "./HubTokenSettings";
import { LocalServerSettings } from "./LocalServerSettings";
import { McpServersSettings } from "./McpServersSettings";
import { ReleaseHistory } from "./ReleaseHistory";

const KV_POLICY_LABELS: Record<KvPolicySetting, string> = {
  reevaluate: "Exact: re-evaluate history",
  "sequence-per-set": "One cache per adapter set",
  activated: "Activated LoRA (fastest, approximate)",
};

const KV_POLICY_HINTS: Record<KvPolicySetting, string> = {
  reevaluate:
    "Always exact; switching adapters re-reads the whole conversation, which takes longer on long chats.",
  "sequence-per-set": "Exact and fast when you switch back and forth, at the cost of more memory.",
  activated:
    "Keeps the cache across switches: fastest, but earlier text is not re-read with the new adapters.",
};

const THEME_LABELS: Record<AppSettings["theme"], string> = {
  system: "System (follows your computer)",
  light: "Light",
  dark: "Dark",
};

const CONTEXT_LABELS: Record<AppSettings["contextStrategy"], string> = {
  "sliding-window": "Leave out the oldest messages (sliding window)",
  summary: "Summarize the oldest messages",
};

/**
 * App settings: how the model's cache follows adapter switches, what long chats do, the
 * Agent's tools and MCP servers, the local API server, the Hugging Face token, the llama.cpp
 * build for this machine, adapter updates from the update server, and the release history.
 */
export function SettingsDialog() {
  const controller = useController();
  const settings = useSettingsState((s) => s.settings);
  const saving = useSettingsState((s) => s.saving);
  const error = useSettingsState((s) => s.error);
  // Opening re-reads what may have changed meanwhile (checks, promotions in the background).
  useEffect(() => {
    void controller.updates.load();
    void controller.releases.loadReleases();
  }, [controller]);

  return (
    <Modal title="Settings" onClose={() => controller.settings.setOpen(false)} className="settings-dialog">
      {settings === null && !error && <p role="status">Loading settings…</p>}
      {settings && (
        <div className="field">
          <label htmlFor="theme">Theme</label>
          {/* Not disabled while saving: the change shows at once (App applies the answer). */}
          <select
            id="theme"
            className="input"
            value={settings.theme}
            onChange={(e) =>
              void controller.settings.update({ theme: e.target.value as AppSettings["theme"] })
            }
          >
            {(Object.keys(THEME_LABELS) as Array<AppSettings["theme"]>).map((theme) => (
              <option key={theme} value={theme}>
                {THEME_LABELS[theme]}
              </option>
            ))}
          </select>
        </div>
      )}
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
      {settings && (
        <div className="field">
          <label htmlFor="context-strategy">When a conversation outgrows the context</label>
          <select
            id="context-strategy"
            className="input"
            value={settings.contextStrategy}
            disabled={saving}
            aria-describedby="context-strategy-hint"
            onChange={(e) =>
              void controller.settings.update({
                contextStrategy: e.target.value as AppSettings["contextStrategy"],
              })
            }
          >
            {(Object.keys(CONTEXT_LABELS) as Array<AppSettings["contextStrategy"]>).map((strategy) => (
              <option key={strategy} value={strategy}>
                {CONTEXT_LABELS[strategy]}
              </option>
            ))}
          </select>
          <p id="context-strategy-hint" className="muted">
            Each answer says when earlier messages were left out or summarized.
          </p>
        </div>
      )}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
      <McpServersSettings />
      <LocalServerSettings />
      <HubTokenSettings />
      <EngineBuildSettings />
      <AdapterUpdates />
      <ReleaseHistory />
    </Modal>
  );
}
