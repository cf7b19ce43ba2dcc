/**
 * llama.cpp built for this machine, kept in a cache keyed by everything the build depends on,
 * so that a fresh `npm ci` (which wipes node_modules and with it node-llama-cpp's local build)
 * gets its build back in seconds instead of compiling for 4–6 minutes again.
 *
 * The build itself is NativeBuild's (native-build.ts: `node-llama-cpp source download` and `build`, the
 * failure handling, the check that llama.cpp loads the result); this module only decides
 * whether to build, and copies what node-llama-cpp needs to find a build:
 *   llama/localBuilds/<folder>/Release/        llama-addon.node, its libraries, _nlcBuildMetadata.json
 *   llama/localBuilds/<folder>/buildDone.status
 *   llama/lastBuild.json                       { folderName }
 * (getLocalBuildBinaryPath in node-llama-cpp's compileLLamaCpp.js wants all three files; the
 * folder name, e.g. "linux-x64" or "linux-x64-cuda", comes from getBuildFolderNameForBuildOptions
 * and depends only on platform, arch, GPU and release, all of which are in the key.) The CMake
 * build tree beside Release/ is not kept: nothing loads it.
 */
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { z } from "zod";
import { forkNodeChild, runNodeScript, type StartNodeChild } from "../process/node-child";
import {
  detectGpu,
  localBuildPaths,
  NativeBuild,
  nodeScriptRunner,
  removeLocalBuilds,
  type BuildRunner,
} from "./native-build";
import { llamaPatchesKey } from "./llama-patches";
import { cpuId } from "../../../common/cpu-id.mjs";

/** The CPU the build is tuned for: common/cpu-id.mjs. */
export { cpuId };

/** Written into llama/localBuilds (a dot-name: hasLocalBuild ignores it) by every install. */
const execFileAsync = promisify(execFile);

export const BUILD_MARKER = ".macaron-build.json";

export const BuildMarker = z.object({ key: z.string(), gpu: z.union([z.literal("auto"), z.literal(false)]) });
export type BuildMarker = z.infer<typeof BuildMarker>;

const LastBuild = z.object({ folderName: z.string().regex(/^[A-Za-z0-9._-]+$/) });

const CacheEntry = z.object({
  key: z.string(),
  folderName: z.string(),
  inputs: z.record(z.string(), z.string()),
});

export interface Toolchain {
  cmake: string;
  compiler: string;
}

/** First output line of `cmd --version` from the PATH in env, or null when it does not run. */
function versionLine(cmd: string, env: NodeJS.ProcessEnv): string | null {
  const r = spawnSync(cmd, ["--version"], { env, encoding: "utf8", timeout: 30_000 });
  if (r.error || r.status !== 0) return null;
  return (r.stdout || r.stderr).split("\n")[0]?.trim() || null;
}

/**
 * cmake and a C++ compiler (CXX, else c++/g++/clang++ on PATH), with their versions (part of
 * the cache key: another compiler makes another build). Without them node-llama-cpp would try to
 * download cmake from GitHub, which fails offline after a long wait: say so at once instead.
 */
export function findToolchain(env: NodeJS.ProcessEnv): Toolchain | { missing: string } {
  const cmake = versionLine("cmake", env);
  if (!cmake) return { missing: "cmake not found on PATH" };
  const candidates = env.CXX ? [env.CXX] : ["c++", "g++", "clang++"];
  for (const cxx of candidates) {
    const compiler = versionLine(cxx, env);
    if (compiler) return { cmake, compiler: `${cxx}: ${compiler}` };
  }
  return { missing: `no C++ compiler found on PATH (${candidates.join(", ")})` };
}

/** Everything a build depends on, as strings (each one changes the key). */
export function keyInputs(options: {
  packageDir: string;
  gpu: "auto" | false;
  toolchain: Toolchain;
  cpu?: string;
}): Record<string, string> {
  const pkg = z
    .object({ version: z.string() })
    .parse(JSON.parse(readFileSync(join(options.packageDir, "package.json"), "utf8")));
  const bundle = join(options.packageDir, "llama", "gitRelease.bundle");
  // The bytes of the bundled source, not its recorded tag: a patched bundle is another build.
  const source = existsSync(bundle)
    ? createHash("sha256").update(readFileSync(bundle)).digest("hex")
    : "none";
  return {
    nodeLlamaCpp: pkg.version,
    source,
    platform: process.platform,
    arch: process.arch,
    gpu: String(options.gpu),
    cpu: options.cpu ?? cpuId(),
    compiler: options.toolchain.compiler,
    cmake: options.toolchain.cmake,
    patches: llamaPatchesKey(),
  };
}

