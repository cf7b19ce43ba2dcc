import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it, onTestFinished } from "vitest";
import { copyNodeLlamaCpp } from "../../../testing/engine/node-llama-cpp-copy";
import { hasLocalBuild, localBuildPaths, type BuildRunner } from "./native-build";
import {
  cachedEntry,
  cacheKey,
  completeBuildFolder,
  defaultCacheRoot,
  ensureNativeBuild,
  findToolchain,
  keyInputs,
  probeBuild,
  readBuildMarker,
  type EnsureOptions,
  type Probe,
} from "./native-cache";
import { testDir } from "../../../testing/core/temp-dir";

// A stand-in node-llama-cpp folder, runner (the "build" writes the files node-llama-cpp looks
// for) and probe (llama.cpp "loads" a complete build): the real build and load are in
// native-build.real.test.ts.
/** A folder for this test, removed when it finishes. */
function scratch(name: string): string {
  return testDir(`macaron-native-cache-${name}-`);
}

async function fakePackage(bundle = "llama.cpp source v1"): Promise<string> {
  const dir = scratch("pkg");
  await mkdir(join(dir, "llama"), { recursive: true });
  await writeFile(join(dir, "package.json"), JSON.stringify({ version: "3.21.1" }));
  await writeFile(join(dir, "llama", "gitRelease.bundle"), bundle);
  return dir;
}

/** What `node-llama-cpp source download` leaves: the addon, its metadata, buildDone.status, lastBuild.json. */
async function writeBuild(dir: string, addon = "addon v1"): Promise<void> {
  const { builds, lastBuild } = localBuildPaths(dir);
  const release = join(builds, "linux-x64", "Release");
  await mkdir(release, { recursive: true });
  await writeFile(join(release, "llama-addon.node"), addon);
  await writeFile(join(release, "_nlcBuildMetadata.json"), "{}");
  await writeFile(join(builds, "linux-x64", "buildDone.status"), "");
  // The CMake tree next to Release/: not needed to load, not cached.
  await mkdir(join(builds, "linux-x64", "CMakeFiles"), { recursive: true });
  await writeFile(join(builds, "linux-x64", "CMakeFiles", "big.o"), "object");
  await writeFile(lastBuild, JSON.stringify({ folderName: "linux-x64" }));
}

/**
 * node-llama-cpp's CLI as the build runs it: `source download --skipBuild` (the clone) does
 * nothing here; `source build` prints `lines` and leaves a build. `calls` counts the builds.
 */
function fakeRunner(
  options: { code?: number; lines?: string[]; addon?: string } = {},
): BuildRunner & { calls: number } {
  const runner = async (command: Parameters<BuildRunner>[0], onLine: (line: string) => void) => {
    if (command.args.includes("--skipBuild")) return { code: 0, signal: null };
    runner.calls++;
    for (const line of options.lines ?? [
      "[1/2] Building C object ggml.c.o",
      "[2/2] Linking llama-addon.node",
    ])
      onLine(line);
    if ((options.code ?? 0) === 0) await writeBuild(command.cwd!, options.addon);
    return { code: options.code ?? 0, signal: null };
  };
  runner.calls = 0;
  return runner;
}

/** llama.cpp "loads" a complete local build; `fails` first loads crash as a build for another CPU would. */
function fakeProbe(fails = 0): Probe & { calls: number } {
  const probe = (packageDir: string) => {
    probe.calls++;
    if (probe.calls <= fails) return Promise.reject(new Error("llama.cpp did not load (SIGILL): "));
    return Promise.resolve({
      buildType: completeBuildFolder(packageDir) ? "localBuild" : "prebuilt",
      gpu: false as const,
    });
  };
  probe.calls = 0;
  return probe;
}

const toolchain = { cmake: "cmake version 3.25.1", compiler: "c++: c++ (Debian 12.2.0-14) 12.2.0" };

function options(packageDir: string, cacheRoot: string | null, extra: Partial<EnsureOptions> = {}) {
  const printed: string[] = [];
  const opts: EnsureOptions = {
    packageDir,
    env: process.env,
    cacheRoot,
    gpu: false,
    toolchain,
    cpu: "Test CPU avx2",
    // A stand-in package has no llama.cpp clone to patch (llama-patches.real.test.ts patches one).
    applyPatches: () => Promise.resolve(),
    applyAddonPatches: () => Promise.resolve(() => Promise.resolve()),
    print: (line) => printed.push(line),
    ...extra,
  };
  return { opts, printed };
}

