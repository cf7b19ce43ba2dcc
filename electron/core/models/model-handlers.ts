import type { DomainHandlers } from "../handlers";
import type { ModelService } from "./model-service";

export function modelHandlers(models: ModelService): DomainHandlers<"models"> {
  return {
    "models.status": () => models.status(),
    "models.inspect": ({ path }) => models.inspect(path),
    "models.open": ({ path }) => models.open(path),
    "models.openDemo": () => models.openDemo(),
  };
}
