// Whether the electron-vite bundles are older than their sources, and the build that renews them:
// shared by `npm start` (scripts/start.mjs) and the benchmarks that run the built server
// (bench/serve.ts), so both mean the same thing by "stale".
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * What the bundles are built from (tests and dot folders aside, see newestMtime). The renderer
 * bundles the demo's suggestions (resources/demo/suggestions.json): a new measurement must rebuild.
 */
const SOURCES = [
  "electron",
  "native",
  "common",
  "renderer",
  "resources/demo/suggestions.json",
  "electron.vite.config.ts",
  "scripts/dependency-import-meta.mjs",
  "package.json",
];

/** What headless mode runs: the server, its engine and the UI it serves. */
export const HEADLESS_BUILD = ["out/main/cli.js", "out/main/engine.js", "out/renderer/index.html"];

/** Newest modification time under `path` (0 when missing), skipping tests and dot folders. */
function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return /\.test\.tsx?$/.test(path) ? 0 : stat.mtimeMs;
  return readdirSync(path)
    .filter((name) => name !== "node_modules" && !name.startsWith("."))
    .reduce((max, name) => Math.max(max, newestMtime(join(path, name))), 0);
}

/** Whether one of `outputs` (paths under the repository) is missing or older than the sources. */
export function isStale(outputs) {
  const oldestOutput = Math.min(
    ...outputs.map((p) => (existsSync(join(root, p)) ? statSync(join(root, p)).mtimeMs : 0)),
  );
  return oldestOutput < Math.max(...SOURCES.map((p) => newestMtime(join(root, p))));
}

/** `electron-vite build`; its output goes to stderr (a caller's stdout stays its own). Exit status. */
export function build() {
  return spawnSync(
    process.execPath,
    [join(root, "node_modules", "electron-vite", "bin", "electron-vite.js"), "build"],
    { cwd: root, stdio: ["ignore", 2, 2] },
  ).status;
}
