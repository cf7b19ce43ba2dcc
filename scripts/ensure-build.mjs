// Builds the app for `npm run serve` and the e2e suite only when a bundle is missing or older
// than its sources (scripts/build-freshness.mjs: the same rule as `npm start`), so that starting
// headless mode is fast when nothing changed.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { build, HEADLESS_BUILD, isStale } from "./build-freshness.mjs";

const root = new URL("..", import.meta.url).pathname;

if (!existsSync(join(root, "renderer/index.html"))) {
  console.error("ensure-build: no renderer sources yet; serving without a UI");
} else if (isStale(HEADLESS_BUILD)) {
  console.error("ensure-build: building the app (electron-vite build)…");
  // The API is useful without the UI: warn and let the server start (pages then answer 503 or the old build).
  if (build() !== 0)
    console.error("ensure-build: the UI build failed (see above); starting the server anyway");
}
