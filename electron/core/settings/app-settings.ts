import { AppSettings, type KvPolicySetting } from "../../api";
import type { SettingsStore } from "./settings-store";

/**
 * Default KV policy. bench/results/adapters-tiny.json (the engine's adapter benchmark) measured
 * the time to first token after an adapter switch: with a 2k-token history "reevaluate" took
 * 1.79× a turn without switch, "sequence-per-set" 0.26× (its cached sequence per adapter set is
 * reused) while staying exact; "activated" is not exact for attention adapters. Hence
 * sequence-per-set: exact like reevaluate, and far faster when the router alternates adapters.
 */
export const DEFAULT_KV_POLICY: KvPolicySetting = "sequence-per-set";

const KEY = "app.settings";

/** The user's app settings (AppSettings), stored as one JSON value in the settings table. */
export class AppSettingsService {
  constructor(private readonly store: SettingsStore) {}

  /** The current settings; unknown or damaged stored values fall back to the defaults. */
  get(): AppSettings {
    const stored = this.store.get(KEY);
    const defaults: AppSettings = {
      kvPolicy: DEFAULT_KV_POLICY,
      memoryEnabled: true,
      contextStrategy: "sliding-window",
      theme: "system",
    };
    if (typeof stored !== "object" || stored === null) return defaults;
    const merged = AppSettings.safeParse({ ...defaults, ...stored });
    return merged.success ? merged.data : defaults;
  }

  /** Apply a partial change (already validated by the API schema) and return the result. */
  update(change: Partial<AppSettings>): AppSettings {
    const next = AppSettings.parse({ ...this.get(), ...change });
    this.store.set(KEY, next);
    return next;
  }
}
