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
    "models.open": ({ path }) => models.open(path),
    "models.openDemo": () => models.openDemo(),
    // PLACEHOLDERS while issue 11 is being built.
    "models.local": todo,
    "models.delete": todo,
    "models.fit": todo,
    "models.loadSettings": todo,
    "models.setLoadSettings": todo,
  };
}
