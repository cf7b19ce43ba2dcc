#!/usr/bin/env node
// `npm run setup [-- --test]`: installs everything from a fresh clone.
// - npm ci with Electron's binary download deferred, then the download tried on its own: where
//   it cannot be fetched (offline machines, CI here) the install still succeeds and `npm start`
//   falls back to headless mode instead of the whole install failing.
// - with --test: Debian's Chromium for the browser tests and python3-torch for the trainer.
import { spawnSync } from "node:child_process";

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", env: { ...process.env, ...env } });
  return r.status ?? 1;
}

if (run("npm", ["ci", "--no-audit", "--no-fund"], { ELECTRON_SKIP_BINARY_DOWNLOAD: "1" }) !== 0) {
  process.exit(1);
}

const electron = spawnSync(process.execPath, ["node_modules/electron/install.js"], {
  encoding: "utf8",
  env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: "" },
});
if (electron.status === 0) {
  console.log("setup: Electron runtime installed");
} else {
  const reason =
    (electron.stderr || "")
      .split("\n")
      .find((l) => /Error/.test(l))
      ?.trim() ?? "download failed";
  console.log(
    `setup: Electron runtime could not be downloaded (${reason}); npm start will use headless mode`,
  );
}

if (process.argv.includes("--test") && process.platform === "linux") {
  if (run("sh", ["scripts/install-test-packages.sh"]) !== 0) process.exit(1);
}
