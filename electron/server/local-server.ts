/**
 * The desktop app's local API server (Settings → "Local API server"): the same /v1 routes as
 * headless mode, and nothing else (no app API, no UI, no sign-in), on 127.0.0.1 only. Core's
 * LocalApiServer starts and stops it through this factory; Electron's main process and
 * headless mode both pass it, so the browser e2e runs the code the desktop app runs.
 */
import { LOCAL_SERVER_HOST } from "../api";
import type { LocalApiFactory } from "../core/core-types";
import { buildServer } from "./app";

export const serveLocalApi: LocalApiFactory = async (core, { port, apiKey, corsOrigins }) => {
  const app = await buildServer({
    core,
    apiKey,
    surfaces: "v1",
    // The setting's allow-list (none by default): those pages may call /v1 and Ollama's routes.
    corsOrigins,
    // Loopback: requests naming another Host are refused (DNS rebinding from a web page).
    host: LOCAL_SERVER_HOST,
    // The v1 surface serves no pages.
    rendererDir: "",
  });
  try {
    await app.listen({ host: LOCAL_SERVER_HOST, port });
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
  const address = app.server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  return { url: `http://${LOCAL_SERVER_HOST}:${bound}`, close: () => app.close() };
};
