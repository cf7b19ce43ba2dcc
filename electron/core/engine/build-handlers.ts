import { ApiError } from "../../api";
import type { DomainHandlers } from "../handlers";

// PLACEHOLDER while the build for this machine is being built (issue 11).
const todo = (): never => {
  throw new ApiError("internal", "Building llama.cpp for this machine is not built yet.");
};

export function engineBuildHandlers(): DomainHandlers<"engine"> {
  return { "engine.buildStatus": todo, "engine.build": todo, "engine.usePrebuilt": todo };
}
