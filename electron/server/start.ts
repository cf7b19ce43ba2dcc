/**
 * Starts headless mode in-process: core, engine and the HTTP server. Used by cli.ts, by tests
 * and by the Electron shell's browser fallback.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { createCore } from "../core";
import type { Core } from "../core/core-types";
import type { EngineStatus } from "../api";
import { spawnNodeEngine } from "../core/engine/spawn-node";
import type { SpawnEngine } from "../core/engine/types";
import { isModelUri, resolveModelArg } from "../core/hub/model-uri";
import { FileTokenStore } from "../core/hub/token-store";
import { buildServer } from "./app";
import { loadOrCreateServerKey, SessionStore } from "./session-store";
import { LoginCodes } from "./auth";
import { earlyEngine } from "./early-engine";
import { serveLocalApi } from "./local-server";
import { ensurePrivateDirSync } from "../../common/files/private-files";
import type { NamedSpec } from "../core/tools/mcp/mcp-config";

export interface StartServerOptions {
  /** Bind address; only this interface is served. Default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. Default 0. */
  port?: number;
  dataDir: string;
  /**
   * GGUF to load before serving: a path, or `hf:OWNER/REPO[:QUANT]` / an https URL, downloaded
   * into `<dataDir>/models` first (resumed when interrupted). A bad file or failed download is
   * reported in `modelError`, not thrown.
   */
  model?: string;
  /** Download progress lines for a `model` URI (the CLI prints them on stderr). */
  onDownloadLine?: (line: string) => void;
  /**
   * Default: the key kept in `<dataDir>/server-key`, made (32 random bytes, hex) on the first
   * start (see `generatedKey`).
   */
  apiKey?: string;
  /** Replace the kept key with a new one: every browser signed in with the old one is signed out. */
  newKey?: boolean;
  /** Default: out/renderer of this checkout (or of the app bundle). */
  rendererDir?: string;
  /** Default: the engine forked with child_process. */
  spawnEngine?: SpawnEngine;
  /** Answer length when a call does not set one. */
  defaultMaxTokens?: number;
  /** Sampling temperature when a call does not set one (0: greedy, the same answer every time). */
  defaultTemperature?: number;
  /** Install every adapter found in this folder at start-up (already installed ones are kept). */
  adaptersDir?: string;
  /** The demo folder (base.gguf + adapters/); default: the trained demo that ships with the app. */
  demoDir?: string;
  /** MCP servers for this run only (`--mcp-config FILE`), started with the saved ones. */
  mcpServers?: NamedSpec[];
  /** Origins whose pages may call /v1 and Ollama's routes with the key (`--cors`; none by default). */
  corsOrigins?: readonly string[];
  /**
   * Aborted when the user stops the server during its start-up (Ctrl-C): it then does not
   * listen; startServer closes core and rejects with the signal's reason (an AbortError).
   */
  stopping?: AbortSignal;
}

export interface RunningServer {
  /** http://HOST:PORT */
  url: string;
  /**
   * The URL that signs a browser in: url + "/?code=CODE", a code that works once, for a few
   * minutes (the key itself never goes into a URL).
   */
  openUrl: string;
  /** A fresh sign-in URL like `openUrl` (the first one is spent or expired). */
  newOpenUrl(): string;
  apiKey: string;
  /** True when the key was made by this start (the first one, or `newKey`). */
  generatedKey: boolean;
  /** Why --model could not be loaded, or null. The server runs either way. */
  modelError: string | null;
  core: Core;
  app: FastifyInstance;
  /** Stops accepting connections, then closes core (and with it the engine). Idempotent. */
  close(): Promise<void>;
}

// For cli.ts, which imports this module only once the engine is forked.
export { LOGIN_CODE_TTL_MS } from "./auth";

/** out/renderer relative to this file: electron/server/ and out/main/ are both two levels deep. */
export function defaultRendererDir(moduleUrl: string = import.meta.url): string {
  return join(dirname(fileURLToPath(moduleUrl)), "../../out/renderer");
}

function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/**
 * createCore never throws for a bad initial model (it logs and serves without one); this
 * finds out whether it loaded and, if not, asks core for the user-facing reason.
 */
