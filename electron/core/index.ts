import type { Database } from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { ensureDemoModel } from "../../native/gguf/fixtures";
import packageJson from "../../package.json";
import { adapterHandlers } from "./adapters/adapter-handlers";
import { AdapterRegistry } from "./adapters/adapter-registry";
import { AdapterRouting } from "./adapters/adapter-routing";
import { AdapterStore } from "./adapters/adapter-store";
import { installAdaptersFrom, installDemoAdapters } from "./adapters/bundled-adapters";
import { SqliteRouterStore } from "./adapters/sqlite-router-store";
import { chatHandlers } from "./chat/chat-handlers";
import { DEFAULT_SYSTEM_PROMPT, TurnPipeline } from "./chat/turn-pipeline";
import { conversationHandlers } from "./conversations/conversation-handlers";
import { ConversationStore } from "./conversations/conversation-store";
import { MessageStore } from "./conversations/message-store";
import type { EventPayload } from "../api";
import type { Core, CoreOptions } from "./core-types";
import { databasePath, openDatabase } from "./db/database";
import { dispatch, type Log } from "./dispatch";
import { EngineSupervisor } from "./engine/supervisor";
import type { EngineClient } from "./engine/types";
import { EventBus } from "./events/event-bus";
import type { Handlers } from "./handlers";
import { harnessParts, harnessVersion } from "./harness";
import { EngineQueue } from "./models/engine-queue";
import { ggufInspector } from "./models/gguf-inspector";
import { modelHandlers } from "./models/model-handlers";
import { ModelFingerprint } from "./models/model-fingerprint";
import { type ModelInspector, ModelService } from "./models/model-service";
import { AdapterRouter } from "./router";
import { AppSettingsService } from "./settings/app-settings";
import { settingsHandlers } from "./settings/settings-handlers";
import { SettingsStore } from "./settings/settings-store";

export type { Core, CoreOptions, CallContext, EventListener } from "./core-types";
export { DatabaseFromFutureError, DatabaseOpenError } from "./db/errors";

/** What assembleCore takes: CoreOptions without the spawner, plus seams for tests. */
export interface CoreParts {
  dataDir: string;
  initialModel?: string;
  defaultMaxTokens?: number;
  systemPrompt?: string;
  inspector?: ModelInspector;
  ensureDemoModel?: (dir: string) => Promise<string>;
  /** Install the demo adapters when the demo model is opened with none installed (default true). */
  demoAdapters?: boolean;
  appVersion?: string;
  adaptersDir?: string;
  log?: Log;
}

/**
 * Start core: open the database in `dataDir`, start the supervised engine, load the initial
 * model (or reopen the last one in the background). Rejects when the database cannot be
 * opened (DatabaseOpenError, DatabaseFromFutureError); the engine is not started then.
 */
export async function createCore(options: CoreOptions): Promise<Core> {
  return assembleCore(
    {
      dataDir: options.dataDir,
      initialModel: options.initialModel,
      defaultMaxTokens: options.defaultMaxTokens,
      appVersion: options.appVersion,
      adaptersDir: options.adaptersDir,
    },
    () => new EngineSupervisor(options.spawnEngine),
  );
}

/**
 * Build core from its parts (createCore with the real engine; tests with a fake). `makeEngine`
 * is called only after the database opened, so a refused database never starts an engine.
 */
