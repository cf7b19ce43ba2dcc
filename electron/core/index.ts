import type { Database } from "better-sqlite3";
import { ensurePrivateDirSync } from "../../common/files/private-files";
import { resolve } from "node:path";
import { ApiError, type DatabaseStatus, type EngineStatus, methodNames } from "../api";
import { type ServiceParts, type Services, startServices } from "./core-services";
import type { Core, CoreOptions, LocalApiFactory } from "./core-types";
import { DatabaseFile } from "./db/database-file";
import type { Migration } from "./db/migrations";
import { dispatch, type Log } from "./dispatch";
import { EngineSupervisor } from "./engine/supervisor";
import { GenerationService } from "./models/generation-service";
import type { EngineClient } from "./engine/types";
import { EventBus } from "./events/event-bus";
import { FEEDBACK_ENDPOINT_ENV } from "./feedback/feedback-endpoint";
import { REGISTRY_URL_ENV } from "./releases/adapter-updates";
import type { DomainHandlers, Handlers } from "./handlers";
import { UnavailableEngine } from "./unavailable-engine";

export type {
  Core,
  CoreOptions,
  CallContext,
  EventListener,
  LocalApiFactory,
  LocalApiHandle,
  LocalApiOptions,
} from "./core-types";
export { DatabaseFromFutureError, DatabaseOpenError } from "./db/errors";

/** What assembleCore takes: CoreOptions without the spawner, plus seams for tests. */
export interface CoreParts extends ServiceParts {
  log?: Log;
  /** The schema migrations (tests inject a failing one). */
  migrations?: readonly Migration[];
  /**
   * Called with each database connection core opens, before its services start (tests set
   * per-connection pragmas here, e.g. `max_page_count` to fill the disk).
   */
  onDatabase?: (db: Database) => void;
  /** The local API server's factory (CoreOptions.localApi); wins over ServiceParts.localApi. */
  localApiFactory?: LocalApiFactory;
}

/**
 * Start core: open the database in `dataDir`, start the supervised engine, load the initial
 * model (or reopen the last one in the background). A database that cannot be used (damaged,
 * not a database, from a newer Macaron) does not stop core: it starts degraded, see
 * assembleCore.
 */
export async function createCore(options: CoreOptions): Promise<Core> {
  return assembleCore(
    {
      dataDir: options.dataDir,
      initialModel: options.initialModel,
      deferStartup: options.deferStartup,
      defaultMaxTokens: options.defaultMaxTokens,
      defaultTemperature: options.defaultTemperature,
      appVersion: options.appVersion,
      adaptersDir: options.adaptersDir,
      // Feedback goes nowhere without an explicit endpoint (and the user's consent).
      feedbackEndpoint: options.feedbackEndpoint ?? process.env[FEEDBACK_ENDPOINT_ENV],
      registryUrl: options.registryUrl ?? process.env[REGISTRY_URL_ENV],
      demoDir: options.demoDir,
      tokenStore: options.tokenStore,
      mcpServers: options.mcpServers,
      localApiFactory: options.localApi,
      startNodeChild: options.startNodeChild,
    },
    // Conversations' KV caches survive restarts in <dataDir>/kv (see native/engine/kv-state-store.ts).
    () => new EngineSupervisor(options.spawnEngine, { stateDir: resolve(options.dataDir, "kv") }),
  );
}

const IDLE: EngineStatus = { state: "idle", model: null, error: null, gpu: null, progress: null };

/**
 * Build core from its parts (createCore with the real engine; tests with a fake). `makeEngine`
 * is called only once the database is usable. When it is not, core starts degraded:
 * database.status says why (state "corrupt" or "from_future") and lists the backups, every
 * other method fails with "database_unavailable", and database.restoreBackup/startFresh move
 * the bad file aside (kept) and bring the services up without a restart.
 */
export async function assembleCore(parts: CoreParts, makeEngine: () => EngineClient): Promise<Core> {
  const log: Log = parts.log ?? ((message, err) => console.error(`[core] ${message}`, err ?? ""));
  // The data folder holds the conversations: 0700 (see common/files/private-files.ts).
  ensurePrivateDirSync(parts.dataDir);
  const events = new EventBus(log);
  const file = new DatabaseFile({ dataDir: parts.dataDir, log, migrations: parts.migrations });
  // The local API server serves this core: bound here, called only once `core` exists (see below).
  const factory = parts.localApiFactory;
  const serviceParts: ServiceParts = factory
    ? { ...parts, localApi: (options) => factory(core, options) }
    : parts;
  const db = await file.open();
  if (db) parts.onDatabase?.(db);
  let services: Services | null = db ? await startServices(db, serviceParts, makeEngine, events, log) : null;
  const unavailableEngine = new UnavailableEngine(() => file.unavailable());

  // While the database is unusable every method but database.* answers with the reason.
  const refuse = (): never => {
    throw file.unavailable();
  };
  const degraded = Object.fromEntries(methodNames.map((m) => [m, refuse])) as unknown as Handlers;

  let recovering: Promise<DatabaseStatus> | null = null;
  const recover = (open: () => Promise<Database | null>): Promise<DatabaseStatus> => {
    if (services) throw new ApiError("invalid_input", "The database works: there is nothing to repair.");
    if (recovering) throw new ApiError("busy", "The database is being repaired already.");
    recovering = (async () => {
      const opened = await open();
      if (opened) parts.onDatabase?.(opened);
      // No restart needed: the services start on the repaired database right away.
      // A repair waits for its start-up (deferStartup is for the first start only): until then
      // `services` stays null and a second repair is refused as busy.
      if (opened)
        services = await startServices(
          opened,
          { ...serviceParts, deferStartup: false },
          makeEngine,
          events,
          log,
        );
      await services?.localServer.start();
      return file.status();
    })().finally(() => {
      recovering = null;
    });
    return recovering;
  };
  const databaseHandlers: DomainHandlers<"database"> = {
    "database.status": () => file.status(),
    "database.restoreBackup": ({ id }) => recover(() => file.restoreBackup(id)),
    "database.startFresh": () => recover(() => file.startFresh()),
  };

  let started: Promise<void> = Promise.resolve();
  let closing: Promise<void> | null = null;
  const core: Core = {
    dispatch: (method, input, ctx) =>
      dispatch({ ...(services?.handlers ?? degraded), ...databaseHandlers }, method, input, ctx, log),
    subscribe: (listener) => events.subscribe(listener),
    get engine() {
      return services?.engine ?? unavailableEngine;
    },
    // One for core's life: /v1 requests keep their order across a database repair.
    generation: new GenerationService(() => services?.engine ?? unavailableEngine),
    adapters: {
      listEnabled: async () => (services ? services.adapters.listEnabled() : []),
      resolve: (selection, text) =>
        services ? services.adapters.resolve(selection, text) : Promise.reject(file.unavailable()),
    },
    engineStatus: () => services?.engineStatus() ?? IDLE,
    get started() {
      return started;
    },
    close: () => {
      closing ??= (async () => {
        await recovering?.catch(() => undefined);
        await services?.close();
        events.clear();
      })();
      return closing;
    },
  };
  // Serve again if the user left the local API server on, once start-up is done (it serves the
  // initial model); a taken port is reported in its status. Awaited unless deferStartup: then
  // Core.started settles after it.
  const first = services;
  if (first) {
    started = first.started.then(async () => {
      await first.localServer.start();
    });
    started.catch(() => undefined);
  }
  if (!parts.deferStartup) await started;
  return core;
}
