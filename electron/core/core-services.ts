/**
 * Everything core runs on an open database: stores, engine, models, adapters, router, chat,
 * memory, search and transfer. index.ts starts it once the database is usable (at start-up,
 * or after the user restored a backup or started fresh).
 */
import { join } from "node:path";
import type { Database } from "better-sqlite3";
import { demoAdapterFiles, ensureDemoModel } from "../../native/gguf/demo-files";
import packageJson from "../../package.json";
import { adapterHandlers } from "./adapters/adapter-handlers";
import { AdapterRegistry } from "./adapters/adapter-registry";
import { AdapterRouting } from "./adapters/adapter-routing";
import { AdapterStore } from "./adapters/adapter-store";
import { type DemoAdapterFiles, installAdaptersFrom, installDemoAdapters } from "./adapters/bundled-adapters";
import { SqliteRouterStore } from "./adapters/sqlite-router-store";
import { chatHandlers } from "./chat/chat-handlers";
import { TokenCounter } from "./chat/token-count";
import { QueryEmbeddings } from "./chat/query-embeddings";
import { DEFAULT_SYSTEM_PROMPT, TurnPipeline } from "./chat/turn-pipeline";
import { chatStorage } from "./chat/chat-storage";
import { conversationHandlers } from "./conversations/conversation-handlers";
import { ConversationSearch } from "./conversations/conversation-search";
import { ConversationStore } from "./conversations/conversation-store";
import { ConversationTransfer } from "./conversations/conversation-transfer";
import { ConversationSettingsStore, presetHandlers } from "./conversations/conversation-settings";
import { MessageStore } from "./conversations/message-store";
import type { Core } from "./core-types";
import type { Log } from "./dispatch";
import type { EngineClient } from "./engine/types";
import type { EventBus } from "./events/event-bus";
import type { AfterTurn } from "./chat/after-turn";
import { feedbackAfterTurn, feedbackHandlers, pinFeedback } from "./feedback/feedback-handlers";
import { toolDefinitionsFrom } from "./feedback/trajectory-tools";
import { FeedbackSharing, type FeedbackSharingDeps } from "./feedback/feedback-sharing";
import type { Handlers } from "./handlers";
import { genuiHandlers } from "./genui/genui-handlers";
import { GenuiService } from "./genui/genui-service";
import { GenuiStore } from "./genui/genui-store";
import { GenuiTurns } from "./genui/genui-turns";
import { hubHandlers } from "./hub/hub-handlers";
import { HubService } from "./hub/hub-service";
import { ModelLibrary } from "./hub/model-library";
import { FileTokenStore, type TokenStore } from "./hub/token-store";
import type { CreateDownloader, FreeSpace } from "./hub/downloads";
import { engineBuildHandlers } from "./engine/build-handlers";
import { NativeBuild } from "./engine/native-build";
import type { StartNodeChild } from "./process/node-child";
import { harnessParts, harnessVersion } from "./harness";
import { memoryHandlers } from "./memory/memory-handlers";
import { MemoryService } from "./memory/memory-service";
import { MemoryStore } from "./memory/memory-store";
import { EngineQueue } from "./models/engine-queue";
import { ggufInspector } from "./models/gguf-inspector";
import { modelHandlers } from "./models/model-handlers";
import { ModelFingerprint } from "./models/model-fingerprint";
import { type ModelInspector, ModelService } from "./models/model-service";
import { AdapterRouter } from "./router";
import { type Contract, contractLabel } from "./contract/contract-schema";
import { gateContract } from "./contract/default-contract";
import { CodeSandbox, resolveSandboxEntry } from "./contract/sandbox/sandbox";
import { AdapterReleases } from "./releases/adapter-releases";
import { AdapterUpdates } from "./releases/adapter-updates";
import { gateEvaluator } from "./releases/gate-target";
import { releaseHandlers } from "./releases/release-handlers";
import { ReleaseStore } from "./releases/release-store";
import { AppSettingsService } from "./settings/app-settings";
import { LocalApiServer, type LocalApiStarter } from "./settings/local-server";
import { settingsHandlers } from "./settings/settings-handlers";
import { SettingsStore } from "./settings/settings-store";
import { AgentTurns } from "./tools/agent-loop";
import { BuiltinTools } from "./tools/builtin-tools";
import { ToolCatalog } from "./tools/tool-catalog";
import type { NamedSpec } from "./tools/mcp/mcp-config";
import { McpHub } from "./tools/mcp/mcp-hub";
import { toolHandlers } from "./tools/tool-handlers";
import { ToolSwitches } from "./tools/tool-switches";

