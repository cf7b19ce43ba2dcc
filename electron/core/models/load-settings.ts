/**
 * How each model loads, remembered per model in the settings store: by the file's sha256 once
 * it is known (a renamed or moved copy keeps its settings), else by its path. A model without
 * remembered settings loads with its profile's defaults (profiles.ts), else the engine's
 * (context from the fit estimate, up to 8k and the training context).
 */
import { LoadSettings, type ModelProfile } from "../../api";
import type { FitOptions, FitResult, LoadOptions } from "../engine/types";
import type { SettingsStore } from "../settings/settings-store";
import { ENGINE_DEFAULTS, matchProfile } from "./profiles";

export const LOAD_SETTINGS_KEY = "models.loadSettings";
/** Models remembered; the least recently saved go when there are more. */
const MAX_REMEMBERED = 64;

interface Entry {
  path: string;
  sha256: string | null;
  settings: LoadSettings;
  savedAt: number;
}

export interface ResolvedLoadSettings {
  settings: LoadSettings;
  remembered: boolean;
  profile: ModelProfile | null;
}

export interface ModelLoadSettingsDeps {
  settings: SettingsStore;
  /** The model file's sha256 when already known (ModelFingerprint), else null. */
  sha256Of: (path: string) => string | null;
  /** The engine's fit estimate of a local file; null when the engine cannot estimate (fakes). */
  fit: ((path: string, options: FitOptions) => Promise<FitResult>) | null;
  log?: (message: string, err: unknown) => void;
}

/** LoadSettings → the engine's load options: null ("decide at load time") is left out. */
export function toLoadOptions(settings: LoadSettings): LoadOptions {
  const options: LoadOptions = {
    gpuLayers: settings.gpuLayers,
    flashAttention: settings.flashAttention,
    kvCacheType: settings.kvCacheType,
  };
  if (settings.contextSize !== null) options.contextSize = settings.contextSize;
  if (settings.batchSize !== null) options.batchSize = settings.batchSize;
  if (settings.threads !== null) options.threads = settings.threads;
  return options;
}

export class ModelLoadSettings {
  private readonly log: (message: string, err: unknown) => void;

  constructor(private readonly deps: ModelLoadSettingsDeps) {
    this.log = deps.log ?? console.error;
  }

  /** The settings remembered for `path` (by its sha256 when known, else by path), or null. */
  remembered(path: string): LoadSettings | null {
    return this.find(path)?.settings ?? null;
  }

  /** Remember `settings` for the model at `path`; returns them. */
  remember(path: string, settings: LoadSettings): LoadSettings {
    const valid = LoadSettings.parse(settings);
    const sha256 = this.deps.sha256Of(path);
    const entries = this.entries().filter(
      (e) => !(e.path === path || (sha256 !== null && e.sha256 === sha256)),
    );
    entries.push({ path, sha256, settings: valid, savedAt: Date.now() });
    this.deps.settings.set(LOAD_SETTINGS_KEY, entries.slice(-MAX_REMEMBERED));
    return valid;
  }

  /**
   * The settings `path` loads with: remembered ones, else its profile's defaults for this
   * machine, else the engine's. `withProfile`: also name the profile when settings are
   * remembered (costs a fit estimate; a load does not need it).
   */
  async resolve(path: string, withProfile = true): Promise<ResolvedLoadSettings> {
    const remembered = this.remembered(path);
    if (remembered && !withProfile) return { settings: remembered, remembered: true, profile: null };
    const matched = await this.profileDefaults(path);
    if (remembered) return { settings: remembered, remembered: true, profile: matched?.profile ?? null };
    return {
      settings: matched?.defaults ?? ENGINE_DEFAULTS,
      remembered: false,
      profile: matched?.profile ?? null,
    };
  }

  private async profileDefaults(
    path: string,
  ): Promise<{ profile: ModelProfile; defaults: LoadSettings } | null> {
    const fit = this.deps.fit;
    if (!fit) return null;
    let estimate: FitResult;
    try {
      estimate = await fit(path, {});
    } catch (err) {
      this.log(`could not estimate ${path} for its profile; loading with the engine's defaults`, err);
      return null;
    }
    const profile = matchProfile(estimate.model);
    if (!profile) return null;
    return profile.resolve(estimate, (options) => fit(path, options));
  }

  private find(path: string): Entry | undefined {
    const sha256 = this.deps.sha256Of(path);
    const entries = this.entries();
    return (
      (sha256 !== null ? entries.find((e) => e.sha256 === sha256) : undefined) ??
      entries.find((e) => e.path === path)
    );
  }

  /** The stored entries that still read as valid (a bad one is dropped, never fatal). */
  private entries(): Entry[] {
    const value = this.deps.settings.get(LOAD_SETTINGS_KEY);
    if (!Array.isArray(value)) return [];
    const entries: Entry[] = [];
    for (const raw of value as unknown[]) {
      if (typeof raw !== "object" || raw === null) continue;
      const e = raw as Partial<Entry>;
      const settings = LoadSettings.safeParse(e.settings);
      if (typeof e.path !== "string" || !settings.success) continue;
      entries.push({
        path: e.path,
        sha256: typeof e.sha256 === "string" ? e.sha256 : null,
        settings: settings.data,
        savedAt: typeof e.savedAt === "number" ? e.savedAt : 0,
      });
    }
    return entries;
  }
}
