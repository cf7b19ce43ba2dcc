/**
 * Which URLs are "the app". Everything the window may load, every frame allowed to call the
 * IPC handlers, is decided here, so that the navigation guard and the IPC sender check can
 * never disagree. Pure (no electron import) so that it is unit-tested under plain Node.
 */
import { pathToFileURL } from "node:url";

export interface AppOrigin {
  /** The URL the window loads at start. */
  readonly entryUrl: string;
  /** True for URLs that belong to the app (same dev-server origin, or a file inside the renderer folder). */
  isAppUrl(url: string): boolean;
  /** True when the app is served by the Vite dev server (relaxes the CSP for hot reload). */
  readonly isDevServer: boolean;
  /** The dev server's origin (e.g. "http://localhost:5173"), or null in production. */
  readonly devServerOrigin: string | null;
}

/**
 * Build the app origin from the dev server URL (electron-vite sets ELECTRON_RENDERER_URL in
 * `electron-vite dev`) or, in production, from the folder that holds the built renderer.
 */
export function createAppOrigin(options: {
  devServerUrl?: string | undefined;
  rendererDir: string;
}): AppOrigin {
  if (options.devServerUrl) {
    const dev = new URL(options.devServerUrl);
    if (dev.protocol !== "http:" && dev.protocol !== "https:") {
      throw new Error(`ELECTRON_RENDERER_URL must be http(s), got ${dev.protocol}`);
    }
    const origin = dev.origin;
    return {
      entryUrl: dev.href,
      isDevServer: true,
      devServerOrigin: origin,
      isAppUrl: (url) => parseUrl(url)?.origin === origin,
    };
  }
  const index = pathToFileURL(`${options.rendererDir}/index.html`);
  // A trailing slash so that "/out/renderer-evil/x.html" does not pass as "/out/renderer".
  const dirPrefix = pathToFileURL(options.rendererDir).href.replace(/\/?$/, "/");
  return {
    entryUrl: index.href,
    isDevServer: false,
    devServerOrigin: null,
    isAppUrl: (url) => {
      const parsed = parseUrl(url);
      if (!parsed || parsed.protocol !== "file:") return false;
      // Compare the normalized href without query/hash: URL parsing resolves "..", so a
      // path that climbs out of the renderer folder no longer starts with the prefix.
      parsed.search = "";
      parsed.hash = "";
      return parsed.href.startsWith(dirPrefix);
    },
  };
}

function parseUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}