/** The options of core that the services use (CoreParts in index.ts). */
export interface ServiceParts {
  dataDir: string;
  initialModel?: string;
  /** CoreOptions.deferStartup: do not wait for the initial model (Services.started). */
  deferStartup?: boolean;
  defaultMaxTokens?: number;
  defaultTemperature?: number;
  systemPrompt?: string;
  inspector?: ModelInspector;
  /** The demo model "Try the demo model" opens (default: the trained demo that ships with the app). */
  ensureDemoModel?: (dir: string) => Promise<string>;
  demoAdapters?: boolean;
  /** The demo's adapter files (default: the trained specialists that ship with the app). */
  demoAdapterFiles?: DemoAdapterFiles;
  /** The demo folder (base.gguf + adapters/) behind both defaults; see native/gguf/demo-files.ts. */
  demoDir?: string;
  appVersion?: string;
  adaptersDir?: string;
  /** How often a streaming answer's partial text is saved (ms; tests shorten it). */
  flushIntervalMs?: number;
  /** The feedback service to upload to (createCore passes MACARON_FEEDBACK_ENDPOINT); wins over the setting. */
  feedbackEndpoint?: string;
  /** Upload timing of the feedback sync (tests shorten it). */
  feedbackTiming?: Pick<FeedbackSharingDeps, "debounceMs" | "periodMs" | "statusThrottleMs">;
  /** The adapter registry to take updates from (createCore passes MACARON_REGISTRY_URL); wins over the setting. */
  registryUrl?: string;
  /** First automatic update check after start-up, ms (tests lengthen it). */
  updatesInitialDelayMs?: number;
  /** Test seam: runs inside the promotion/rollback transaction before it commits (fault injection). */
  releaseBeforeCommit?: (step: "promote" | "rollback") => void;
  /**
   * The contract the evaluation gate runs (tests on the marker-answering fixture adapters pass
   * the smoke contract); default: the one MACARON_CONTRACT names, else the task contract.
   */
  contract?: Contract;
  /** Where the hub access token is kept (Electron: safeStorage); default: a 0600 file in dataDir. */
  tokenStore?: TokenStore;
  /** Model hub test seams: free space of the models folder, the downloader, progress event spacing. */
  hubStatfs?: (path: string) => Promise<FreeSpace>;
  hubDownloader?: CreateDownloader;
  hubProgressIntervalMs?: number;
  /** The hub to use (default: HF_ENDPOINT, else huggingface.co). */
  hubEndpoint?: string;
  /** MCP servers for this run only (headless `--mcp-config`), started with the saved ones. */
  mcpServers?: NamedSpec[];
  /** Per MCP tool call, ms (default TOOL_CALL_TIMEOUT_MS; tests shorten it). */
  mcpCallTimeoutMs?: number;
  /** Serves the /v1 API for the "Local API server" setting (index.ts binds CoreOptions.localApi to core). */
  localApi?: LocalApiStarter;
  /** Starts the Node helpers (code sandbox, llama.cpp build); CoreOptions.startNodeChild. */
  startNodeChild?: StartNodeChild;
}

/** Handlers of every method except database.* (index.ts answers those, whatever the state). */
export type ServiceHandlers = Omit<
  Handlers,
  "database.status" | "database.restoreBackup" | "database.startFresh"
>;

export interface Services {
  handlers: ServiceHandlers;
  engine: EngineClient;
  adapters: Core["adapters"];
  engineStatus: Core["engineStatus"];
  started: Core["started"];
  /** Started by index.ts once core exists (the server it starts serves that core). */
  localServer: LocalApiServer;
  close(): Promise<void>;
}

/**
 * Start the services on `db` (already migrated). Closes `db` if starting fails before the
 * services own it (e.g. the engine cannot be made).
 */
