import type { DomainHandlers } from "../handlers";
import { compareAdapter, type AdapterCompareDeps } from "./adapter-compare";
import type { AdapterRegistry } from "./adapter-registry";
import type { ReleaseAdapterMethod } from "../releases/release-handlers";

/** The adapters.* methods of installed adapters; versions and updates are in releases/release-handlers.ts. */
export function adapterHandlers(
  registry: AdapterRegistry,
  compare: AdapterCompareDeps,
): Omit<DomainHandlers<"adapters">, ReleaseAdapterMethod> {
  return {
    "adapters.list": () => registry.list(),
    "adapters.install": ({ path }) => registry.install(path),
    "adapters.update": ({ id, enabled, scale }) => registry.update(id, { enabled, scale }),
    "adapters.remove": async ({ id }) => ({ removed: await registry.remove(id) }),
    "adapters.compare": (input) => compareAdapter(compare, input),
  };
}
