import type { Core } from "../core-types";
import { NO_TOKENS } from "../engine/supervisor";
import type { ContractTarget } from "./contract-runner";

/**
 * A running core as a contract target: its router and installed adapters resolve each case,
 * its engine answers (no streaming). The contract command, the cycle's cloud-side gate and the
 * demo benchmark evaluate through it.
 */
export function coreTarget(core: Pick<Core, "adapters" | "engine">): ContractTarget {
  return {
    resolve: (selection, text) => core.adapters.resolve(selection, text),
    generate: (history, options, signal) => core.engine.generate(history, options, NO_TOKENS, signal),
  };
}
