import { ApiError } from "../../api";
import type { DomainHandlers } from "../handlers";
import type { ModelService } from "./model-service";

const todo = (): never => {
  throw new ApiError("internal", "Not built yet.");
};

export function modelHandlers(models: ModelService): DomainHandlers<"models"> {
  return {
    "models.status": () => models.status(),
    "models.inspect": ({ path }) => models.inspect(path),
    "models.open": ({ path, settings }) => models.open(path, settings),
    "models.openDemo": () => models.openDemo(),
    // PLACEHOLDERS while issue 11 is being built.
    "models.local": todo,
    "models.delete": todo,
    "models.fit": ({ path, contextSize, gpuLayers }) => models.fit({ path }, { contextSize, gpuLayers }),
    "models.loadSettings": ({ path }) => models.settingsFor(path),
    "models.setLoadSettings": ({ path, settings }) => models.setSettingsFor(path, settings),
  };
}
