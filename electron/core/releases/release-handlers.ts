import { resolve } from "node:path";
import { ApiError } from "../../api";
import { checkAdapterFile } from "../adapters/adapter-files";
import { readManifestBeside } from "../adapters/manifest-reader";
import type { AdapterRegistry } from "../adapters/adapter-registry";
import type { Log } from "../dispatch";
import type { DomainHandlers, Handlers } from "../handlers";
import type { AdapterReleases } from "./adapter-releases";
import type { AdapterUpdates } from "./adapter-updates";

/** The adapters.* methods served here rather than by adapter-handlers.ts. */
export type ReleaseAdapterMethod =
  | "adapters.versions"
  | "adapters.installVersion"
  | "adapters.promote"
  | "adapters.rollback"
  | "adapters.prune"
  | "adapters.checkUpdates";

export interface ReleaseHandlerDeps {
  releases: AdapterReleases;
  updates: AdapterUpdates;
  registry: AdapterRegistry;
  log: Log;
}

export function releaseHandlers(
  deps: ReleaseHandlerDeps,
): Pick<Handlers, ReleaseAdapterMethod> & DomainHandlers<"releases"> & DomainHandlers<"updates"> {
  const { releases, updates, registry, log } = deps;
  return {
    "adapters.versions": ({ id }) => releases.versions(id),
    // A new id installs directly (first version, live after validation); a new version of an
    // installed id is staged and goes through the gate in the background.
    "adapters.installVersion": async ({ path }) => {
      const file = resolve(path);
      // A FIFO, device or folder is refused at once, before its manifest is looked for.
      await checkAdapterFile(file, path);
      const manifest = await readManifestBeside(file);
      if (!manifest) {
        throw new ApiError(
          "invalid_input",
          "A new version needs its manifest (id and version) beside the file, as <name>.json.",
        );
      }
      if (!registry.get(manifest.id)) {
        const installed = await registry.install(file);
        return releases.versions(installed.id)[0]!;
      }
      const staged = await releases.stage(file, manifest, "file");
      releases
        .gate(staged.adapterId, staged.version)
        .catch((err: unknown) => log(`gate of ${staged.adapterId} ${staged.version} failed`, err));
      return releases.versions(staged.adapterId).find((v) => v.version === staged.version)!;
    },
    "adapters.promote": ({ id, version }) => releases.gate(id, version),
    "adapters.rollback": ({ id, version }) => releases.rollback(id, version),
    "adapters.prune": ({ id }) => releases.prune(id),
    "adapters.checkUpdates": ({ wait }) => updates.check({ wait }),
    "updates.get": () => updates.settings(),
    "updates.configure": (change) => updates.configure(change),
    "releases.list": ({ limit }) => releases.releases(limit ?? 100),
    "releases.forMessage": ({ messageId }) => releases.releaseForMessage(messageId),
  };
}
