/**
 * "Local API server" (Settings): the desktop app serving its /v1 model API on 127.0.0.1 for
 * editors, agents and scripts (localServer.*). The server can fail to start by itself (a port
 * taken at start-up): `localServer.changed` events keep the status live. Owned by
 * AppController; dispose() releases its subscription.
 */
import type { StoreApi } from "zustand/vanilla";
import type { LocalServerStatus } from "../../../electron/api";
import type { RendererApi } from "../api";
import { StatusController, type StatusState } from "./status-controller";

/** A port in use is the status's own `error`; `error` here is a call that failed. */
export type LocalServerState = StatusState<LocalServerStatus>;
export type LocalServerStore = StoreApi<LocalServerState>;

export class LocalServerController extends StatusController<LocalServerStatus> {
  constructor(private readonly api: RendererApi) {
    super(
      (onStatus) => api.on("localServer.changed", onStatus),
      () => api.call("localServer.status", {}),
    );
  }

  /** Turn it on or off, or move it to `port`; resolves false when the call failed. */
  configure(change: { enabled?: boolean; port?: number }): Promise<boolean> {
    return this.run(() => this.api.call("localServer.configure", change));
  }

  regenerateKey(): Promise<boolean> {
    return this.run(() => this.api.call("localServer.regenerateKey", {}));
  }
}
