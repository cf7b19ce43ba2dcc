import type { PreloadBridge } from "../../electron/api";

declare global {
  interface Window {
    /** Exposed by the Electron preload; absent when the UI is served by the headless server. */
    macaron?: PreloadBridge;
  }
}

export {};
