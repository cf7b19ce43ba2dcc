import type { DomainHandlers } from "../handlers";
import type { ModelLibrary } from "../hub/model-library";
import type { ModelService } from "./model-service";

export function modelHandlers(
  models: ModelService,
  library: Pick<ModelLibrary, "list" | "delete">,
): DomainHandlers<"models"> {
  return {
    "models.status": () => models.status(),
    "models.inspect": ({ path }) => models.inspect(path),
    "models.open": ({ path, settings }) => models.open(path, settings),
    "models.openDemo": () => models.openDemo(),
    "models.unload": () => models.unload(),
    "models.local": () => library.list(),
    "models.delete": ({ path }) => library.delete(path),
    "models.fit": ({ path, contextSize, gpuLayers }) => models.fit({ path }, { contextSize, gpuLayers }),
    "models.loadSettings": ({ path }) => models.settingsFor(path),
    "models.setLoadSettings": ({ path, settings }) => models.setSettingsFor(path, settings),
  };
}