/** sha256 of the inputs (sorted by name), shortened: a folder name. */
export function cacheKey(inputs: Record<string, string>): string {
  const sorted = Object.keys(inputs)
    .sort()
    .map((k) => [k, inputs[k]]);
  return createHash("sha256").update(JSON.stringify(sorted)).digest("hex").slice(0, 24);
}

/** `$MACARON_NATIVE_CACHE`, else `$XDG_CACHE_HOME/macaron/llama-builds`, else ~/.cache/macaron/llama-builds. */
export function defaultCacheRoot(env: NodeJS.ProcessEnv): string {
  if (env.MACARON_NATIVE_CACHE) return env.MACARON_NATIVE_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "macaron", "llama-builds");
}

/** The installed build's marker, or null (no build, or one not installed by this module). */
export function readBuildMarker(packageDir: string): BuildMarker | null {
  try {
    const raw: unknown = JSON.parse(
      readFileSync(join(localBuildPaths(packageDir).builds, BUILD_MARKER), "utf8"),
    );
    return BuildMarker.parse(raw);
  } catch {
    return null;
  }
}

async function writeMarker(packageDir: string, marker: BuildMarker): Promise<void> {
  await writeFile(join(localBuildPaths(packageDir).builds, BUILD_MARKER), JSON.stringify(marker));
}

/** The complete local build in packageDir (lastBuild.json's folder with its buildDone.status), or null. */
export function completeBuildFolder(packageDir: string): string | null {
  const { builds, lastBuild } = localBuildPaths(packageDir);
  try {
    const { folderName } = LastBuild.parse(JSON.parse(readFileSync(lastBuild, "utf8")));
    const dir = join(builds, folderName);
    const done =
      existsSync(join(dir, "buildDone.status")) && existsSync(join(dir, "Release", "llama-addon.node"));
    return done ? folderName : null;
  } catch {
    return null;
  }
}

/** Copy the build in packageDir into the cache as `<root>/<key>` (written aside, then renamed: all or nothing). */
export async function storeBuild(
  packageDir: string,
  root: string,
  key: string,
  inputs: Record<string, string>,
): Promise<void> {
  const folderName = completeBuildFolder(packageDir);
  if (!folderName) throw new Error("no complete local build to store");
  const { builds, lastBuild } = localBuildPaths(packageDir);
  const temp = join(root, `.tmp-${key}-${process.pid}`);
  await rm(temp, { recursive: true, force: true });
  await mkdir(join(temp, "localBuilds", folderName), { recursive: true });
  await cp(join(builds, folderName, "Release"), join(temp, "localBuilds", folderName, "Release"), {
    recursive: true,
  });
  await cp(
    join(builds, folderName, "buildDone.status"),
    join(temp, "localBuilds", folderName, "buildDone.status"),
  );
  await cp(lastBuild, join(temp, "lastBuild.json"));
  await writeFile(join(temp, "entry.json"), JSON.stringify({ key, folderName, inputs }, null, 2));
  const entry = join(root, key);
  await rm(entry, { recursive: true, force: true });
  await rename(temp, entry);
}

/** The cache entry for key, when it is complete (entry.json is written last). */
export function cachedEntry(root: string, key: string): { dir: string; folderName: string } | null {
  const dir = join(root, key);
  try {
    const entry = CacheEntry.parse(JSON.parse(readFileSync(join(dir, "entry.json"), "utf8")));
    if (entry.key !== key) return null;
    return { dir, folderName: entry.folderName };
  } catch {
    return null;
  }
}

/** Replace packageDir's local builds with the cached one. */
export async function installBuild(
  entry: { dir: string; folderName: string },
  packageDir: string,
  marker: BuildMarker,
): Promise<void> {
  const { builds, lastBuild } = localBuildPaths(packageDir);
  await removeLocalBuilds(packageDir);
  await mkdir(builds, { recursive: true });
  await cp(join(entry.dir, "localBuilds", entry.folderName), join(builds, entry.folderName), {
    recursive: true,
  });
  await cp(join(entry.dir, "lastBuild.json"), lastBuild);
  await cloneBundledSource(packageDir);
  await writeMarker(packageDir, marker);
}

