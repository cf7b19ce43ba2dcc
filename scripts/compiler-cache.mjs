// The compiler cache for llama.cpp builds run by set-up and by the tests. When ccache is on the
// PATH (scripts/install-test-packages.sh installs it for the tests), CMake compiles through it:
// CMake (3.17+) takes CMAKE_C_COMPILER_LAUNCHER / CMAKE_CXX_COMPILER_LAUNCHER from the
// environment. node-llama-cpp turns llama.cpp's own ccache option off and names its build folder
// after the CMake options it is given, so the launcher goes through the environment, where it
// changes neither the build folder nor the app's build-cache key. CCACHE_BASEDIR (the repository)
// makes the paths relative, so the real-build test's copy of node-llama-cpp (under node_modules)
// hits what set-up compiled: same source, same flags. The test still configures, links, loads and
// generates; a changed source or patch compiles again. A launcher or base folder already set is
// kept.
import { spawnSync } from "node:child_process";

/** `env` with the ccache launcher added when ccache runs here; `env` itself otherwise. */
export function withCompilerCache(env, root) {
  if (env.CMAKE_C_COMPILER_LAUNCHER || env.CMAKE_CXX_COMPILER_LAUNCHER) return env;
  const probe = spawnSync("ccache", ["--version"], { env, stdio: "ignore" });
  if (probe.status !== 0) return env;
  return {
    ...env,
    CMAKE_C_COMPILER_LAUNCHER: "ccache",
    CMAKE_CXX_COMPILER_LAUNCHER: "ccache",
    CCACHE_BASEDIR: env.CCACHE_BASEDIR || root,
  };
}
