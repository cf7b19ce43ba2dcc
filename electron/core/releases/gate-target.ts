import { setMaxListeners } from "node:events";
import type { AdapterRegistry } from "../adapters/adapter-registry";
import { AdapterRouting } from "../adapters/adapter-routing";
import type { InstalledAdapter } from "../adapters/adapter-store";
import { type ContractTarget, runContract } from "../contract/contract-runner";
import type { CodeSandbox } from "../contract/sandbox/sandbox";
import type { Contract } from "../contract/contract-schema";
import type { Log } from "../dispatch";
import type { EngineQueue } from "../models/engine-queue";
import type { AdapterRouter } from "../router";
import {
  decodeRouterArtifact,
  routerInLineage,
  UnsupportedRouterArtifactError,
} from "../router/routing-head";
import { ApiError } from "../../api";
import type { AdapterReleasesDeps } from "./adapter-releases";
import type { AdapterVersion } from "./release-store";
import { judgeTaughtRun, taughtContract, taughtOf, withTaught } from "./taught-suite";

export interface GateEvaluatorDeps {
  registry: AdapterRegistry;
  router: AdapterRouter;
  /** The engine line: the gate generates at background priority, so chat never waits for it. */
  engine: EngineQueue;
  contract: Contract;
  systemPrompt: string;
  log: Log;
  /** Where `unitTests` cases run; default the process-wide sandbox (a child_process fork). */
  sandbox?: CodeSandbox;
}

/** The installed adapter `a` as it would be with `v` live (the user's scale is kept). */
function withVersion(a: InstalledAdapter, v: AdapterVersion): InstalledAdapter {
  const { name, domain, description, releaseNotes: _notes, ...manifest } = v.manifest;
  return {
    ...a,
    name,
    domain,
    description,
    version: v.version,
    sha256: v.sha256,
    sizeBytes: v.sizeBytes,
    filePath: v.filePath,
    manifest,
  };
}

/**
 * A view of the installed adapters for the router: every one enabled (the contract judges the
 * models, not the user's switches), with `candidate` in place of its live version.
 */
function view(
  registry: AdapterRegistry,
  candidate: AdapterVersion | null,
): Pick<AdapterRegistry, "withFits" | "countUsage"> {
  return {
    withFits: async () => {
      const all = await registry.withFits();
      return Promise.all(
        all.map(async (u) => {
          if (candidate && u.adapter.id === candidate.adapterId) {
            const adapter = { ...withVersion(u.adapter, candidate), enabled: true };
            return { adapter, fit: await registry.fitOf(adapter) };
          }
          return { adapter: { ...u.adapter, enabled: true }, fit: u.fit };
        }),
      );
    },
    countUsage: () => undefined,
  };
}

/**
 * The gate's evaluation: the contract against the live base and harness with the candidate in
 * place of its live version, and against the live set as the baseline of the paired
 * comparison (and of the smoke contract's `regression` cases).
 */
export function gateEvaluator(deps: GateEvaluatorDeps): AdapterReleasesDeps["evaluate"] {
  return async (candidate, onProgress, outer) => {
    // A version whose router artifact is corrupt never goes live: the live router stays. One
    // made for a feature extraction this build does not have (a later build's head) is not
    // corrupt: the version is judged as usual and the app routes with the kernel classifier.
    const router = routerInLineage(candidate.manifest.lineage);
    if (router !== undefined) {
      try {
        decodeRouterArtifact(router);
      } catch (err) {
        if (err instanceof UnsupportedRouterArtifactError)
          deps.log(
            `Version ${candidate.version} of "${candidate.adapterId}" carries a router this build cannot use: routing with the kernel classifier`,
            err,
          );
        else
          throw new ApiError(
            "invalid_input",
            `Version ${candidate.version} of "${candidate.adapterId}" carries an unusable router: ${(err as Error).message}`,
          );
      }
    }
    // One signal per evaluation: every generation listens to it (more than Node's default 10),
    // and it must not pile listeners onto the service-wide signal.
    const local = new AbortController();
    setMaxListeners(0, local.signal);
    const onAbort = (): void => local.abort();
    outer.addEventListener("abort", onAbort, { once: true });
    const signal = local.signal;
    const target = (c: AdapterVersion | null): ContractTarget => {
      const routing = new AdapterRouting({
        registry: view(deps.registry, c),
        router: deps.router,
        log: deps.log,
      });
      return {
        resolve: (selection, text) => routing.resolve(selection, text),
        generate: (history, options, s) => deps.engine.generateInBackground(history, options, s ?? signal),
      };
    };
    const run = (contract: Contract) =>
      runContract(contract, {
        target: target(candidate),
        baseline: target(null),
        // Both sides run on this engine and base: a case that resolves to the same adapter
        // files on both (another domain's pin) is answered once.
        shareAnswers: true,
        candidate: { adapterId: candidate.adapterId, version: candidate.version },
        systemPrompt: deps.systemPrompt,
        sandbox: deps.sandbox,
        onProgress,
        signal,
      });
    try {
      const report = await run(deps.contract);
      // The taught suites the version carries (taught-suite.ts): its own cycle's and every
      // earlier one, judged right or wrong against the live version on the same cases.
      const lineage = candidate.manifest.lineage as { details?: unknown };
      const suites = taughtOf(lineage.details);
      if (suites.length === 0) return report;
      const own = suites.find((s) => s.version === candidate.version)?.id ?? null;
      return withTaught(report, judgeTaughtRun(await run(taughtContract(suites)), suites, own));
    } finally {
      outer.removeEventListener("abort", onAbort);
    }
  };
}
