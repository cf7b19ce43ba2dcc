// The compiler cache for llama.cpp builds run by set-up and by `npm test`. When ccache is on the
// PATH (scripts/install-test-packages.sh installs it for the tests) and its folder can be written,
// CMake compiles through it: CMake (3.17+) takes CMAKE_C_COMPILER_LAUNCHER /
// CMAKE_CXX_COMPILER_LAUNCHER from the environment. node-llama-cpp turns llama.cpp's own ccache
// option off and names its build folder after the CMake options it is given, so the launcher
// goes through the environment, where it changes neither the build folder nor the app's
// build-cache key (electron/core/engine/native-cache.ts).
// - CCACHE_BASEDIR (the repository) makes the paths relative, so the real-build test's copy of
//   node-llama-cpp (under node_modules) hits what set-up compiled there: same source, same
//   flags. The compiler then sees relative paths too: `__FILE__` in llama.cpp's assertion
//   messages reads `../../llama.cpp/…` instead of an absolute path; the code is the same.
// - CCACHE_NAMESPACE names this CPU (common/cpu-id.mjs, as the app's build cache does): the build
//   compiles with -march=native, and a cache folder carried to another CPU must not hand back
//   objects built for this one.
// A launcher, base folder or namespace already set in the environment is kept (one set in
// ccache.conf is overridden).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, mkdirSync } from "node:fs";
import { cpuId } from "../common/cpu-id.mjs";

/** Whether ccache runs here and its folder can be written. */
function cacheUsable(env) {
  const r = spawnSync("ccache", ["--get-config", "cache_dir"], { env, encoding: "utf8", timeout: 10_000 });
  const dir = r.status === 0 ? r.stdout.trim() : "";
  if (dir === "") return false;
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** `env` with the ccache launcher added when ccache can be used here; `env` itself otherwise. */
export function withCompilerCache(env, root) {
  if (env.CMAKE_C_COMPILER_LAUNCHER || env.CMAKE_CXX_COMPILER_LAUNCHER) return env;
  if (!cacheUsable(env)) return env;
  return {
    ...env,
    CMAKE_C_COMPILER_LAUNCHER: "ccache",
    CMAKE_CXX_COMPILER_LAUNCHER: "ccache",
    CCACHE_BASEDIR: env.CCACHE_BASEDIR || root,
    CCACHE_NAMESPACE:
      env.CCACHE_NAMESPACE || `macaron-${createHash("sha256").update(cpuId()).digest("hex").slice(0, 16)}`,
  };
}
