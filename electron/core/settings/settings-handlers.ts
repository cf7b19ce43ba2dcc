import type { DomainHandlers } from "../handlers";
import type { AppSettingsService } from "./app-settings";

export function settingsHandlers(settings: AppSettingsService): DomainHandlers<"settings"> {
  return {
    "settings.get": () => settings.get(),
    "settings.update": (change) => settings.update(change),
  };
}