/**
 * node-llama-cpp runs a local build only with llama.cpp's source clone in llama/llama.cpp (it
 * reads the grammars, e.g. for JSON answers, from there; "Grammars folder not found" otherwise):
 * a cache hit clones it from the bundled git bundle, as node-llama-cpp's own build does (seconds,
 * offline). Nothing compiles from this clone (the app's patches are not applied to it): the probe
 * never builds, and node-llama-cpp, finding no llama.cpp.info.json beside it, would clone again
 * before a build of its own.
 */
async function cloneBundledSource(packageDir: string): Promise<void> {
  const source = join(packageDir, "llama", "llama.cpp");
  if (existsSync(join(source, ".git"))) return;
  const bundle = join(packageDir, "llama", "gitRelease.bundle");
  // No bundle, no git, a damaged bundle: nothing cloned, and the probe (which asks for the JSON
  // grammar) finds the build unusable, so it is built instead.
  try {
    await rm(source, { recursive: true, force: true });
    await execFileAsync("git", ["clone", "--quiet", bundle, source]);
    await execFileAsync("git", ["-C", source, "remote", "remove", "origin"]);
  } catch {
    await rm(source, { recursive: true, force: true });
  }
}

export const ProbeResult = z.object({ buildType: z.string(), gpu: z.union([z.string(), z.literal(false)]) });
export type ProbeResult = z.infer<typeof ProbeResult>;
export type Probe = (packageDir: string, gpu: "auto" | false) => Promise<ProbeResult>;

/**
 * Which binaries llama.cpp loads from packageDir, the way the engine asks for them (getLlama
 * with the GPU choice, never building), in a fresh process: a build for another CPU can kill
 * the process that loads it (SIGILL), and a loaded addon cannot be unloaded. The process is a
 * Node child of the app's own runtime, started with `start` (node-child.ts).
 */
export function probeWith(start: StartNodeChild): Probe {
  return (packageDir, gpu) => runProbe(start, packageDir, gpu);
}

/** probeWith child_process.fork (the set-up CLI, tests). */
export const probeBuild: Probe = probeWith(forkNodeChild);