describe("cache key", () => {
  it("changes with each input: version, source bytes, the app's patches, platform, arch, GPU, CPU, compiler, cmake", async () => {
    const dir = await fakePackage();
    const base = keyInputs({ packageDir: dir, gpu: false, toolchain, cpu: "Test CPU avx2" });
    const key = cacheKey(base);
    expect(key).toMatch(/^[0-9a-f]{24}$/);
    expect(cacheKey({ ...base })).toBe(key);
    for (const name of Object.keys(base)) {
      expect(cacheKey({ ...base, [name]: `${base[name]}-other` }), name).not.toBe(key);
    }
    expect(Object.keys(base).sort()).toEqual(
      ["arch", "cmake", "compiler", "cpu", "gpu", "nodeLlamaCpp", "patches", "platform", "source"].sort(),
    );
    const patched = await fakePackage("llama.cpp source v1 patched");
    expect(
      cacheKey(keyInputs({ packageDir: patched, gpu: false, toolchain, cpu: "Test CPU avx2" })),
    ).not.toBe(key);
    expect(cacheKey(keyInputs({ packageDir: dir, gpu: "auto", toolchain, cpu: "Test CPU avx2" }))).not.toBe(
      key,
    );
  });

  it("lives in $MACARON_NATIVE_CACHE, else $XDG_CACHE_HOME/macaron/llama-builds", () => {
    expect(defaultCacheRoot({ MACARON_NATIVE_CACHE: "/c" })).toBe("/c");
    expect(defaultCacheRoot({ XDG_CACHE_HOME: "/x" })).toBe(join("/x", "macaron", "llama-builds"));
    expect(defaultCacheRoot({})).toMatch(/[\\/]\.cache[\\/]macaron[\\/]llama-builds$/);
  });
});

