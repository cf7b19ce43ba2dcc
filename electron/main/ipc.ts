/**
 * The IPC transport: the API's one invoke channel, the native file picker, confirmed external
 * links, and core events pushed to the window. Every handler first checks that the call comes
 * from the main frame of our window showing our own page (Electron security checklist:
 * "validate the sender of all IPC messages").
 *
 * Only type imports from electron, so the handlers are unit-tested with plain objects.
 */
import type { IpcMainInvokeEvent } from "electron";
import { isMethodName, type EventName, type Result } from "../api";
import type { Core } from "../core/core-types";
import { IpcChannel } from "../../common/ipc-channels";
import type { AppOrigin } from "./app-origin";
import { checkExternalUrl } from "./external-links";

/** The part of a WebContents the transport uses. */
export interface WindowContents {
  readonly id: number;
  isDestroyed(): boolean;
  send(channel: string, ...args: unknown[]): void;
}

/** The part of an IpcMainInvokeEvent the sender check reads. */
export interface InvokeSender {
  readonly sender: { readonly id: number };
  readonly senderFrame: { readonly url: string; readonly parent: unknown } | null;
}

export interface IpcRegistrar {
  handle(channel: string, listener: (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

export interface IpcTransportOptions {
  ipcMain: IpcRegistrar;
  core: Pick<Core, "dispatch" | "subscribe">;
  origin: AppOrigin;
  /** The window's contents, or null while there is no window (macOS keeps running without one). */
  getContents(): WindowContents | null;
  /** Native open dialog filtered to .gguf; null when cancelled. */
  pickModelFile(): Promise<string | null>;
  /** Ask the user, then open `url` (already validated) in the system browser. */
  openExternal(url: string): Promise<void>;
}

/**
 * True when `event` comes from the top frame of our window and that frame shows our app.
 * A subframe, another webContents, or a page that navigated elsewhere is refused.
 */
export function isTrustedSender(
  event: InvokeSender,
  contents: Pick<WindowContents, "id"> | null,
  origin: AppOrigin,
): boolean {
  const frame = event.senderFrame;
  if (!contents || event.sender.id !== contents.id) return false;
  // senderFrame is null when the frame navigated or was destroyed before we looked.
  if (!frame || frame.parent !== null) return false;
  return origin.isAppUrl(frame.url);
}

function refused(code: "forbidden" | "unknown_method" | "internal", message: string): Result<never> {
  return { ok: false, error: { code, message } };
}

/**
 * Register the IPC handlers and forward core events to the window.
 * @returns a disposer that removes the handlers and the event subscription.
 */
export function registerIpcTransport(options: IpcTransportOptions): () => void {
  const { ipcMain, core, origin } = options;
  const trusted = (event: InvokeSender): boolean => isTrustedSender(event, options.getContents(), origin);

  ipcMain.handle(IpcChannel.invoke, async (event, method, input): Promise<Result<unknown>> => {
    if (!trusted(event)) return refused("forbidden", "This page may not call the Macaron API.");
    if (!isMethodName(method)) {
      return refused("unknown_method", `Unknown method: ${String(method).slice(0, 100)}`);
    }
    try {
      return await core.dispatch(method, input, { transport: "ipc" });
    } catch (error) {
      // dispatch promises never to throw; if it does anyway, the window still gets an envelope.
      console.error(`[ipc] ${method} threw`, error);
      return refused("internal", `Internal error while running ${method}.`);
    }
  });

  ipcMain.handle(IpcChannel.pickModel, async (event): Promise<string | null> => {
    if (!trusted(event)) throw new Error("This page may not open file dialogs.");
    return options.pickModelFile();
  });

  ipcMain.handle(IpcChannel.openExternal, async (event, url): Promise<void> => {
    if (!trusted(event)) throw new Error("This page may not open links.");
    const checked = checkExternalUrl(url);
    if (!checked.ok) throw new Error(checked.reason);
    await options.openExternal(checked.url);
  });

  const unsubscribe = core.subscribe((name: EventName, payload: unknown) => {
    const contents = options.getContents();
    if (contents && !contents.isDestroyed()) contents.send(IpcChannel.event, name, payload);
  });

  return () => {
    unsubscribe();
    ipcMain.removeHandler(IpcChannel.invoke);
    ipcMain.removeHandler(IpcChannel.pickModel);
    ipcMain.removeHandler(IpcChannel.openExternal);
  };
}
