import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { EngineBuild } from "../../api";
import {
  cleanLine,
  hasLocalBuild,
  localBuildPaths,
  NativeBuild,
  nodeLlamaCppDir,
  parseBuildProgress,
  type BuildCommand,
  type BuildRunner,
} from "./native-build";
import type { ApplyOptions } from "./llama-patches";
import type { EngineInfo } from "./types";
import { testDir } from "../../../testing/core/temp-dir";

// These tests use a stand-in package folder and runner for the failure paths; the real build
// (3.5–5 min of both cores) runs in native-build.real.test.ts, into a copy of node-llama-cpp so
// that no other test runs on it.
async function packageDir(): Promise<string> {
  const dir = testDir("macaron-native-build-");
  await mkdir(join(dir, "llama"), { recursive: true });
  return dir;
}

async function makeLocalBuild(dir: string): Promise<void> {
  const { builds, lastBuild } = localBuildPaths(dir);
  await mkdir(join(builds, "linux-x64-release-b1"), { recursive: true });
  await writeFile(lastBuild, "{}");
}

/** The engine as the build sees it: which binaries it loaded on its last (re)start. */
function fakeEngine(dir: string, options: { loadsLocal?: boolean } = {}) {
  const engine = {
    relaunches: 0,
    buildType: "prebuilt" as EngineInfo["buildType"],
    info: () =>
      Promise.resolve({ buildType: engine.buildType, gpu: null, llamaCpp: "ggml-org/llama.cpp@b1" }),
    relaunch: () => {
      engine.relaunches++;
      engine.buildType = hasLocalBuild(dir) && options.loadsLocal !== false ? "localBuild" : "prebuilt";
      return Promise.resolve();
    },
  };
  return engine;
}

function setup(
  dir: string,
  runner: BuildRunner | undefined,
  engine = fakeEngine(dir),
  env?: NodeJS.ProcessEnv,
  applyPatches: (sourceDir: string, options: ApplyOptions) => Promise<void> = () => Promise.resolve(),
) {
  const events: EngineBuild[] = [];
  const build = new NativeBuild({
    packageDir: dir,
    runner,
    env,
    applyPatches,
    applyAddonPatches: () => Promise.resolve(() => Promise.resolve()),
    gpu: () => Promise.resolve(false),
    engineInfo: engine.info,
    relaunch: engine.relaunch,
    emit: (b) => events.push(b),
    log: () => undefined,
  });
  return { build, events, engine };
}

/** A runner that prints `lines`, optionally leaves a build behind, and exits with `code`. */
function scripted(
  lines: string[],
  code: number,
  leave?: string,
): BuildRunner & { commands: unknown[]; scripts: string[] } {
  const commands: unknown[] = [];
  const scripts: string[] = [];
  const runner = async (command: Parameters<BuildRunner>[0], onLine: (line: string) => void) => {
    commands.push(command);
    scripts.push(readFileSync(command.script, "utf8"));
    if (leave) await makeLocalBuild(leave);
    for (const line of lines) onLine(line);
    return { code, signal: null };
  };
  return Object.assign(runner, { commands, scripts });
}

describe("build output", () => {
  it("reads Ninja's and Make's step counters", () => {
    expect(parseBuildProgress("[12/150] Building CXX object src/CMakeFiles/llama.dir/llama.cpp.o")).toBe(
      0.08,
    );
    expect(parseBuildProgress("[150/150] Linking CXX shared module Release/llama-addon.node")).toBe(1);
    expect(parseBuildProgress("[ 45%] Building C object ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o")).toBe(
      0.45,
    );
    expect(parseBuildProgress("-- Configuring done")).toBeNull();
    expect(parseBuildProgress("[0/0] nothing")).toBeNull();
  });

  it("drops colours and carriage-return redraws", () => {
    expect(cleanLine("\u001b[34mCompiling llama.cpp\u001b[39m")).toBe("Compiling llama.cpp");
    expect(cleanLine("Cloning 10%\rCloning 55%\r")).toBe("Cloning 55%");
  });

  it("finds the package this app loads llama.cpp from", () => {
    expect(existsSync(join(nodeLlamaCppDir(), "dist", "cli", "cli.js"))).toBe(true);
  });
});