describe("ensureNativeBuild", () => {
  it("a miss builds and stores; the next (fresh) package gets the build from the cache without building", async () => {
    const cache = scratch("cache");
    const first = await fakePackage();
    const runner = fakeRunner();
    const built = await ensureNativeBuild(options(first, cache, { runner, probe: fakeProbe() }).opts);
    expect(built).toMatchObject({ outcome: "built", gpu: false });
    expect(runner.calls).toBe(1);
    const key = built.outcome === "built" ? built.key : "";
    const entry = cachedEntry(cache, key);
    expect(entry).toEqual({ dir: join(cache, key), folderName: "linux-x64" });
    // Only what loading needs is kept.
    expect(existsSync(join(cache, key, "localBuilds", "linux-x64", "Release", "llama-addon.node"))).toBe(
      true,
    );
    expect(existsSync(join(cache, key, "localBuilds", "linux-x64", "CMakeFiles"))).toBe(false);
    expect(readFileSync(join(cache, `${key}.log`), "utf8")).toContain("[2/2] Linking llama-addon.node");

    const second = await fakePackage();
    const probe = fakeProbe();
    const hit = await ensureNativeBuild(options(second, cache, { runner, probe }).opts);
    expect(hit).toMatchObject({ outcome: "cached", key });
    expect(runner.calls).toBe(1);
    expect(probe.calls).toBe(1);
    expect(completeBuildFolder(second)).toBe("linux-x64");
    expect(
      readFileSync(join(localBuildPaths(second).builds, "linux-x64", "Release", "llama-addon.node"), "utf8"),
    ).toBe("addon v1");
    expect(readBuildMarker(second)).toEqual({ key, gpu: false });
  });

  it("another source is another key: a miss, built again", async () => {
    const cache = scratch("cache");
    const runner = fakeRunner();
    const a = await ensureNativeBuild(
      options(await fakePackage("v1"), cache, { runner, probe: fakeProbe() }).opts,
    );
    const b = await ensureNativeBuild(
      options(await fakePackage("v2"), cache, { runner, probe: fakeProbe() }).opts,
    );
    expect([a.outcome, b.outcome]).toEqual(["built", "built"]);
    expect(runner.calls).toBe(2);
  });

  it("a cached build that does not load is deleted and rebuilt", async () => {
    const cache = scratch("cache");
    const runner = fakeRunner({ addon: "addon v1" });
    const first = await ensureNativeBuild(
      options(await fakePackage(), cache, { runner, probe: fakeProbe() }).opts,
    );
    expect(first.outcome).toBe("built");

    const pkg = await fakePackage();
    const rebuilt = fakeRunner({ addon: "addon v2" });
    const { opts, printed } = options(pkg, cache, { runner: rebuilt, probe: fakeProbe(1) });
    const result = await ensureNativeBuild(opts);
    expect(result.outcome).toBe("built");
    expect(rebuilt.calls).toBe(1);
    expect(printed[0]).toMatch(
      /^cached build [0-9a-f]{24} does not load \(llama\.cpp did not load \(SIGILL\)/,
    );
    // The new build replaced the broken entry.
    const key = result.outcome === "built" ? result.key : "";
    expect(
      readFileSync(join(cache, key, "localBuilds", "linux-x64", "Release", "llama-addon.node"), "utf8"),
    ).toBe("addon v2");
  });

  it("a failed compile: the fallback with the reason, nothing left in the package or the cache, the full log kept", async () => {
    const cache = scratch("cache");
    const pkg = await fakePackage();
    const runner = fakeRunner({
      code: 1,
      lines: [
        "[1/9] Building C object ggml.c.o",
        "ggml.c:12: error: unknown type name 'foo'",
        "ninja: build stopped",
      ],
    });
    const result = await ensureNativeBuild(options(pkg, cache, { runner, probe: fakeProbe() }).opts);
    expect(result).toMatchObject({
      outcome: "fallback",
      reason: "The build failed (exit code 1): ggml.c:12: error: unknown type name 'foo'",
    });
    expect(hasLocalBuild(pkg)).toBe(false);
    expect(readFileSync(result.logFile!, "utf8")).toContain("ninja: build stopped");
    const key = cacheKey(keyInputs({ packageDir: pkg, gpu: false, toolchain, cpu: "Test CPU avx2" }));
    expect(cachedEntry(cache, key)).toBeNull();
  });

  it("without the cache: builds, reads and stores nothing", async () => {
    const pkg = await fakePackage();
    const runner = fakeRunner();
    const log = join(scratch("log"), "build.log");
    const result = await ensureNativeBuild(
      options(pkg, null, { runner, probe: fakeProbe(), logFile: log }).opts,
    );
    expect(result.outcome).toBe("built");
    expect(existsSync(log)).toBe(true);
  });

  it("no cmake on PATH: the fallback at once, nothing run", async () => {
    const empty = scratch("path");
    expect(findToolchain({ PATH: empty })).toEqual({ missing: "cmake not found on PATH" });
    const runner = fakeRunner();
    const pkg = await fakePackage();
    const result = await ensureNativeBuild(
      options(pkg, scratch("cache"), { runner, toolchain: undefined, env: { PATH: empty } }).opts,
    );
    expect(result).toMatchObject({ outcome: "fallback", reason: "cmake not found on PATH" });
    expect(runner.calls).toBe(0);
  });
});

describe("probeBuild", () => {
  it("a package without a local build: llama.cpp loads (and tests) the prebuilt binaries, and says so", async () => {
    // A copy without any build, whatever the app's package has (set-up may have built into it).
    const { root, packageDir } = copyNodeLlamaCpp(".macaron-native-probe-test", {
      source: false,
      perProcess: true,
    });
    onTestFinished(() => rm(root, { recursive: true, force: true }));
    expect(await probeBuild(packageDir, false)).toEqual({ buildType: "prebuilt", gpu: false });
  });
});

describe("native-build-cli", () => {
  it("no toolchain: one line saying so and why, exit code 0 (set-up goes on)", async () => {
    const empty = scratch("path");
    const pkg = await fakePackage();
    const tsx = createRequire(import.meta.url).resolve("tsx");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", tsx, join(import.meta.dirname, "native-build-cli.ts"), "--package-dir", pkg],
      { env: { PATH: empty, MACARON_NATIVE_CACHE: scratch("cache") }, encoding: "utf8" },
    );
    expect(stdout.trim().split("\n")).toEqual([
      "setup: llama.cpp not built for this machine (cmake not found on PATH); the engine uses node-llama-cpp's prebuilt binaries",
    ]);
  });
});
