/**
 * Installing from a file on the machine running core, as the adapter and release controllers
 * both do it: a typed path (checked, one install at a time, the server's refusal shown) or,
 * in Electron, the native file dialog first.
 */
import type { StoreApi } from "zustand/vanilla";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";

/** The part of a controller's state an install drives. */
export interface InstallState {
  installing: boolean;
  /** The server's message for a refused install, or why the path was not sent. */
  installError: string | null;
}

/**
 * Send a typed path to `install` (trimmed; an empty one gets `emptyMessage` instead). A second
 * install while one is in flight is ignored. True when `install` resolved.
 */
export async function installFromPath(
  store: StoreApi<InstallState>,
  path: string,
  emptyMessage: string,
  install: (path: string) => Promise<void>,
): Promise<boolean> {
  const trimmed = path.trim();
  if (!trimmed) {
    store.setState({ installError: emptyMessage });
    return false;
  }
  if (store.getState().installing) return false;
  store.setState({ installing: true, installError: null });
  try {
    await install(trimmed);
    return true;
  } catch (error) {
    store.setState({ installError: errorMessage(error) });
    return false;
  } finally {
    store.setState({ installing: false });
  }
}

/**
 * Electron: the native file dialog, then `install` with the chosen path. False without a
 * dialog (the browser), when cancelled, or when it fails (shown in `installError`).
 */
export async function pickAndInstallWith(
  api: Pick<RendererApi, "platform">,
  store: StoreApi<InstallState>,
  install: (path: string) => Promise<boolean>,
): Promise<boolean> {
  const pick = api.platform.pickModelFile;
  if (!pick) return false;
  try {
    const path = await pick();
    return path ? await install(path) : false;
  } catch (error) {
    store.setState({ installError: errorMessage(error) });
    return false;
  }
}