export async function startServices(
  db: Database,
  parts: ServiceParts,
  makeEngine: () => EngineClient,
  events: EventBus,
  log: Log,
): Promise<Services> {
  const conversations = new ConversationStore(db);
  const messages = new MessageStore(db);
  const settings = new SettingsStore(db);
  // Model files by sha256 (turn records, load settings, embedding caches).
  const fingerprint = new ModelFingerprint(settings);
  const interrupted = messages.markStreamingInterrupted();
  if (interrupted > 0)
    log(`${interrupted} answer(s) were cut off by the last shutdown; marked interrupted`, null);

  let engine: EngineQueue;
  try {
    // One line for all engine work: chat turns and the /v1 endpoints share it.
    engine = new EngineQueue(makeEngine());
  } catch (err) {
    db.close();
    throw err;
  }
  const models = new ModelService({
    engine,
    events,
    settings,
    inspector: parts.inspector ?? ggufInspector,
    ensureDemoModel: parts.ensureDemoModel ?? ((dir) => ensureDemoModel(dir, parts.demoDir)),
    dataDir: parts.dataDir,
    // Load settings are remembered by the model's sha256 when it is known.
    sha256Of: (path) => fingerprint.cachedSha256(path),
    log,
  });
  const systemPrompt = parts.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  const appSettings = new AppSettingsService(settings);
  const kvPolicy = () => appSettings.get().kvPolicy;
  // Embeddings are cached per model: by its sha256 once known, by its path until then.
  const modelKey = (): string => {
    const path = engine.loaded?.path;
    return path ? (fingerprint.knownSha256(path) ?? path) : "no-model";
  };
  // The router and memory retrieval both embed the user's text of a turn: once, shared.
  const queryEmbeddings = new QueryEmbeddings((texts) => engine.embed(texts), modelKey);
  // Adapter installs in progress (the demo's specialists): auto turns wait for them (AdapterRouting).
  let installing: Promise<unknown> = Promise.resolve();
  const { registry, router, routing, releases, updates, sandbox, harness } = await startAdapterServices({
    db,
    parts,
    engine,
    events,
    settings,
    fingerprint,
    modelKey,
    queryEmbeddings,
    systemPrompt,
    installed: () => installing,
    log,
  });
  // Installs and removals change the live set: record versions and the release at once.
  // Observers stop once core starts closing (see close).
  let observing = true;
  registry.onChanged(() => {
    if (observing) releases.reconcile("install");
  });
  const memoryStore = new MemoryStore(db, messages);
  const memory = new MemoryService({
    store: memoryStore,
    events,
    settings: () => appSettings.get(),
    embed: (texts) => engine.embed(texts),
    embedQuery: (text) => queryEmbeddings.get(text),
    modelKey,
    generateInBackground: (history, options, signal) => engine.generateInBackground(history, options, signal),
    log,
  });
  // GenUI: UI-mode turns (the "ui" adapter leads, or the user asked) and component interactions.
  const genuiStore = new GenuiStore(db, messages);
  const genuiTurns = new GenuiTurns({
    store: genuiStore,
    isUiAdapter: (id) => registry.get(id)?.domain === "ui",
  });
  const { toolCatalog, mcpHub } = startToolServices({ db, parts, memory, genuiStore, events, log });
  // Feedback: captured whatever the consent (local), uploaded only with consent and an endpoint.
  const sharing = new FeedbackSharing({
    db,
    messages,
    events,
    log,
    envEndpoint: parts.feedbackEndpoint,
    ...parts.feedbackTiming,
    // A trajectory carries the called tools' definitions as the Agent was given them.
    toolsFor: toolDefinitionsFrom(() => toolCatalog.tools()),
  });
  const agent = new AgentTurns({
    db,
    tools: toolCatalog,
    events,
    isAgentAdapter: (id) => registry.get(id)?.domain === "agent",
    log,
  });
  const stoppedSteps = agent.stopLeftovers();
  if (stoppedSteps > 0)
    log(`${stoppedSteps} tool call(s) were cut off by the last shutdown; marked stopped`, null);
  const afterTurn = turnFollowUps({ memory, routing, sharing, messages, log });
  const pipeline = new TurnPipeline({
    storage: chatStorage(db),
    conversations,
    messages,
    engine,
    events,
    systemPrompt: parts.systemPrompt,
    defaultMaxTokens: parts.defaultMaxTokens,
    defaultTemperature: parts.defaultTemperature,
    isDemo: () => models.demoOpen,
    flushIntervalMs: parts.flushIntervalMs,
    routing,
    harnessVersion: harness,
    kvPolicy,
    modelHashes: fingerprint,
    memory,
    contextStrategy: () => appSettings.get().contextStrategy,
    log,
    genui: genuiTurns,
    agent,
    afterTurn,
  });
  const genui = new GenuiService({
    store: genuiStore,
    getMessage: (id) => messages.get(id),
    send: (input) => pipeline.send(input),
    recordSignal: (messageId, signal) => {
      sharing.record((feedback) => feedback.genuiInteraction(messageId, signal));
    },
    log,
  });
  // After each load: hash the model file (turn records) in the background, never per turn;
  // then warm the router under that hash (its embedding cache is keyed by it).
  models.onStatus((status) => {
    if (!observing) return;
    if (status.state === "loading") memory.abortProposals();
    if (status.state !== "ready" || !status.model) return;
    // Whether each adapter fits depends on the base: the Adapters panel must refresh, and the
    // live set may have changed with it.
    if (registry.count > 0) {
      events.emit("adapters.changed", {});
      releases.reconcile("install");
    }
    fingerprint
      .sha256(status.model.path)
      .then(() => {
        releases.reconcile("model");
        return routing.prepare();
      })
      .catch((err: unknown) => log("could not hash the model or prepare the router", err));
  });
  // The model hub: search, downloads into <dataDir>/models, token, adapters for the loaded base.
  const hub = new HubService({
    dataDir: parts.dataDir,
    tokenStore: parts.tokenStore ?? new FileTokenStore(parts.dataDir),
    emit: (download) => events.emit("hub.download", download),
    loadedModelPath: () => engine.loaded?.path ?? null,
    installAdapter: (path) => registry.install(path),
    fit: (source, options) => models.fit(source, options),
    statfs: parts.hubStatfs,
    createDownloader: parts.hubDownloader,
    progressIntervalMs: parts.hubProgressIntervalMs,
    endpoint: parts.hubEndpoint,
    onVerified: (path, sha256) => {
      fingerprint
        .remember(path, sha256)
        .catch((err: unknown) => log("could not remember a download's sha256", err));
    },
    log,
  });
  const library = new ModelLibrary({
    dataDir: parts.dataDir,
    loadedPath: () => engine.loaded?.path ?? null,
    onDeleted: (path) => hub.downloads.forgetPath(path),
    log,
  });
  // llama.cpp built for this machine: the engine restarts on the new binaries once built.
  const nativeBuild = new NativeBuild({
    startNodeChild: parts.startNodeChild,
    engineInfo: () => engine.info(),
    relaunch: () => engine.relaunch(),
    emit: (build) => events.emit("engine.build", build),
    log,
  });
  // The local API server: only /v1 on 127.0.0.1, off until the user turns it on.
  const localServer = new LocalApiServer({
    settings,
    start: parts.localApi,
    emit: (status) => events.emit("localServer.changed", status),
    log,
  });
  const models_ = modelHandlers(models, library);
  const conversationSettings = new ConversationSettingsStore(db);
  const handlers: ServiceHandlers = {
    ...conversationHandlers({
      conversations,
      messages,
      pipeline,
      events,
      routing,
      memory,
      search: new ConversationSearch(db),
      settings: conversationSettings,
      contextSize: () => engine.loaded?.contextSize ?? null,
      transfer: new ConversationTransfer(db, {
        conversations,
        messages,
        memories: memoryStore,
        settings: conversationSettings,
      }),
      // Pinning after an answer becomes a router override (turns report theirs through afterTurn).
      onPinned: pinFeedback({ sharing, messages, log }),
      forgetCache: async (id) => {
        // The engine deletes the saved files too (they hold the conversation's tokens), also
        // when none is running: the supervisor then starts one for it.
        try {
          await engine.forget(id, join(parts.dataDir, "kv"));
        } catch (err) {
          log("could not drop the deleted conversation's cache", err);
        }
      },
    }),
    // The answer's room as a turn reserves it (TurnPlanner.sampling's default).
    ...chatHandlers(pipeline, new TokenCounter(engine, () => parts.defaultMaxTokens ?? 1024, log)),
    ...presetHandlers(conversationSettings),
    ...models_,
    ...hubHandlers(hub),
    ...engineBuildHandlers(nativeBuild),
    "models.openDemo": (input, ctx) => {
      // The page shows the demo (and its suggestions) once the model is ready, before its
      // specialists are installed: turns wait for the whole opening (see `installing`).
      const opening = (async () => {
        const status = await models_["models.openDemo"](input, ctx);
        if (parts.demoAdapters !== false) {
          await installDemoAdapters(
            registry,
            parts.dataDir,
            parts.demoAdapterFiles ?? (() => demoAdapterFiles(parts.demoDir)),
          ).catch((err: unknown) => log("could not install the demo adapters", err));
        }
        return status;
      })();
      installing = opening;
      return opening;
    },
    ...adapterHandlers(registry, { engine, registry, systemPrompt, kvPolicy }),
    ...settingsHandlers(appSettings),
    ...memoryHandlers(memory),
    ...feedbackHandlers(sharing, messages),
    ...releaseHandlers({ releases, updates, registry, log }),
    ...genuiHandlers(genui),
    ...toolHandlers(toolCatalog, mcpHub),
    "localServer.status": () => localServer.status(),
    "localServer.configure": (change) => localServer.configure(change),
    "localServer.regenerateKey": () => localServer.regenerateKey(),
  };

  // Start-up: the initial model, then the --adapters folder, then the background services.
  // Awaited here unless deferStartup (then Core.started tells when it is done).
  let startup: Promise<void> = Promise.resolve();
  let closed = false;
  const started = (async () => {
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
    if (parts.adaptersDir && !closed) {
      // After the initial model, so that each adapter is checked against it.
      const dir = parts.adaptersDir;
      await installAdaptersFrom(registry, dir, log).catch((err: unknown) =>
        log(`could not read the adapters folder ${dir}`, err),
      );
    }
    if (closed) return;
    sharing.start();
    updates.start();
  })();
  // Whoever awaits it sees a failure; nobody awaiting it is not an unhandled rejection.
  started.catch(() => undefined);
  if (!parts.deferStartup) await started;

  let closing: Promise<void> | null = null;
  return {
    handlers,
    engine,
    adapters: {
      listEnabled: async () => (await registry.list()).filter((a) => a.enabled),
      resolve: async (selection, text) => {
        const resolved = await routing.resolve(selection, text);
        return {
          routing: resolved.routing,
          adapters: resolved.adapters,
          kvPolicy: kvPolicy(),
          ...(resolved.toolFormat ? { toolFormat: resolved.toolFormat } : {}),
        };
      },
    },
    engineStatus: () => models.status(),
    started,
    localServer,
    close: () => {
      closing ??= (async () => {
        closed = true;
        // First: no new /v1 request may reach services that are closing.
        await localServer.close();
        // A start-up still under way (deferStartup) ends first: its load or install cannot be
        // stopped midway, and must not run into closed services.
        await started.catch(() => undefined);
        await pipeline.close();
        await mcpHub.close().catch((err: unknown) => log("could not stop the MCP servers", err));
        await hub.close().catch((err: unknown) => log("could not pause the model downloads", err));
        // From here on no observer reacts (the services they call are closing).
        observing = false;
        await updates.close();
        await releases.close();
        await sharing.close();
        await memory.close();
        router.dispose();
        await startup.catch(() => undefined);
        await nativeBuild.close();
        await sandbox?.close();
        await models.close();
        await engine.close().catch((err: unknown) => log("closing the engine failed", err));
        db.close();
      })();
      return closing;
    },
  };
}

