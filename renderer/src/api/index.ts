import type { RendererApi } from "./connection";
import { HttpApiClient } from "./http-client";
import { IpcApiClient } from "./ipc-client";

export type { ConnectionMonitor, ConnectionState, RendererApi } from "./connection";
export { errorMessage } from "./envelope";

/** The Electron preload's bridge when present, else the headless server over HTTP. */
export function createApiClient(win: Window = window): RendererApi {
  if (win.macaron) return new IpcApiClient(win.macaron);
  return new HttpApiClient({ origin: win.location.origin });
}