async function explainModelFailure(core: Core, model: string): Promise<string | null> {
  const loaded = core.generation.loaded;
  if (loaded && resolve(loaded.path) === resolve(model)) return null;
  const status = core.engineStatus();
  if (status.state === "error" && status.error) return status.error;
  const inspected = await core.dispatch("models.inspect", { path: model }, { transport: "http" });
  return inspected.ok ? "the model failed to load (see the log above)" : inspected.error.message;
}

/** Settles once the initial model is loading (or start-up is over: no model, or it failed). */
function modelLoadUnderWay(core: Core): Promise<void> {
  return new Promise((resolve) => {
    // On the next turn of the event loop: the load request goes out to the engine first.
    const done = () => {
      stop();
      setImmediate(resolve);
    };
    const stop = core.subscribe((event, payload) => {
      if (event === "engine.status" && (payload as EngineStatus).state !== "idle") done();
    });
    core.started.then(done, done);
  });
}

/** Downloads a hub `model` first (a failure is reported, not thrown), then starts core. */
async function openCore(
  options: StartServerOptions,
  spawnEngine: SpawnEngine,
): Promise<{ core: Core; model: string | undefined; downloadError: string | null }> {
  let model = options.model;
  let downloadError: string | null = null;
  if (model && isModelUri(model)) {
    try {
      model = await resolveModelArg(model, {
        dataDir: options.dataDir,
        tokenStore: new FileTokenStore(options.dataDir),
        onLine: options.onDownloadLine,
      });
    } catch (err) {
      downloadError = `the download failed: ${(err as Error).message}`;
      model = undefined;
    }
  }
  const core = await createCore({
    dataDir: options.dataDir,
    spawnEngine,
    initialModel: model,
    // The HTTP server is built while the engine loads the model (see startServer).
    deferStartup: true,
    defaultMaxTokens: options.defaultMaxTokens,
    defaultTemperature: options.defaultTemperature,
    adaptersDir: options.adaptersDir,
    demoDir: options.demoDir,
    mcpServers: options.mcpServers,
    // The "Local API server" setting works in browser mode too: the same code as the desktop app.
    localApi: serveLocalApi,
  });
  return { core, model, downloadError };
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  // Private before anything (the key, a model download, the token file) is written into it.
  ensurePrivateDirSync(options.dataDir);
  const kept = options.apiKey === undefined ? loadOrCreateServerKey(options.dataDir, options.newKey) : null;
  const apiKey = options.apiKey ?? kept!.apiKey;
  const generatedKey = kept?.created ?? false;
  // Browsers stay signed in across restarts with the same key (session-store.ts).
  const sessions = SessionStore.inDataDir(options.dataDir, apiKey);
  // Forked before the download, the database and the services start (see early-engine.ts).
  const engine = earlyEngine(options.spawnEngine ?? spawnNodeEngine());
  const { core, model, downloadError } = await openCore(options, engine.spawnEngine).finally(() =>
    engine.dispose(),
  );
  const loginCodes = new LoginCodes();
  let app: FastifyInstance;
  try {
    // The HTTP server is built while the engine loads the model, in its own process. Not before
    // the load has reached it: building takes the event loop in long steps, which would hold up
    // the file and fit checks that come first.
    await modelLoadUnderWay(core);
    app = await buildServer({
      core,
      apiKey,
      loginCodes,
      sessions,
      rendererDir: options.rendererDir ?? defaultRendererDir(),
      host,
      ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    });
    // Built while the engine loaded the model in its own process; served once it is in.
    await core.started;
    options.stopping?.throwIfAborted();
    await app.listen({ host, port: options.port ?? 0 });
  } catch (err) {
    await core.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  const modelError = downloadError ?? (model ? await explainModelFailure(core, model) : null);
  const url = `http://${urlHost(host)}:${port}`;

  const newOpenUrl = () => `${url}/?code=${loginCodes.issue().code}`;

  let closing: Promise<void> | null = null;
  return {
    url,
    openUrl: newOpenUrl(),
    newOpenUrl,
    apiKey,
    generatedKey,
    modelError,
    core,
    app,
    close: () => {
      closing ??= app.close().finally(() => core.close());
      return closing;
    },
  };
}