/** What the adapter services are built from (startServices' own values). */
interface AdapterServiceDeps {
  db: Database;
  parts: ServiceParts;
  engine: EngineQueue;
  events: EventBus;
  settings: SettingsStore;
  fingerprint: ModelFingerprint;
  modelKey: () => string;
  queryEmbeddings: QueryEmbeddings;
  systemPrompt: string;
  /** Settles when the adapter installs under way are done (AdapterRoutingDeps.installed). */
  installed: () => Promise<unknown>;
  log: Log;
}

/**
 * The adapters: installed files (registry), the router that picks them per turn, versions, the
 * evaluation gate and releases (started: the live set is recorded), and the update checks (not
 * started yet: startServices starts them last).
 */
async function startAdapterServices(deps: AdapterServiceDeps) {
  const { db, parts, engine, events, settings, fingerprint, modelKey, queryEmbeddings, systemPrompt, log } =
    deps;
  const registry = new AdapterRegistry({
    store: new AdapterStore(db),
    dataDir: parts.dataDir,
    events,
    basePath: () => engine.loaded?.path ?? null,
    log,
  });
  // The loaded base's sha256 once hashed: releases record it, updates ask for its versions,
  // the router uses a learned head only when it was trained for it.
  const loadedBaseSha256 = (): string | null => {
    const path = engine.loaded?.path;
    return path ? fingerprint.knownSha256(path) : null;
  };
  const router = new AdapterRouter({
    embed: (texts) => engine.embed(texts),
    embedQuery: (text) => queryEmbeddings.get(text),
    modelKey,
    store: new SqliteRouterStore(db),
    // Waits for the hash started at load (ModelFingerprint shares one per file).
    baseSha256: () => {
      const path = engine.loaded?.path;
      return path ? fingerprint.sha256(path).catch(() => null) : null;
    },
    log: (message) => log(message, undefined),
  });
  const routing = new AdapterRouting({ registry, router, log, installed: deps.installed });
  // Versions, the evaluation gate and releases; the gate generates at background priority.
  const releaseStore = new ReleaseStore(db);
  const contract = parts.contract ?? gateContract();
  // The gate's code sandbox, started the way this process starts Node helpers (Electron: a
  // utility process); without a starter, the process-wide one (child_process.fork).
  const sandbox = parts.startNodeChild
    ? new CodeSandbox({}, resolveSandboxEntry(), parts.startNodeChild)
    : undefined;
  // Prompts, router, catalog and the contract in force: one version for turns and releases.
  const harness = harnessVersion(
    parts.appVersion ?? packageJson.version,
    harnessParts(systemPrompt, contractLabel(contract)),
  );
  const releases = new AdapterReleases({
    store: releaseStore,
    adaptersDir: registry.dir,
    events,
    basePath: () => engine.loaded?.path ?? null,
    baseSha256: loadedBaseSha256,
    harnessVersion: harness,
    contractVersion: contractLabel(contract),
    evaluate: gateEvaluator({ registry, router, engine, contract, systemPrompt, log, sandbox }),
    log,
    beforeCommit: parts.releaseBeforeCommit,
  });
  await releases.start();
  const updates = new AdapterUpdates({
    releases,
    store: releaseStore,
    settings,
    events,
    adaptersDir: registry.dir,
    fixedRegistryUrl: parts.registryUrl,
    initialDelayMs: parts.updatesInitialDelayMs,
    baseSha256: loadedBaseSha256,
    log,
  });
  return { registry, router, routing, releases, updates, sandbox, harness };
}

