import type { ApiClient } from "../../../electron/api";

/** The event channel's state; "reconnecting" means events may be missed until it is "open" again. */
export type ConnectionState = "connecting" | "open" | "reconnecting";

export interface ConnectionMonitor {
  readonly state: ConnectionState;
  /** Called on every state change; returns a disposer. */
  onChange(listener: (state: ConnectionState) => void): () => void;
}

/** What the UI gets: the contract's client, plus a connection monitor where the transport has one. */
export interface RendererApi extends ApiClient {
  /** Present in browser mode (WebSocket events); IPC never disconnects. */
  readonly connection?: ConnectionMonitor;
  dispose(): void;
}
