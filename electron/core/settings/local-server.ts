/**
 * The desktop app's local API server (Settings → "Local API server", like LM Studio's): the
 * /v1 model API of headless mode on 127.0.0.1:PORT while the app runs, with a key of its own.
 * Off until the user turns it on; the switch, the port, the key and the origins whose web pages
 * may call it (CORS, none by default) live in the database's settings, so it comes back on as it
 * was at the next start. The server itself is injected (core does
 * not import electron/server): see LocalApiFactory in core-types.ts.
 */
import { randomBytes } from "node:crypto";
import {
  ApiError,
  LOCAL_SERVER_HOST,
  MAX_CORS_ORIGINS,
  parseAllowedOrigin,
  type LocalServerStatus,
} from "../../api";
import type { Log } from "../dispatch";
import type { LocalApiHandle, LocalApiOptions } from "../core-types";
import type { SettingsStore } from "./settings-store";

/** LM Studio's default: clients set up for it find this one too. */
export const DEFAULT_LOCAL_SERVER_PORT = 1234;

const CONFIG_KEY = "localServer";
const API_KEY_KEY = "localServer.apiKey";

/** Starts the server with the settings and the key (LocalApiFactory, already bound to core). */
export type LocalApiStarter = (options: LocalApiOptions) => Promise<LocalApiHandle>;

export interface LocalApiServerDeps {
  settings: SettingsStore;
  /** Absent where nothing can serve (tests of core without a server): every call answers an error. */
  start?: LocalApiStarter;
  emit: (status: LocalServerStatus) => void;
  log: Log;
}

interface Config {
  enabled: boolean;
  port: number;
  /** Exact origins, as browsers send them (common/cors-origins.ts); empty: CORS off. */
  corsOrigins: string[];
}

/** What a configure call may change. */
export interface LocalServerChange {
  enabled?: boolean;
  port?: number;
  corsOrigins?: readonly string[];
}

function isPort(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1024 && value <= 65535;
}

/** The user-facing reason a listen failed; the app keeps running either way. */
function listenError(port: number, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === "EADDRINUSE")
    return `Port ${port} is in use by another program. Choose another port, or quit that program and turn the server on again.`;
  if (code === "EACCES")
    return `Port ${port} may not be used by this app (permission denied). Choose another port.`;
  return `The local API server could not start on port ${port}: ${err instanceof Error ? err.message : String(err)}`;
}

export class LocalApiServer {
  private handle: LocalApiHandle | null = null;
  private error: string | null = null;
  /** Changes run one after the other: a configure during a restart waits for it. */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly deps: LocalApiServerDeps) {}

  status(): LocalServerStatus {
    this.requireServer();
    return this.current();
  }

  private current(): LocalServerStatus {
    const { enabled, port, corsOrigins } = this.config();
    return {
      enabled,
      running: this.handle !== null,
      host: LOCAL_SERVER_HOST,
      port,
      url: this.handle ? `${this.handle.url}/v1` : null,
      apiKey: this.apiKey(),
      error: this.error,
      corsOrigins,
    };
  }

  /** At core start-up: serve again if the user left it on. A taken port is reported, not thrown. */
  start(): Promise<LocalServerStatus> {
    if (!this.deps.start || !this.config().enabled) return Promise.resolve(this.current());
    // Core starts whatever happens here: a failure is the status's, and the log's.
    return this.change(() => undefined).catch((err: unknown) => {
      this.deps.log("could not start the local API server", err);
      return this.current();
    });
  }

  /**
   * Saves the change and restarts a running server with it (a new allow-list too: the server
   * takes its origins at start). Origins are checked here as well as by the API's schema; a
   * bad one changes nothing.
   */
  configure(change: LocalServerChange): Promise<LocalServerStatus> {
    this.requireServer();
    const corsOrigins = change.corsOrigins === undefined ? undefined : checkedOrigins(change.corsOrigins);
    return this.change(() => {
      const current = this.config();
      this.deps.settings.set(CONFIG_KEY, {
        enabled: change.enabled ?? current.enabled,
        port: change.port ?? current.port,
        corsOrigins: corsOrigins ?? current.corsOrigins,
      } satisfies Config);
    });
  }

  /** A fresh key; the old one stops working at once because a running server restarts with the new one. */
  regenerateKey(): Promise<LocalServerStatus> {
    this.requireServer();
    return this.change(() => this.deps.settings.set(API_KEY_KEY, newKey()));
  }

  /** At core close: stop listening (open connections are dropped). */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue.catch(() => undefined);
    await this.stop();
  }

  private requireServer(): void {
    if (!this.deps.start)
      throw new ApiError(
        "invalid_input",
        "This build of the app cannot serve the local API (no server was given to core).",
      );
    if (this.closed) throw new ApiError("busy", "The app is shutting down.");
  }

  /** Saves a change, then brings the server in line with the settings: stop, and start again if on. */
  private change(save: () => void): Promise<LocalServerStatus> {
    const run = this.queue.then(async () => {
      save();
      await this.stop();
      const { enabled, port, corsOrigins } = this.config();
      this.error = null;
      if (enabled && !this.closed && this.deps.start) {
        try {
          this.handle = await this.deps.start({ port, apiKey: this.apiKey(), corsOrigins });
        } catch (err) {
          this.error = listenError(port, err);
          this.deps.log(`the local API server could not start on port ${port}`, err);
        }
      }
      const status = this.current();
      this.deps.emit(status);
      return status;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async stop(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle)
      await handle.close().catch((err: unknown) => this.deps.log("could not stop the local API server", err));
  }

  private config(): Config {
    const stored = this.deps.settings.get(CONFIG_KEY) as Partial<Config> | undefined;
    return {
      enabled: stored?.enabled === true,
      port: isPort(stored?.port) ? stored.port : DEFAULT_LOCAL_SERVER_PORT,
      corsOrigins: storedOrigins(stored?.corsOrigins),
    };
  }

  /** Generated at first use and kept: clients configured once keep working across restarts. */
  private apiKey(): string {
    const stored = this.deps.settings.get(API_KEY_KEY);
    if (typeof stored === "string" && /^[0-9a-f]{64}$/.test(stored)) return stored;
    const key = newKey();
    this.deps.settings.set(API_KEY_KEY, key);
    return key;
  }
}

/** The origins to save, as browsers send them and each once; throws invalid_input naming a bad one. */
function checkedOrigins(list: readonly string[]): string[] {
  const origins = new Set<string>();
  for (const entry of list) {
    try {
      origins.add(parseAllowedOrigin(entry));
    } catch (err) {
      throw new ApiError("invalid_input", `Allowed origins: ${(err as Error).message}`);
    }
  }
  if (origins.size > MAX_CORS_ORIGINS)
    throw new ApiError("invalid_input", `Allowed origins: at most ${MAX_CORS_ORIGINS}.`);
  return [...origins];
}

/** A saved allow-list as it was written; an entry that is not an origin (edited by hand) lets nothing in. */
function storedOrigins(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const origins = new Set<string>();
  for (const entry of value.slice(0, MAX_CORS_ORIGINS)) {
    if (typeof entry !== "string") continue;
    try {
      origins.add(parseAllowedOrigin(entry));
    } catch {
      // Skipped: only origins the setting accepts are served.
    }
  }
  return [...origins];
}

/** 32 random bytes, hex: what headless mode generates for its key too. */
function newKey(): string {
  return randomBytes(32).toString("hex");
}
