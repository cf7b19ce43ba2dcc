#!/usr/bin/env node
// `npm run setup [-- --test]`: installs everything from a fresh clone.
// - npm ci with Electron's binary download deferred, then the download tried on its own: where
//   it cannot be fetched (offline machines, CI here) the install still succeeds and `npm start`
//   falls back to headless mode instead of the whole install failing.
// - with --test: Debian's Chromium for the browser tests and python3-torch for the trainer.
// - then llama.cpp built for this machine from node-llama-cpp's bundled source (offline), the
//   prebuilt binaries processing prompts at about half its speed here: the app's own build code
//   (electron/core/engine/native-build-cli.ts, run with the tsx npm ci just installed), which
//   reuses a cached build for the same source, compiler, CPU and GPU choice (~/.cache/macaron/
//   llama-builds, or $MACARON_NATIVE_CACHE) in seconds. Without cmake or a compiler, or when the
//   build fails, it says so in one line and set-up still succeeds on the prebuilt binaries.
//   MACARON_NATIVE_BUILD=0 or --no-native-build skips it. Compiled through ccache where it is
//   installed (scripts/compiler-cache.mjs).
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { withCompilerCache } from "./compiler-cache.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

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

const prebuilt = "the engine uses node-llama-cpp's prebuilt binaries";
if (process.argv.includes("--no-native-build") || process.env.MACARON_NATIVE_BUILD === "0") {
  console.log(
    `setup: llama.cpp build for this machine skipped (MACARON_NATIVE_BUILD=0 or --no-native-build); ${prebuilt}`,
  );
} else {
  // The CLI prints its own closing line and exits 0 whatever the build did; anything else is
  // the step itself failing to start (tsx missing, say), which must not fail set-up either.
  const build = spawnSync(process.execPath, ["--import", "tsx", "electron/core/engine/native-build-cli.ts"], {
    stdio: "inherit",
    cwd: root,
    env: withCompilerCache(process.env, root),
  });
  if (build.status !== 0) {
    console.log(
      `setup: llama.cpp not built for this machine (the build step ended with ${build.signal ?? `exit code ${build.status}`}); ${prebuilt}`,
    );
  }
}
