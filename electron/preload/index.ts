/**
 * Sandboxed preload: exposes `window.macaron` (a PreloadBridge) through contextBridge.
 * It may import only `electron` and electron/api; it is bundled to CommonJS because
 * sandboxed preloads cannot be ES modules.
 */
import { contextBridge, ipcRenderer } from "electron";
import { createPreloadBridge } from "./bridge";

contextBridge.exposeInMainWorld("macaron", createPreloadBridge(ipcRenderer));
