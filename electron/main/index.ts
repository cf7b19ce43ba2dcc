/**
 * Electron main process: one instance, one locked-down window, core (database + engine
 * supervisor) behind the IPC transport, and an orderly shutdown that closes core — and with
 * it the engine process — before the app exits.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  app,
  dialog,
  ipcMain,
  safeStorage,
  session,
  utilityProcess,
  type BrowserWindow,
  type OpenDialogOptions,
} from "electron";
import { createCore } from "../core";
import type { Core } from "../core/core-types";
import { SafeStorageTokenStore } from "../core/hub/token-store";
import { serveLocalApi } from "../server/local-server";
import { createAppOrigin } from "./app-origin";
import { createUtilityEngineSpawner } from "./engine-process";
import { registerIpcTransport } from "./ipc";
import { createUtilityNodeChildStarter } from "./node-child";
import { applySessionPolicy, confirmAndOpenExternal } from "./security";
import { createMainWindow } from "./window";

/** A hung engine must not keep the app from quitting; after this, exit anyway. */
const CLOSE_TIMEOUT_MS = 5_000;

const here = dirname(fileURLToPath(import.meta.url));

function start(): void {
  // Lets tests and power users keep separate profiles (e2e gives each run a temp dir).
  const dataDirOverride = process.env.MACARON_DATA_DIR;
  if (dataDirOverride) app.setPath("userData", resolve(dataDirOverride));

  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  app.enableSandbox();

  const origin = createAppOrigin({
    // electron-vite dev sets this; a packaged app never loads from a dev server.
    devServerUrl: app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL,
    rendererDir: join(here, "../renderer"),
  });
  const preloadPath = join(here, "../preload/index.js");

  let window: BrowserWindow | null = null;
  let core: Core | null = null;
  let disposeIpc: (() => void) | null = null;
  let shutdown: "running" | "closing" | "closed" = "running";

  const openWindow = (): void => {
    const created = createMainWindow(origin, preloadPath);
    created.on("closed", () => {
      if (window === created) window = null;
    });
    window = created;
  };

  // A window only exists while core runs: not before start-up finished, not while quitting.
  const canOpenWindow = (): boolean => !window && core !== null && shutdown === "running";

  app.on("second-instance", () => {
    if (canOpenWindow()) openWindow();
    if (!window) return;
    if (window.isMinimized()) window.restore();
    window.focus();
  });

  app.on("window-all-closed", () => {
    // macOS apps stay alive without windows; "activate" brings one back.
    if (process.platform !== "darwin") app.quit();
  });

  app.on("activate", () => {
    if (canOpenWindow()) openWindow();
  });

  app.on("before-quit", (event) => {
    if (shutdown === "closed") return;
    event.preventDefault();
    if (shutdown === "closing") return;
    shutdown = "closing";
    void closeAll().finally(() => {
      shutdown = "closed";
      app.quit();
    });
  });

  const closeAll = async (): Promise<void> => {
    disposeIpc?.();
    disposeIpc = null;
    if (!core) return;
    const closing = core.close().catch((error: unknown) => console.error("[main] core.close failed", error));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((done) => {
      timer = setTimeout(() => {
        console.error(`[main] core did not close within ${CLOSE_TIMEOUT_MS} ms; exiting anyway`);
        done();
      }, CLOSE_TIMEOUT_MS);
    });
    await Promise.race([closing, timeout]);
    clearTimeout(timer);
    core = null;
  };

  const boot = async (): Promise<void> => {
    await app.whenReady();
    applySessionPolicy(session.defaultSession, origin);
    const started = await createCore({
      dataDir: app.getPath("userData"),
      spawnEngine: createUtilityEngineSpawner(join(here, "engine.js")),
      // The code sandbox and the llama.cpp build run as utility processes too (runAsNode fuse).
      startNodeChild: createUtilityNodeChildStarter((path, args, options) =>
        utilityProcess.fork(path, args, options),
      ),
      // The hub access token, encrypted with the OS keychain's key.
      tokenStore: new SafeStorageTokenStore(safeStorage, app.getPath("userData")),
      // Settings → "Local API server": /v1 on 127.0.0.1 for editors, agents and scripts.
      localApi: serveLocalApi,
    });
    core = started;
    disposeIpc = registerIpcTransport({
      ipcMain,
      core: started,
      origin,
      getContents: () => (window && !window.isDestroyed() ? window.webContents : null),
      pickModelFile: async () => {
        const options: OpenDialogOptions = {
          title: "Open a GGUF model",
          properties: ["openFile"],
          filters: [{ name: "GGUF models", extensions: ["gguf"] }],
        };
        const result = window
          ? await dialog.showOpenDialog(window, options)
          : await dialog.showOpenDialog(options);
        return result.canceled ? null : (result.filePaths[0] ?? null);
      },
      openExternal: async (url) => {
        await confirmAndOpenExternal(window, url);
      },
    });
    openWindow();
  };

  boot().catch((error: unknown) => {
    // Without core there is nothing to show; say why instead of leaving a blank window.
    const message = error instanceof Error ? error.message : String(error);
    console.error("[main] start-up failed", error);
    dialog.showErrorBox("Macaron could not start", message);
    app.exit(1);
  });
}

start();
