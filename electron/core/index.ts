import type { Database } from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { ensureDemoModel } from "../../native/gguf/fixtures";
import { chatHandlers } from "./chat/chat-handlers";
import { TurnPipeline } from "./chat/turn-pipeline";
import { conversationHandlers } from "./conversations/conversation-handlers";
import { ConversationStore } from "./conversations/conversation-store";
import { MessageStore } from "./conversations/message-store";
import type { Core, CoreOptions } from "./core-types";
import { databasePath, openDatabase } from "./db/database";
import { dispatch, type Log } from "./dispatch";
import { EngineSupervisor } from "./engine/supervisor";
import type { EngineClient } from "./engine/types";
import { EventBus } from "./events/event-bus";
import type { Handlers } from "./handlers";
import { EngineQueue } from "./models/engine-queue";
import { ggufInspector } from "./models/gguf-inspector";
import { modelHandlers } from "./models/model-handlers";
import { type ModelInspector, ModelService } from "./models/model-service";
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
  const pipeline = new TurnPipeline({
    db,
    conversations,
    messages,
    engine,
    events,
    systemPrompt: parts.systemPrompt,
    defaultMaxTokens: parts.defaultMaxTokens,
    log,
  });
  const handlers: Handlers = {
    ...conversationHandlers({ conversations, messages, pipeline, events }),
    ...chatHandlers(pipeline),
    ...modelHandlers(models),
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

  let closing: Promise<void> | null = null;
  const core: Core = {
    dispatch: (method, input, ctx) => dispatch(handlers, method, input, ctx, log),
    subscribe: (listener) => events.subscribe(listener),
    engine,
    engineStatus: () => models.status(),
    close: () => {
      closing ??= (async () => {
        await pipeline.close();
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