export async function assembleCore(parts: CoreParts, makeEngine: () => EngineClient): Promise<Core> {
  const log: Log = parts.log ?? ((message, err) => console.error(`[core] ${message}`, err ?? ""));
  mkdirSync(parts.dataDir, { recursive: true });
  const db: Database = openDatabase(databasePath(parts.dataDir));

  const conversations = new ConversationStore(db);
  const messages = new MessageStore(db);
  const settings = new SettingsStore(db);
  const interrupted = messages.markStreamingInterrupted();
  if (interrupted > 0)
    log(`${interrupted} answer(s) were cut off by the last shutdown; marked interrupted`, null);

  let engine: EngineClient;
  try {
    // One line for all engine work: chat turns and the /v1 endpoints share it.
    engine = new EngineQueue(makeEngine());
  } catch (err) {
    db.close();
    throw err;
  }
  const events = new EventBus(log);
  const models = new ModelService({
    engine,
    events,
    settings,
    inspector: parts.inspector ?? ggufInspector,
    ensureDemoModel: parts.ensureDemoModel ?? ensureDemoModel,
    dataDir: parts.dataDir,
    log,
  });
  const systemPrompt = parts.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  const appSettings = new AppSettingsService(settings);
  const kvPolicy = () => appSettings.get().kvPolicy;
  const fingerprint = new ModelFingerprint(settings);
  const registry = new AdapterRegistry({
    store: new AdapterStore(db),
    dataDir: parts.dataDir,
    events,
    basePath: () => engine.loaded?.path ?? null,
    log,
  });
  const router = new AdapterRouter({
    embed: (texts) => engine.embed(texts),
    // Embeddings are cached per model: by its sha256 once known, by its path until then.
    modelKey: () => {
      const path = engine.loaded?.path;
      return path ? (fingerprint.knownSha256(path) ?? path) : "no-model";
    },
    store: new SqliteRouterStore(db),
  });
  const routing = new AdapterRouting({ registry, router, log });
  const pipeline = new TurnPipeline({
    db,
    conversations,
    messages,
    engine,
    events,
    systemPrompt: parts.systemPrompt,
    defaultMaxTokens: parts.defaultMaxTokens,
    routing,
    harnessVersion: harnessVersion(parts.appVersion ?? packageJson.version, harnessParts(systemPrompt)),
    kvPolicy,
    modelHashes: fingerprint,
    log,
  });
  // After each load: hash the model file (turn records) in the background, never per turn;
  // then warm the router under that hash (its embedding cache is keyed by it).
  const unsubscribeLoads = events.subscribe((event, payload) => {
    if (event !== "engine.status") return;
    const status = payload as EventPayload<"engine.status">;
    if (status.state !== "ready" || !status.model) return;
    // Whether each adapter fits depends on the base: the Adapters panel must refresh.
    if (registry.count > 0) events.emit("adapters.changed", {});
    fingerprint
      .sha256(status.model.path)
      .then(() => routing.prepare())
      .catch((err: unknown) => log("could not hash the model or prepare the router", err));
  });
  const models_ = modelHandlers(models);
  const handlers: Handlers = {
    ...conversationHandlers({ conversations, messages, pipeline, events, routing }),
    ...chatHandlers(pipeline),
    ...models_,
    "models.openDemo": async (input, ctx) => {
      const status = await models_["models.openDemo"](input, ctx);
      if (parts.demoAdapters !== false) {
        await installDemoAdapters(registry, parts.dataDir).catch((err: unknown) =>
          log("could not install the demo adapters", err),
        );
      }
      return status;
    },
    ...adapterHandlers(registry, { engine, registry, systemPrompt, kvPolicy }),
    ...settingsHandlers(appSettings),
  };

  let startup: Promise<void>;
  if (parts.initialModel) {
    // An explicit --model: the caller wants it loaded before serving. A bad file is reported
    // through the status (and the log); core still starts so the user can pick another.
    startup = models.open(parts.initialModel).then(
      () => undefined,
      (err: unknown) => log(`could not open ${parts.initialModel}`, err),
    );
    await startup;
  } else {
    // The remembered model loads in the background: the UI can show its progress.
    startup = models.restoreLastModel();
  }
  if (parts.adaptersDir) {
    // After the initial model, so that each adapter is checked against it.
    const dir = parts.adaptersDir;
    await installAdaptersFrom(registry, dir, log).catch((err: unknown) =>
      log(`could not read the adapters folder ${dir}`, err),
    );
  }

  let closing: Promise<void> | null = null;
  const core: Core = {
    dispatch: (method, input, ctx) => dispatch(handlers, method, input, ctx, log),
    subscribe: (listener) => events.subscribe(listener),
    engine,
    adapters: {
      listEnabled: async () =>
        (await registry.list()).filter((a) => a.enabled && a.fitsLoadedModel !== false),
      resolve: async (selection, text) => {
        const resolved = await routing.resolve(selection, text);
        return { routing: resolved.routing, adapters: resolved.adapters, kvPolicy: kvPolicy() };
      },
    },
    engineStatus: () => models.status(),
    close: () => {
      closing ??= (async () => {
        await pipeline.close();
        unsubscribeLoads();
        router.dispose();
        await startup.catch(() => undefined);
        await models.close();
        await engine.close().catch((err: unknown) => log("closing the engine failed", err));
        events.clear();
        db.close();
      })();
      return closing;
    },
  };
  return core;
}
