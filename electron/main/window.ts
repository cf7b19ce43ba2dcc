/**
 * The one application window, locked down: isolated, sandboxed preload, no Node in the page.
 */
import { BrowserWindow, nativeTheme } from "electron";
import type { AppOrigin } from "./app-origin";
import { guardWebContents } from "./security";

/** Create the window, guard its navigation and load the app. Shown once it has painted. */
export function createMainWindow(origin: AppOrigin, preloadPath: string): BrowserWindow {
  const window = new BrowserWindow({
    width: 1200,
    height: 800,
    minWidth: 640,
    minHeight: 480,
    title: "Macaron",
    show: false,
    // Matches the renderer's theme colors so the first frame does not flash white in dark mode.
    backgroundColor: nativeTheme.shouldUseDarkColors ? "#1b1b1f" : "#ffffff",
    autoHideMenuBar: true,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: true,
    },
  });
  guardWebContents(window.webContents, origin, () => (window.isDestroyed() ? null : window));
  window.once("ready-to-show", () => window.show());
  window.loadURL(origin.entryUrl).catch((error: unknown) => {
    console.error(`[window] could not load ${origin.entryUrl}`, error);
  });
  return window;
}