async function runProbe(
  start: StartNodeChild,
  packageDir: string,
  gpu: "auto" | false,
): Promise<ProbeResult> {
  // A script file, not `node -e`: node-llama-cpp tests a prebuilt binary in a fork() of itself,
  // and a fork inherits execArgv, so under -e the fork runs this script again instead of the
  // test and every prebuilt binary "fails" (NoBinaryFoundError).
  const dir = await mkdtemp(join(tmpdir(), "macaron-llama-probe-"));
  const file = join(dir, "probe.mjs");
  await writeFile(
    file,
    `const nlc = await import(${JSON.stringify(pathToFileURL(join(packageDir, "dist", "index.js")).href)});
const llama = await nlc.getLlama({ gpu: ${JSON.stringify(gpu)}, build: "never", progressLogs: false, logLevel: "error" });
// A local build reads its grammars (JSON answers) from the source clone beside it.
await llama.getGrammarFor("json");
console.log(JSON.stringify({ buildType: llama.buildType, gpu: llama.gpu }));
await llama.dispose();
`,
  );
  try {
    const { code, signal, stdout, stderr, killed } = await runNodeScript(start, file, {
      env: { ...process.env },
      name: "Macaron llama.cpp probe",
      timeoutMs: 120_000,
    });
    const last = stdout.trim().split("\n").at(-1) ?? "";
    try {
      return ProbeResult.parse(JSON.parse(last));
    } catch {
      // Node ends a crash with its version line: the error is the last line that says so.
      const lines = stderr.trim().split("\n");
      const tail = (lines.findLast((l) => /error/i.test(l)) ?? lines.at(-1) ?? "no output").trim();
      const how = killed === "timeout" ? "timed out" : (signal ?? `exit code ${code}`);
      throw new Error(`llama.cpp did not load (${how}): ${tail}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export type EnsureResult =
  | { outcome: "cached" | "built"; key: string; gpu: "auto" | false; seconds: number; logFile: string | null }
  | { outcome: "fallback"; reason: string; seconds: number; logFile: string | null };

export interface EnsureOptions {
  packageDir: string;
  /** The build's environment (PATH decides cmake and the compiler). */
  env: NodeJS.ProcessEnv;
  /** Cache folder; null: build without the cache (nothing read, nothing stored). */
  cacheRoot: string | null;
  /** Default: detectGpu (CUDA/Vulkan when node-llama-cpp finds them usable, else CPU). */
  gpu?: "auto" | false;
  runner?: BuildRunner;
  /** Applies the app's llama.cpp patches to the clone (default: NativeBuild's, applyLlamaPatches). */
  applyPatches?: (sourceDir: string) => Promise<void>;
  /** Applies the app's addon patches for the build (default: NativeBuild's, applyAddonPatches). */
  applyAddonPatches?: (llamaDir: string) => Promise<() => Promise<void>>;
  probe?: Probe;
  /** Starts the build's and the probe's Node children (default: child_process.fork). */
  startNodeChild?: StartNodeChild;
  toolchain?: Toolchain | { missing: string };
  cpu?: string;
  /** The full build output goes here (default: beside the cache entry, else in the temp folder). */
  logFile?: string;
  /** Progress: a line per stage and per 10%. */
  print: (line: string) => void;
}

/**
 * A working local build in packageDir, from the cache when it holds one for this key (checked
 * to load; a broken entry is deleted and rebuilt), else built (and stored). Never throws for a
 * build that cannot be made: the outcome "fallback" says why, and the package is left with its
 * prebuilt binaries only.
 */
export async function ensureNativeBuild(options: EnsureOptions): Promise<EnsureResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const { packageDir, cacheRoot, print } = options;
  const probe = options.probe ?? probeWith(options.startNodeChild ?? forkNodeChild);
  const toolchain = options.toolchain ?? findToolchain(options.env);
  if ("missing" in toolchain)
    return { outcome: "fallback", reason: toolchain.missing, seconds: seconds(), logFile: null };
  const gpu = options.gpu ?? (await detectGpu());
  const inputs = keyInputs({ packageDir, gpu, toolchain, cpu: options.cpu });
  const key = cacheKey(inputs);
  const marker: BuildMarker = { key, gpu };

  if (cacheRoot) {
    const entry = cachedEntry(cacheRoot, key);
    if (entry) {
      try {
        await installBuild(entry, packageDir, marker);
        const loaded = await probe(packageDir, gpu);
        if (loaded.buildType === "localBuild")
          return { outcome: "cached", key, gpu, seconds: seconds(), logFile: null };
        print(`cached build ${key} is not the one llama.cpp loads (${loaded.buildType}); rebuilding`);
      } catch (err) {
        print(`cached build ${key} does not load (${(err as Error).message}); rebuilding`);
      }
      await rm(entry.dir, { recursive: true, force: true });
      await removeLocalBuilds(packageDir);
    }
  }

  const logFile =
    options.logFile ??
    (cacheRoot ? join(cacheRoot, `${key}.log`) : join(tmpdir(), `macaron-llama-build-${key}.log`));
  await mkdir(join(logFile, ".."), { recursive: true });
  const log = createWriteStream(logFile);
  const runner = options.runner ?? nodeScriptRunner(options.startNodeChild);
  const teed: BuildRunner = (command, onLine, signal) =>
    runner(
      command,
      (line) => {
        log.write(`${line}\n`);
        onLine(line);
      },
      signal,
    );
  let shown = -1;
  const build = new NativeBuild({
    packageDir,
    runner: teed,
    applyPatches: options.applyPatches,
    applyAddonPatches: options.applyAddonPatches,
    env: options.env,
    gpu: () => Promise.resolve(gpu),
    // "Did llama.cpp load the build?" asked of a fresh process, as the app asks its engine.
    engineInfo: async () => {
      const loaded = await probe(packageDir, gpu);
      return {
        buildType: loaded.buildType === "localBuild" ? "localBuild" : "prebuilt",
        gpu: loaded.gpu || null,
        llamaCpp: "",
      };
    },
    relaunch: null,
    emit: (b) => {
      if (b.state !== "building") return;
      const tenth = Math.floor((b.progress ?? 0) * 10);
      if (tenth > shown) {
        shown = tenth;
        print(`building llama.cpp (--gpu ${String(gpu)}): ${tenth * 10}%`);
      }
    },
    log: () => undefined,
  });
  try {
    await build.build();
    await build.done;
  } finally {
    await new Promise((resolve) => log.end(resolve));
  }
  const status = await build.status();
  if (status.state !== "built") {
    const reason = (status.error ?? "the build failed").replace(
      /\. The engine keeps the prebuilt binaries\.$/,
      "",
    );
    return { outcome: "fallback", reason, seconds: seconds(), logFile };
  }
  await writeMarker(packageDir, marker);
  if (cacheRoot) {
    try {
      await storeBuild(packageDir, cacheRoot, key, inputs);
    } catch (err) {
      // The build works; only the next set-up will have to build again.
      print(`the build could not be cached in ${cacheRoot}: ${(err as Error).message}`);
    }
  }
  return { outcome: "built", key, gpu, seconds: seconds(), logFile };
}
