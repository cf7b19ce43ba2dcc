/**
 * "Local API server" (Settings): the desktop app serving its /v1 model API on 127.0.0.1 for
 * editors, agents and scripts (localServer.*). The server can fail to start by itself (a port
 * taken at start-up): `localServer.changed` events keep the status live. Owned by
 * AppController; dispose() releases its subscription.
 */
import type { StoreApi } from "zustand/vanilla";
import {
  MAX_CORS_ORIGINS,
  parseAllowedOrigin,
  type LocalServerStatus,
  type MethodInput,
} from "../../../electron/api";
import { errorMessage, type RendererApi } from "../api";
import { StatusController, type StatusState } from "./status-controller";

/** A port in use is the status's own `error`; `error` here is a call that failed. */
export type LocalServerState = StatusState<LocalServerStatus>;
export type LocalServerStore = StoreApi<LocalServerState>;

/** What adding an origin came to: `error` is the field's own (not an origin, already listed). */
export interface OriginAdded {
  saved: boolean;
  error: string | null;
}

export class LocalServerController extends StatusController<LocalServerStatus> {
  constructor(private readonly api: RendererApi) {
    super(
      (onStatus) => api.on("localServer.changed", onStatus),
      () => api.call("localServer.status", {}),
    );
  }

  /** Turn it on or off, move it to `port`, or set its origins; resolves false when the call failed. */
  configure(change: MethodInput<"localServer.configure">): Promise<boolean> {
    return this.run(() => this.api.call("localServer.configure", change));
  }

  regenerateKey(): Promise<boolean> {
    return this.run(() => this.api.call("localServer.regenerateKey", {}));
  }

  /**
   * Adds the origin the user typed to the CORS allow-list, checked with the rules the main side
   * applies (common/cors-origins.ts) so a bad entry is explained at the field without a call.
   * A call that fails is the section's `error`, as for the other changes.
   */
  async addCorsOrigin(text: string): Promise<OriginAdded> {
    const current = this.store.getState().status?.corsOrigins ?? [];
    let origin: string;
    try {
      origin = parseAllowedOrigin(text);
    } catch (err) {
      const message = errorMessage(err);
      return { saved: false, error: message.charAt(0).toUpperCase() + message.slice(1) };
    }
    if (current.includes(origin)) return { saved: false, error: `${origin} is already in the list.` };
    if (current.length >= MAX_CORS_ORIGINS)
      return { saved: false, error: `At most ${MAX_CORS_ORIGINS} origins: remove one first.` };
    return { saved: await this.configure({ corsOrigins: [...current, origin] }), error: null };
  }

  removeCorsOrigin(origin: string): Promise<boolean> {
    const current = this.store.getState().status?.corsOrigins ?? [];
    return this.configure({ corsOrigins: current.filter((o) => o !== origin) });
  }
}