/**
 * The Agent's tools: the app's own (built-in) and, through the catalog, the MCP servers' (those
 * the user added and those of this run's command line, started now).
 */
function startToolServices(deps: {
  db: Database;
  parts: ServiceParts;
  memory: MemoryService;
  genuiStore: GenuiStore;
  events: EventBus;
  log: Log;
}) {
  const { db, parts, memory, genuiStore, events, log } = deps;
  const toolSwitches = new ToolSwitches(parts.dataDir, log);
  const toolCatalog = new ToolCatalog(toolSwitches, [
    new BuiltinTools({ search: new ConversationSearch(db), memory, genui: genuiStore }),
  ]);
  // MCP servers start only once the user added them (mcp.json) or the command line gave them.
  const mcpHub = new McpHub({
    dataDir: parts.dataDir,
    switches: toolSwitches,
    emit: (payload) => events.emit("mcp.changed", payload),
    log,
    sessionServers: parts.mcpServers,
    callTimeoutMs: parts.mcpCallTimeoutMs,
    clientVersion: parts.appVersion ?? packageJson.version,
  });
  toolCatalog.addSource(mcpHub);
  mcpHub.start();
  return { toolCatalog, mcpHub };
}

/** What follows from a turn, in this order: memories, the router, implicit feedback. */
function turnFollowUps(deps: {
  memory: MemoryService;
  routing: AdapterRouting;
  sharing: FeedbackSharing;
  messages: MessageStore;
  log: Log;
}): AfterTurn[] {
  const { memory, routing, sharing, messages, log } = deps;
  return [
    {
      // After chat.done, never before it; the engine queue runs it when nothing else waits.
      answered: (turn) => {
        if (turn.kind !== "send" || turn.message.status !== "complete") return;
        // No facts are proposed after a regenerate: the first answer to this message did that.
        memory.proposeAfterAnswer({
          conversationId: turn.conversationId,
          userMessageId: turn.userMessageId,
          userText: turn.userText,
          prompt: turn.prompt,
          answer: turn.message.content,
          adapters: turn.adapters,
          kvPolicy: turn.kvPolicy,
        });
      },
    },
    {
      // "Answer again with Coding": the user says which adapter this text should have had.
      committed: (turn) => {
        if (turn.pinned !== null) routing.recordOverride(turn.userText, turn.pinned);
      },
    },
    feedbackAfterTurn({ sharing, messages, log }),
  ];
}
