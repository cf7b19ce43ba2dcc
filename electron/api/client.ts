/**
 * What the renderer programs against. Both transports (Electron preload, HTTP + WebSocket)
 * produce an object of this type.
 */
import type { EventName, EventPayload } from "./events";
import type { MethodInput, MethodName, MethodOutput } from "./methods";

export type ApiMethods = {
  [M in MethodName]: (input: MethodInput<M>) => Promise<MethodOutput<M>>;
};

export interface ApiClient {
  /** Call a method; rejects with an ApiError carrying the server's code and message. */
  call<M extends MethodName>(method: M, input: MethodInput<M>): Promise<MethodOutput<M>>;
  /** Subscribe to an event; returns a disposer. */
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void;
  /** Which shell the UI runs in: Electron offers native dialogs. */
  readonly platform: {
    kind: "electron" | "browser";
    /** Native open-file dialog for .gguf files (Electron only); null when cancelled. */
    pickModelFile?: () => Promise<string | null>;
    /** Open a URL in the system browser after the user confirmed it (Electron only). */
    openExternal?: (url: string) => Promise<void>;
  };
}

/** The object the preload exposes as `window.macaron`. */
export interface PreloadBridge {
  invoke(method: MethodName, input: unknown): Promise<unknown>;
  subscribe(listener: (event: EventName, payload: unknown) => void): () => void;
  pickModelFile(): Promise<string | null>;
  openExternal(url: string): Promise<void>;
}
