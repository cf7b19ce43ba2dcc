import type {
  AdapterInfo,
  AdapterSelection,
  EngineStatus,
  EventName,
  EventPayload,
  Result,
  RoutingInfo,
} from "../api";
import type { AdapterUse, EngineClient, KvPolicy, SpawnEngine, ToolCallFormat } from "./engine/types";
import type { TokenStore } from "./hub/token-store";
import type { CoreGeneration } from "./models/generation-service";
import type { StartNodeChild } from "./process/node-child";
import type { NamedSpec } from "./tools/mcp/mcp-config";

export type EventListener = <E extends EventName>(event: E, payload: EventPayload<E>) => void;

/** Who is calling: transports pass it so that handlers and logs know the origin. */
export interface CallContext {
  transport: "ipc" | "http";
}

/** An adapter selection resolved for one generation: what to pass to the engine, and why. */
export interface ResolvedSelection {
  routing: RoutingInfo;
  /** For GenerateOptions.adapters ([] = the base model alone). */
  adapters: AdapterUse[];
  /** For GenerateOptions.kvPolicy (the user's setting). */
  kvPolicy: KvPolicy;
  /** For GenerateOptions.toolFormat: the leading adapter's tool-call syntax, if it has one. */
  toolFormat?: ToolCallFormat;
}

/** What the OpenAI-compatible endpoints need of the adapters, without reaching into the database. */
export interface CoreAdapters {
  /** Installed adapters that are enabled, with their fit (/v1/models lists those that fit). */
  listEnabled(): Promise<AdapterInfo[]>;
  /**
   * Resolve a selection for a generation whose last user text is `text` (the router decides
   * for "auto"). Throws ApiError("invalid_input") for unknown, disabled or misfitting adapters.
   */
  resolve(selection: AdapterSelection, text: string): Promise<ResolvedSelection>;
}

/**
 * The services behind the API, identical inside Electron's main process and the headless
 * server. Transports only validate the envelope, call `dispatch` and forward events.
 */
export interface Core {
  /** Validate `input` against the method's schema, run it, return the result envelope. Never throws. */
  dispatch(method: string, input: unknown, ctx: CallContext): Promise<Result<unknown>>;
  /** Every event core emits; returns a disposer. */
  subscribe(listener: EventListener): () => void;
  /** The engine (its queue), for in-process callers: benchmarks, the contract runner, tests. */
  readonly engine: EngineClient;
  /**
   * Stateless generation for the OpenAI- and Anthropic-compatible endpoints: one at a time in
   * arrival order, through the engine queue the chat uses (models/generation-service.ts).
   */
  readonly generation: CoreGeneration;
  /** The installed adapters and the router, for the OpenAI-compatible endpoints. */
  readonly adapters: CoreAdapters;
  engineStatus(): EngineStatus;
  /**
   * Settles once start-up is done: the initial model loaded (or its failure logged) and the
   * --adapters folder installed. createCore resolves after it unless `deferStartup` is set.
   */
  readonly started: Promise<void>;
  close(): Promise<void>;
}

export interface CoreOptions {
  /** Holds macaron.db, the generated demo model and later adapters. */
  dataDir: string;
  spawnEngine: SpawnEngine;
  /** Load this model at start-up (headless `--model`). */
  initialModel?: string;
  /**
   * Resolve createCore as soon as the services run, before the initial model is loaded
   * (`Core.started` says when it is): headless mode builds its HTTP server meanwhile.
   */
  deferStartup?: boolean;
  /** Defaults for generation when a call gives none. */
  defaultMaxTokens?: number;
  /** Sampling temperature when a call gives none (default 0.7; 0 is greedy). */
  defaultTemperature?: number;
  /** Part of the harness version stamped on every turn; default: package.json's version. */
  appVersion?: string;
  /**
   * Install the LoRA adapters (`*.gguf`, manifests beside them) of this folder at start-up,
   * after the initial model (headless `--adapters DIR`). Already installed ones are skipped.
   */
  adaptersDir?: string;
  /**
   * The feedback service to upload opted-in feedback to; default: $MACARON_FEEDBACK_ENDPOINT,
   * else the user's Privacy setting. Without any, nothing is ever uploaded.
   */
  feedbackEndpoint?: string;
  /**
   * The adapter registry to poll for new versions; default: $MACARON_REGISTRY_URL, else the
   * user's update setting. Without any, no update is ever looked for.
   */
  registryUrl?: string;
  /**
   * The demo "Try the demo model" opens: a folder with base.gguf and adapters/ (default: the
   * trained demo that ships with the app, or $MACARON_DEMO_DIR).
   */
  demoDir?: string;
  /**
   * Where the model hub's access token is kept: Electron passes a safeStorage-backed store;
   * default: a 0600 file in dataDir (headless).
   */
  tokenStore?: TokenStore;
  /** MCP servers for this run only (headless `--mcp-config FILE`), started with the saved ones, never saved. */
  mcpServers?: NamedSpec[];
  /**
   * Serves the /v1 API on a port for the "Local API server" setting (electron/server/local-server.ts).
   * Injected because core must not import the server; without it, localServer.* answer an error.
   */
  localApi?: LocalApiFactory;
  /**
   * Starts the Node helpers core runs (the contract's code sandbox, the llama.cpp build and its
   * probe). Electron passes a utilityProcess one (electron/main/node-child.ts): the packaged
   * binary cannot run as plain Node. Default: child_process.fork (headless, tests).
   */
  startNodeChild?: StartNodeChild;
}

/** A running local API server (see LocalApiFactory). */
export interface LocalApiHandle {
  /** http://127.0.0.1:PORT (the /v1 routes are under it). */
  url: string;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/**
 * Starts the /v1 API of `core` on 127.0.0.1:`port`, answering only requests that carry `apiKey`,
 * with CORS answers for pages on `corsOrigins` (none when empty).
 * Rejects when it cannot listen; an error with `code` "EADDRINUSE" means the port is taken.
 */
export type LocalApiFactory = (core: Core, options: LocalApiOptions) => Promise<LocalApiHandle>;

/** What the local API server is started with (the "Local API server" settings and its key). */
export interface LocalApiOptions {
  port: number;
  apiKey: string;
  /** Exact origins (`http://localhost:5173`) whose pages may call the model APIs with the key. */
  corsOrigins: readonly string[];
}