describe("which binaries the engine runs", () => {
  it("prebuilt without a local build; built once one is there; the engine says what it loaded", async () => {
    const dir = await packageDir();
    expect(await setup(dir, undefined).build.status()).toMatchObject({
      state: "prebuilt",
      using: "prebuilt",
    });
    await makeLocalBuild(dir);
    const s = setup(dir, undefined);
    // A build made by hand (`npx node-llama-cpp source download`) before the engine restarted.
    expect(await s.build.status()).toMatchObject({ state: "built", using: "prebuilt" });
    await s.engine.relaunch();
    expect(await s.build.status()).toMatchObject({ state: "built", using: "local" });
  });

  it("without an engine to ask, the files decide", async () => {
    const dir = await packageDir();
    await makeLocalBuild(dir);
    const build = new NativeBuild({
      packageDir: dir,
      engineInfo: () => Promise.reject(new Error("no engine")),
      relaunch: null,
      emit: () => undefined,
    });
    expect(await build.status()).toMatchObject({ state: "built", using: "local" });
  });
});

describe("building", () => {
  it("success: progress from the step counter, the engine restarted on the local build", async () => {
    const dir = await packageDir();
    const runner = scripted(
      [
        "Cloning llama.cpp",
        "[1/4] Building C object ggml.c.o",
        "[2/4] Building",
        "[4/4] Linking llama-addon.node",
      ],
      0,
      dir,
    );
    const patched: { dir: string; afterCommands: number }[] = [];
    const s = setup(dir, runner, undefined, undefined, (sourceDir) => {
      patched.push({ dir: sourceDir, afterCommands: runner.commands.length });
      return Promise.resolve();
    });
    const started = await s.build.build();
    expect(started).toMatchObject({ state: "building", progress: 0, using: "prebuilt", error: null });
    // A second request while it runs does not start another build.
    expect((await s.build.build()).state).toBe("building");
    await s.build.done;
    // The clone, the app's patches on it, then the compile.
    expect(runner.commands).toHaveLength(2);
    expect(patched).toEqual([{ dir: join(dir, "llama", "llama.cpp"), afterCommands: 1 }]);
    // A Node script (the node-child seam runs it: a utility process in Electron, never the app
    // binary as plain Node): a launcher that imports node-llama-cpp's CLI, removed afterwards.
    const command = runner.commands[0] as BuildCommand;
    expect(command).toMatchObject({
      script: expect.stringMatching(/cli-launcher\.mjs$/) as string,
      args: ["source", "download", "--gpu", "false", "--noUsageExample", "--skipBuild"],
      cwd: dir,
    });
    expect(runner.commands[1]).toMatchObject({
      script: command.script,
      args: ["source", "build", "--gpu", "false", "--noUsageExample"],
      cwd: dir,
    });
    expect(command.env).not.toHaveProperty("ELECTRON_RUN_AS_NODE");
    expect(runner.scripts[0]).toContain(
      JSON.stringify(pathToFileURL(join(dir, "dist", "cli", "cli.js")).href),
    );
    expect(existsSync(command.script)).toBe(false);
    const final = await s.build.status();
    expect(final).toMatchObject({ state: "built", using: "local", progress: 1, error: null });
    expect(final.log.at(-1)).toBe("[4/4] Linking llama-addon.node");
    expect(s.engine.relaunches).toBe(1);
    expect(s.events.at(0)?.state).toBe("building");
    expect(s.events.at(-1)).toMatchObject({ state: "built", using: "local" });
  });

  it("failure (the real spawn path, a PATH without cmake): the partial build is removed and the prebuilt binaries stay", async () => {
    const dir = await packageDir();
    // A stand-in CLI that does what the real build does first: run cmake from PATH.
    await mkdir(join(dir, "dist", "cli"), { recursive: true });
    await writeFile(
      join(dir, "dist", "cli", "cli.js"),
      [
        'const { spawnSync } = require("node:child_process");',
        'const fs = require("node:fs");',
        'fs.mkdirSync(require("node:path").join(__dirname, "../../llama/localBuilds/linux-x64-partial"), { recursive: true });',
        'console.log("[1/3] Building C object ggml.c.o");',
        'const r = spawnSync("cmake", ["--version"]);',
        'if (r.error) { console.error("CMake not found: " + r.error.code); process.exit(1); }',
        'console.log("[3/3] Linking"); process.exit(0);',
      ].join("\n"),
    );
    await writeFile(join(dir, "package.json"), '{"type": "commonjs"}');
    const s = setup(dir, undefined, fakeEngine(dir), { PATH: join(dir, "no-tools-here") });
    await s.build.build();
    await s.build.done;
    const final = await s.build.status();
    expect(final).toMatchObject({ state: "failed", using: "prebuilt", progress: null });
    expect(final.error).toMatch(
      /^The build failed \(exit code 1\): CMake not found: ENOENT\. The engine keeps the prebuilt binaries\.$/,
    );
    expect(final.log).toContain("[1/3] Building C object ggml.c.o");
    expect(hasLocalBuild(dir)).toBe(false);
    // The engine ran the prebuilt binaries all along: not restarted.
    expect(s.engine.relaunches).toBe(0);
    expect(s.events.some((e) => e.state === "building" && (e.progress ?? 0) > 0)).toBe(true);
    expect(s.events.at(-1)?.state).toBe("failed");
  });

  it("a build llama.cpp cannot load: removed, the engine restarted on the prebuilt binaries", async () => {
    const dir = await packageDir();
    const engine = fakeEngine(dir, { loadsLocal: false });
    const s = setup(dir, scripted(["[1/1] Linking"], 0, dir), engine);
    await s.build.build();
    await s.build.done;
    expect(await s.build.status()).toMatchObject({ state: "failed", using: "prebuilt" });
    expect((await s.build.status()).error).toMatch(
      /did not load it\. The engine keeps the prebuilt binaries/,
    );
    expect(hasLocalBuild(dir)).toBe(false);
  });

  it("a patch that does not apply: no compile, a clear error, the prebuilt binaries stay", async () => {
    const dir = await packageDir();
    const runner = scripted(["Cloned llama.cpp"], 0, dir);
    const s = setup(dir, runner, undefined, undefined, () =>
      Promise.reject(
        new Error('the app\'s llama.cpp patch "kv-cache-lazy-zero" does not apply: corrupt patch'),
      ),
    );
    await s.build.build();
    await s.build.done;
    expect(runner.commands).toHaveLength(1);
    expect(await s.build.status()).toMatchObject({ state: "failed", using: "prebuilt" });
    expect((await s.build.status()).error).toBe(
      'The build stopped: the app\'s llama.cpp patch "kv-cache-lazy-zero" does not apply: corrupt patch. The engine keeps the prebuilt binaries.',
    );
    expect(hasLocalBuild(dir)).toBe(false);
  });

  it("stopped while the patches are applied: no compile, nothing left, the prebuilt binaries", async () => {
    const dir = await packageDir();
    const runner = scripted(["Cloned llama.cpp"], 0, dir);
    const closing: Promise<void>[] = [];
    const s = setup(dir, runner, undefined, undefined, (_sourceDir, options) => {
      options.onLine?.("Applied patch to 'src/llama-kv-cache.cpp' cleanly.");
      // The app closes meanwhile.
      closing.push(s.build.close());
      return Promise.resolve();
    });
    await s.build.build();
    await s.build.done;
    await Promise.all(closing);
    expect(closing).toHaveLength(1);
    expect(runner.commands).toHaveLength(1);
    const status = await s.build.status();
    expect(status).toMatchObject({ state: "prebuilt", using: "prebuilt", error: "The build was stopped." });
    expect(status.log).toContain("Applied patch to 'src/llama-kv-cache.cpp' cleanly.");
    expect(hasLocalBuild(dir)).toBe(false);
  });

  it("an exit code 0 without a build is a failure too", async () => {
    const dir = await packageDir();
    const s = setup(dir, scripted(["Done"], 0));
    await s.build.build();
    await s.build.done;
    expect((await s.build.status()).error).toMatch(/finished without a build: Done/);
  });

  it("back to prebuilt: the local build is deleted and the engine restarted", async () => {
    const dir = await packageDir();
    const s = setup(dir, scripted(["[1/1] Linking"], 0, dir));
    await s.build.build();
    await s.build.done;
    expect((await s.build.status()).using).toBe("local");
    const back = await s.build.usePrebuilt();
    expect(back).toMatchObject({ state: "prebuilt", using: "prebuilt", error: null });
    expect(hasLocalBuild(dir)).toBe(false);
    expect(existsSync(localBuildPaths(dir).lastBuild)).toBe(false);
    expect(s.engine.relaunches).toBe(2);
  });
});
