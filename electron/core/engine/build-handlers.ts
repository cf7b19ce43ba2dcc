import type { DomainHandlers } from "../handlers";
import type { NativeBuild } from "./native-build";

/** engine.*: llama.cpp built for this machine (see NativeBuild). */
export function engineBuildHandlers(build: NativeBuild): DomainHandlers<"engine"> {
  return {
    "engine.buildStatus": () => build.status(),
    "engine.build": () => build.build(),
    "engine.usePrebuilt": () => build.usePrebuilt(),
  };
}
