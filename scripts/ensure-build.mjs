// Builds the UI for `npm run serve` only when out/renderer is missing or older than its sources,
// so that starting headless mode is fast when nothing changed.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const built = join(root, "out/renderer/index.html");
const sources = ["renderer", "electron/api"].map((d) => join(root, d));

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path)
    .filter((name) => name !== "node_modules" && !name.startsWith("."))
    .reduce((max, name) => Math.max(max, newestMtime(join(path, name))), stat.mtimeMs);
}

if (!existsSync(join(root, "renderer/index.html"))) {
  console.error("ensure-build: no renderer sources yet; serving without a UI");
} else if (!existsSync(built) || statSync(built).mtimeMs < Math.max(...sources.map(newestMtime))) {
  console.error("ensure-build: building the UI (npx electron-vite build)…");
  const result = spawnSync("npx", ["electron-vite", "build"], {
    cwd: root,
    stdio: ["ignore", 2, 2],
  });
  // The API is useful without the UI: warn and let the server start (pages then answer 503 or the old build).
  if (result.status !== 0)
    console.error("ensure-build: the UI build failed (see above); starting the server anyway");
}
