/**
 * The object the preload exposes as `window.macaron`. Built from an injected IPC port so
 * that it is unit-tested without Electron; index.ts passes the real ipcRenderer. The page
 * gets these four functions only, never ipcRenderer itself.
 */
import { isEventName, isMethodName, type EventName, type PreloadBridge, type Result } from "../api";
import { IpcChannel } from "../../common/ipc-channels";

/** The part of ipcRenderer the bridge uses. Listener arguments arrive as sent by main. */
export interface IpcPort {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

/**
 * Build the bridge.
 *
 * `invoke` resolves with the Result envelope from core (`{ok:true,value}` or
 * `{ok:false,error:{code,message}}`); a name that is not an API method is refused here,
 * without a round trip, with an `unknown_method` envelope.
 */
export function createPreloadBridge(ipc: IpcPort): PreloadBridge {
  return {
    invoke(method, input) {
      if (!isMethodName(method)) {
        const refused: Result<never> = {
          ok: false,
          error: { code: "unknown_method", message: `Unknown method: ${String(method).slice(0, 100)}` },
        };
        return Promise.resolve(refused);
      }
      return ipc.invoke(IpcChannel.invoke, method, input);
    },
    subscribe(listener) {
      const onEvent = (_event: unknown, name: unknown, payload: unknown): void => {
        if (isEventName(name)) listener(name satisfies EventName, payload);
      };
      ipc.on(IpcChannel.event, onEvent);
      let subscribed = true;
      return () => {
        if (!subscribed) return;
        subscribed = false;
        ipc.removeListener(IpcChannel.event, onEvent);
      };
    },
    async pickModelFile() {
      const path = await ipc.invoke(IpcChannel.pickModel);
      return typeof path === "string" ? path : null;
    },
    async openExternal(url) {
      if (typeof url !== "string") throw new TypeError("openExternal needs a URL string");
      await ipc.invoke(IpcChannel.openExternal, url);
    },
  } satisfies PreloadBridge;
}
