import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { cpuId } from "../electron/core/engine/native-cache";
import { testDir } from "../testing/core/temp-dir";
import { withCompilerCache } from "./compiler-cache.mjs";

const hasCcache = spawnSync("ccache", ["--version"], { stdio: "ignore" }).status === 0;
/** This process's environment without what withCompilerCache sets (npm test sets it for vitest). */
const base: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(CMAKE_(C|CXX)_COMPILER_LAUNCHER|CCACHE_.*)$/.test(k)),
);

it("compiles through ccache only where it runs and its folder can be written, keeping what is set", () => {
  const root = "/repo";
  // No ccache on the PATH: the environment as it was.
  const none = { PATH: testDir() };
  expect(withCompilerCache(none, root)).toBe(none);
  // A launcher already chosen is kept.
  const chosen = { ...base, CMAKE_CXX_COMPILER_LAUNCHER: "sccache" };
  expect(withCompilerCache(chosen, root)).toBe(chosen);
  if (!hasCcache) return;
  // A cache folder that cannot be made (under a file): no launcher, so no compile fails on it.
  const file = join(testDir(), "a-file");
  writeFileSync(file, "");
  const blocked = { ...base, CCACHE_DIR: join(file, "ccache") };
  expect(withCompilerCache(blocked, root)).toBe(blocked);
  const env = withCompilerCache({ ...base, CCACHE_DIR: join(testDir(), "ccache") }, root);
  expect(env.CMAKE_C_COMPILER_LAUNCHER).toBe("ccache");
  expect(env.CMAKE_CXX_COMPILER_LAUNCHER).toBe("ccache");
  expect(env.CCACHE_BASEDIR).toBe(root);
  // Per CPU, as the app's build cache keys it (native-cache.ts's cpuId).
  expect(env.CCACHE_NAMESPACE).toBe(
    `macaron-${createHash("sha256").update(cpuId()).digest("hex").slice(0, 16)}`,
  );
  expect(withCompilerCache({ ...base, CCACHE_DIR: join(testDir(), "c2") }, root).CCACHE_NAMESPACE).toBe(
    env.CCACHE_NAMESPACE,
  );
  const given = withCompilerCache({ ...base, CCACHE_NAMESPACE: "mine", CCACHE_BASEDIR: "/b" }, root);
  expect([given.CCACHE_NAMESPACE, given.CCACHE_BASEDIR]).toEqual(["mine", "/b"]);
});
