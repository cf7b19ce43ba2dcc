/**
 * "Local API server" (Settings): the desktop app serving its /v1 model API on 127.0.0.1 for
 * editors, agents and scripts (localServer.*). The server can fail to start by itself (a port
 * taken at start-up): `localServer.changed` events keep the status live. Owned by
 * AppController; dispose() releases its subscription.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { LocalServerStatus } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";

export interface LocalServerState {
  /** null until localServer.status answered. */
  status: LocalServerStatus | null;
  /** A call that failed (a port in use is the status's own `error`). */
  error: string | null;
  busy: boolean;
}

export type LocalServerStore = StoreApi<LocalServerState>;

export class LocalServerController {
  readonly store: LocalServerStore = createStore<LocalServerState>()(() => ({
    status: null,
    error: null,
    busy: false,
  }));
  private readonly disposers: Array<() => void> = [];

  constructor(private readonly api: RendererApi) {
    this.disposers.push(api.on("localServer.changed", (status) => this.store.setState({ status })));
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
  }

  async load(): Promise<void> {
    try {
      const status = await this.api.call("localServer.status", {});
      this.store.setState({ status, error: null });
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
    }
  }

  /** Turn it on or off, or move it to `port`; resolves false when the call failed. */
  configure(change: { enabled?: boolean; port?: number }): Promise<boolean> {
    return this.run(() => this.api.call("localServer.configure", change));
  }

  regenerateKey(): Promise<boolean> {
    return this.run(() => this.api.call("localServer.regenerateKey", {}));
  }

  private async run(call: () => Promise<LocalServerStatus>): Promise<boolean> {
    this.store.setState({ busy: true, error: null });
    try {
      const status = await call();
      this.store.setState({ status });
      return true;
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ busy: false });
    }
  }
}
