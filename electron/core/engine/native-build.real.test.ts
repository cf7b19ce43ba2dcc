/**
 * The real build for this machine: the app's NativeBuild compiles node-llama-cpp's bundled
 * llama.cpp source (offline, 8 minutes of both cores here) into a copy of node-llama-cpp —
 * the app's own package keeps its prebuilt binaries for every other test — and llama.cpp then
 * loads that build and generates. Then the set-up's cache (native-cache.ts): that build stored,
 * and installed from the cache into a second fresh copy with no build run at all, which llama.cpp
 * loads as its local build. The build here never reads the app's build cache: it is the test of
 * the build. Under `npm test` with ccache installed (scripts/compiler-cache.mjs) its compiler
 * calls go through ccache, which hands back the objects of an earlier compile of the same source
 * (set-up's): 22 s instead of 8 minutes; CMake, the link, the load and the generation still run.
 * Both copies start from the prebuilt state whatever the app's package holds (set-up builds
 * into that one). Speed of the result: bench/native-build.ts.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it, onTestFinished } from "vitest";
import type { EngineBuild } from "../../api";
import { writeFixtures } from "../../../native/gguf/fixtures";
import { copyNodeLlamaCpp } from "../../../testing/engine/node-llama-cpp-copy";
import { suiteDir, testDir } from "../../../testing/core/temp-dir";
import { hasLocalBuild, NativeBuild, type BuildRunner } from "./native-build";
import {
  cacheKey,
  ensureNativeBuild,
  findToolchain,
  keyInputs,
  readBuildMarker,
  storeBuild,
} from "./native-cache";

/** The fixture model: the second test generates with it too. */
const fixtures = suiteDir("macaron-native-build-real-");
/**
 * The first test's node-llama-cpp copy, which the second test's cache is made from. The copies
 * are not temp folders: they live in node_modules, where their bare imports resolve.
 */
let firstCopy: string | undefined;
afterAll(() => {
  if (firstCopy) rmSync(firstCopy, { recursive: true, force: true });
});

/** Load `model` with the node-llama-cpp at `packageDir` in a fresh process; greedy 8 tokens. */
function generateWith(packageDir: string, model: string): { buildType: string; text: string } {
  const script = `
    const nlc = await import(${JSON.stringify(pathToFileURL(join(packageDir, "dist", "index.js")).href)});
    const llama = await nlc.getLlama({ gpu: false, maxThreads: 1, build: "never", progressLogs: false });
    const model = await llama.loadModel({ modelPath: ${JSON.stringify(model)} });
    const context = await model.createContext({ contextSize: 256, sequences: 1, threads: 1 });
    const session = new nlc.LlamaCompletion({ contextSequence: context.getSequence() });
    const text = await session.generateCompletion("hello", { maxTokens: 8, temperature: 0 });
    console.log(JSON.stringify({ buildType: llama.buildType, text }));
    await llama.dispose();`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").at(-1)!) as { buildType: string; text: string };
}

/** A build that reports no step (and does not end) for this long has hung. */
const BUILD_STALL_MS = 10 * 60_000;

/** The first test's copy holding the real build, and the fixture model. */
let built: { packageDir: string; model: string } | null = null;

it(
  "builds llama.cpp from the bundled source; the local build loads and generates",
  async () => {
    const { root, packageDir } = copyNodeLlamaCpp(".macaron-native-build-test", { perProcess: true });
    firstCopy = root;
    const model = (await writeFixtures(fixtures.path)).basePath;
    expect(hasLocalBuild(packageDir)).toBe(false);

    const events: EngineBuild[] = [];
    let lastEvent = Date.now();
    const build = new NativeBuild({
      packageDir,
      engineInfo: null,
      relaunch: null,
      emit: (b) => {
        events.push(b);
        lastEvent = Date.now();
      },
    });
    // A hang is a build that stops reporting steps, not one that is slow: on a loaded machine
    // (two compiles sharing 2 cores) it took over 20 minutes, steps still coming.
    let watchdog: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      watchdog = setInterval(() => {
        if (Date.now() - lastEvent > BUILD_STALL_MS)
          reject(new Error(`the build reported no step for ${BUILD_STALL_MS / 60_000} minutes`));
      }, 5_000);
    });
    try {
      await Promise.race([build.build().then(() => build.done), stalled]);
    } finally {
      clearInterval(watchdog);
    }
    const status = await build.status();
    expect(status.error).toBeNull();
    expect(status.state).toBe("built");
    expect(hasLocalBuild(packageDir)).toBe(true);
    // What was compiled carries the app's patches (llama-patches.ts).
    expect(
      readFileSync(join(packageDir, "llama", "llama.cpp", "src", "llama-kv-cache.cpp"), "utf8"),
    ).toContain("llama_kv_cache_clear_new_buffer");
    // Progress came from the build's own step counter: it rose, and never went back.
    const progress = events.filter((e) => e.state === "building").map((e) => e.progress ?? 0);
    expect(progress.length).toBeGreaterThan(5);
    expect(progress.every((p, i) => i === 0 || p >= progress[i - 1]!)).toBe(true);
    expect(Math.max(...progress)).toBeGreaterThan(0.9);

    const local = generateWith(packageDir, model);
    expect(local.buildType).toBe("localBuild");
    expect(local.text.length).toBeGreaterThan(0);
    built = { packageDir, model };
  },
  // The last resort only: a stalled build fails at BUILD_STALL_MS without a step.
  60 * 60_000,
);

it("a cache hit installs that build into a fresh copy, without building; llama.cpp loads it as its local build", async () => {
  expect(built, "needs the build of the test above").not.toBeNull();
  const cache = testDir("macaron-native-cache-real-");
  const toolchain = findToolchain(process.env);
  if ("missing" in toolchain) throw new Error(toolchain.missing);
  const inputs = keyInputs({ packageDir: built!.packageDir, gpu: false, toolchain });
  await storeBuild(built!.packageDir, cache, cacheKey(inputs), inputs);

  const fresh = copyNodeLlamaCpp(".macaron-native-cache-test", { perProcess: true });
  onTestFinished(() => rmSync(fresh.root, { recursive: true, force: true }));
  expect(hasLocalBuild(fresh.packageDir)).toBe(false);
  const noBuild: BuildRunner = () => Promise.reject(new Error("a cache hit must not build"));
  const result = await ensureNativeBuild({
    packageDir: fresh.packageDir,
    env: process.env,
    cacheRoot: cache,
    gpu: false,
    runner: noBuild,
    print: (line) => console.log(line),
  });
  expect(result).toMatchObject({ outcome: "cached", key: cacheKey(inputs) });
  expect(readBuildMarker(fresh.packageDir)).toEqual({ key: cacheKey(inputs), gpu: false });
  const local = generateWith(fresh.packageDir, built!.model);
  expect(local.buildType).toBe("localBuild");
  expect(local.text.length).toBeGreaterThan(0);
});
