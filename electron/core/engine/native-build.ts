/**
 * Build llama.cpp for this machine from the source node-llama-cpp ships (its git bundle: no
 * network needed), for this CPU and, when the machine has a usable GPU, its toolkit:
 * `node-llama-cpp source download --gpu false|auto --skipBuild` (the clone), the app's patches
 * (llama-patches.ts: `git apply`), then `node-llama-cpp source build` with the same options; by
 * hand, `npx --no node-llama-cpp source download` builds the same without the app's patches.
 * The build lands in node-llama-cpp's llama/localBuilds, where getLlama() prefers it over the
 * prebuilt binaries, so a fresh engine process uses it. On the 2-core
 * development machines it builds in 3.5–4 min and runs at the prebuilt binaries' speed
 * (bench/README.md, "Built for this machine"); it matters where no prebuilt backend fits.
 *
 * A failed build (no cmake or compiler, a compile error, a build llama.cpp then cannot load)
 * removes whatever it left, so the engine keeps running the prebuilt binaries, and says why.
 */
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { EngineBuild } from "../../api";
import { ApiError } from "../../api/errors";
import { forkNodeChild, type StartNodeChild } from "../process/node-child";
import { applyAddonPatches, applyLlamaPatches, type ApplyOptions } from "./llama-patches";
import type { EngineInfo } from "./types";

/**
 * One Node script to run (through the node-child seam: the app's own runtime, never a `node` on
 * PATH), its output reported line by line (stdout and stderr together).
 */
export interface BuildCommand {
  script: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

export type BuildRunner = (
  command: BuildCommand,
  onLine: (line: string) => void,
  signal: AbortSignal,
) => Promise<{ code: number | null; signal: string | null }>;

export interface NativeBuildDeps {
  /** node-llama-cpp's package folder (default: the one this app resolves). */
  packageDir?: string;
  /** Runs the build (default: nodeScriptRunner with startNodeChild); tests inject failures. */
  runner?: BuildRunner;
  /** Starts the build's Node child (default: child_process.fork; Electron: a utility process). */
  startNodeChild?: StartNodeChild;
  /** Environment of the build (default: this process's; PATH decides which cmake and compilers). */
  env?: NodeJS.ProcessEnv;
  /** Applies the app's patches to the cloned llama.cpp source (default: applyLlamaPatches). */
  applyPatches?: (sourceDir: string, options: ApplyOptions) => Promise<void>;
  /**
   * Applies the app's patches to node-llama-cpp's addon sources (its llama/ folder) and resolves
   * to what takes them back out after the build (default: applyAddonPatches).
   */
  applyAddonPatches?: (llamaDir: string, options: ApplyOptions) => Promise<() => Promise<void>>;
  /** "auto" builds with the GPU toolkit when the machine has a usable GPU (default: node-llama-cpp detects). */
  gpu?: () => Promise<"auto" | false>;
  /** Which binaries the engine runs (EngineClient.info); null: the engine cannot say. */
  engineInfo: (() => Promise<EngineInfo>) | null;
  /** A fresh engine process (EngineClient.relaunch), so that it loads the binaries there are now. */
  relaunch: (() => Promise<void>) | null;
  emit: (build: EngineBuild) => void;
  log?: (message: string, err: unknown) => void;
}

/** Lines of build output kept for the status (the failure's reason is in the last ones). */
const LOG_LINES = 40;

/** node-llama-cpp's package folder, from this module's resolution of it. */
export function nodeLlamaCppDir(): string {
  // The package's main is dist/index.js. In the packaged app the package is unpacked next to
  // the asar archive (electron-builder.yml asarUnpack): the build writes there.
  const main = createRequire(import.meta.url).resolve("node-llama-cpp");
  return dirname(dirname(main)).replace(/app\.asar(?=[\\/])/, "app.asar.unpacked");
}

/** The local build folder and its last-build record, inside node-llama-cpp's package. */
export function localBuildPaths(packageDir: string): { builds: string; lastBuild: string } {
  return {
    builds: join(packageDir, "llama", "localBuilds"),
    lastBuild: join(packageDir, "llama", "lastBuild.json"),
  };
}

/** Whether a local build is there (a folder in llama/localBuilds that is not a lock or temp file). */
export function hasLocalBuild(packageDir: string): boolean {
  const { builds } = localBuildPaths(packageDir);
  if (!existsSync(builds)) return false;
  return readdirSync(builds, { withFileTypes: true }).some((e) => e.isDirectory() && !e.name.startsWith("."));
}

/** Delete every local build (getLlama() then uses the prebuilt binaries again). */
export async function removeLocalBuilds(packageDir: string): Promise<void> {
  const { builds, lastBuild } = localBuildPaths(packageDir);
  await rm(builds, { recursive: true, force: true });
  await rm(lastBuild, { force: true });
}

/**
 * Progress 0..1 from a build output line: Ninja's `[12/150] …` and Make's `[ 45%] …` step
 * counters. Null for any other line.
 */
export function parseBuildProgress(line: string): number | null {
  const ninja = /^\s*\[(\d+)\/(\d+)\]/.exec(line);
  if (ninja) {
    const total = Number(ninja[2]);
    return total > 0 ? Math.min(1, Number(ninja[1]) / total) : null;
  }
  const make = /^\s*\[\s*(\d{1,3})%\]/.exec(line);
  if (make) return Math.min(1, Number(make[1]) / 100);
  return null;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** Output line without colour codes and carriage-return redraws. */
export function cleanLine(line: string): string {
  const last =
    line
      .split("\r")
      .filter((part) => part.trim() !== "")
      .at(-1) ?? "";
  return last.replace(ANSI, "").trimEnd();
}

/**
 * The default runner: the script as a Node child (node-child.ts), its stdout and stderr split
 * into lines; an abort ends it.
 */
export function nodeScriptRunner(start: StartNodeChild = forkNodeChild): BuildRunner {
  return (command, onLine, signal) =>
    new Promise((resolve, reject) => {
      const child = start(command.script, {
        args: command.args,
        env: command.env,
        cwd: command.cwd,
        name: "Macaron llama.cpp build",
      });
      for (const stream of [child.stdout, child.stderr]) {
        if (!stream) continue;
        let rest = "";
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => {
          const lines = (rest + chunk).split("\n");
          rest = lines.pop() ?? "";
          for (const line of lines) onLine(line);
        });
        stream.on("end", () => {
          if (rest) onLine(rest);
        });
      }
      const onAbort = (): void => child.kill();
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      child.onExit((code, sig, error) => {
        signal.removeEventListener("abort", onAbort);
        if (error) reject(error);
        else resolve({ code, signal: sig ?? (signal.aborted && code === null ? "SIGTERM" : null) });
      });
    });
}

/** nodeScriptRunner with child_process.fork (the CLI tools). */
export const spawnRunner: BuildRunner = nodeScriptRunner();

/**
 * A launcher for node-llama-cpp's CLI, written beside nothing of the app's (a temp folder): it
 * runs the CLI with the argv yargs expects. yargs takes any process with
 * `process.versions.electron` and no `process.defaultApp` for a packaged app whose argv has no
 * script path ([app, ...args]), while a utility process's argv is [app, script, ...args]: the
 * launcher drops its own path there, so the CLI reads `source download …` as its command.
 */
export async function writeCliLauncher(cli: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "macaron-llama-build-"));
  const path = join(dir, "cli-launcher.mjs");
  await writeFile(
    path,
    `if (process.versions.electron && !process.defaultApp) process.argv.splice(1, 1);
await import(${JSON.stringify(pathToFileURL(cli).href)});
`,
  );
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * GPU toolkits worth building for: only those node-llama-cpp finds usable on this machine
 * ("auto" then builds for them, e.g. CUDA), else a CPU build (`--gpu false`).
 */
export async function detectGpu(): Promise<"auto" | false> {
  const { getLlamaGpuTypes } = await import("node-llama-cpp");
  const supported = await getLlamaGpuTypes("supported");
  return supported.some((gpu) => gpu !== false) ? "auto" : false;
}

/**
 * The build for this machine: state, progress, log and which binaries the engine runs;
 * `engine.build` events on every change.
 */
export class NativeBuild {
  private state: EngineBuild["state"];
  private progress: number | null = null;
  private log: string[] = [];
  private error: string | null = null;
  private running: { promise: Promise<void>; controller: AbortController } | null = null;
  private readonly packageDir: string;
  private readonly logError: (message: string, err: unknown) => void;
  private lastEmit = 0;
  /** Which binaries the engine ran when last asked (reported while a build runs). */
  private usingNow: EngineBuild["using"] = "prebuilt";

  constructor(private readonly deps: NativeBuildDeps) {
    this.packageDir = deps.packageDir ?? nodeLlamaCppDir();
    this.logError = deps.log ?? console.error;
    this.state = hasLocalBuild(this.packageDir) ? "built" : "prebuilt";
  }

  /** Settles when the build in progress (if any) has finished, whatever its outcome. */
  get done(): Promise<void> {
    return this.running?.promise ?? Promise.resolve();
  }

  /** The state, with the binaries the engine runs as the engine reports them. */
  async status(): Promise<EngineBuild> {
    return this.snapshot(await this.using());
  }

  /**
   * Start the build (progress as `engine.build` events) and answer at once with state
   * "building"; a build already running is not started twice.
   */
  async build(): Promise<EngineBuild> {
    if (this.running) return this.snapshot(this.usingNow);
    await this.using();
    const controller = new AbortController();
    this.state = "building";
    this.progress = 0;
    this.log = [];
    this.error = null;
    const promise = this.run(controller.signal)
      .catch((err: unknown) => this.fail(`The build could not run: ${(err as Error).message}`))
      .finally(() => {
        this.running = null;
      });
    this.running = { promise, controller };
    const started = this.snapshot(this.usingNow);
    this.deps.emit(started);
    return started;
  }

  /** Delete the local build and restart the engine on the prebuilt binaries. */
  async usePrebuilt(): Promise<EngineBuild> {
    if (this.running) throw new ApiError("busy", "A build is running; wait for it to finish first.");
    const wasLocal = (await this.using()) === "local";
    await removeLocalBuilds(this.packageDir);
    if (wasLocal) await this.deps.relaunch?.();
    this.state = "prebuilt";
    this.progress = null;
    this.error = null;
    return this.changed();
  }

  /** Stop a build in progress (the app is closing); what it left is removed. */
  async close(): Promise<void> {
    const running = this.running;
    if (!running) return;
    running.controller.abort();
    await running.promise;
  }

  /**
   * One `git apply` step of the build, under its `$` line: what `apply` gave, or the first line
   * of its error (the whole error goes to the build's log).
   */
  private async gitApplyStep<T>(
    what: string,
    apply: () => Promise<T>,
  ): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
    this.addLine(`$ git apply (${what})`);
    try {
      return { ok: true, value: await apply() };
    } catch (err) {
      const message = (err as Error).message;
      for (const line of message.split("\n")) this.addLine(line);
      return { ok: false, error: message.split("\n")[0]! };
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    const gpu = await (this.deps.gpu ?? detectGpu)();
    const cli = join(this.packageDir, "dist", "cli", "cli.js");
    const launcher = await writeCliLauncher(cli);
    const runner = this.deps.runner ?? nodeScriptRunner(this.deps.startNodeChild);
    const options = ["--gpu", String(gpu), "--noUsageExample"];
    const env = this.deps.env ?? process.env;
    const step = (args: string[]) =>
      runner(
        { script: launcher.path, args, env: { ...env }, cwd: this.packageDir },
        (line) => this.addLine(line),
        signal,
      );
    // Clone the bundled source (node-llama-cpp applies its own patches), apply the app's
    // (llama-patches.ts), then compile.
    const { result, patchError } = await (async () => {
      this.addLine(`$ node-llama-cpp source download --gpu ${String(gpu)} --skipBuild`);
      const cloned = await step(["source", "download", ...options, "--skipBuild"]);
      if (cloned.code !== 0 || signal.aborted) return { result: cloned, patchError: null };
      const patchOptions = { env, onLine: (line: string) => this.addLine(line) };
      const llama = await this.gitApplyStep("the app's llama.cpp patches", () =>
        (this.deps.applyPatches ?? applyLlamaPatches)(
          join(this.packageDir, "llama", "llama.cpp"),
          patchOptions,
        ),
      );
      if (!llama.ok) return { result: cloned, patchError: llama.error };
      if (signal.aborted) return { result: cloned, patchError: null };
      const addon = await this.gitApplyStep("the app's patches to node-llama-cpp's addon", () =>
        (this.deps.applyAddonPatches ?? applyAddonPatches)(join(this.packageDir, "llama"), patchOptions),
      );
      if (!addon.ok) return { result: cloned, patchError: addon.error };
      const restore = addon.value;
      try {
        if (signal.aborted) return { result: cloned, patchError: null };
        this.addLine(`$ node-llama-cpp source build --gpu ${String(gpu)}`);
        return { result: await step(["source", "build", ...options]), patchError: null };
      } finally {
        // The package's addon sources as npm installed them; the build keeps what it compiled.
        await restore().catch((err: unknown) =>
          this.addLine(`the addon patches could not be taken back out: ${(err as Error).message}`),
        );
      }
    })().finally(() => launcher.remove());
    if (patchError !== null && !signal.aborted) {
      await this.fail(`The build stopped: ${patchError}`);
      return;
    }
    if (signal.aborted) {
      // Closing: the next start runs the prebuilt binaries.
      await removeLocalBuilds(this.packageDir);
      this.state = "prebuilt";
      this.progress = null;
      this.error = "The build was stopped.";
      this.changed(this.usingNow);
      return;
    }
    if (result.code !== 0 || !hasLocalBuild(this.packageDir)) {
      const how =
        result.code === 0
          ? "finished without a build"
          : `failed (${result.signal ?? `exit code ${result.code}`})`;
      await this.fail(`The build ${how}: ${this.reason()}`);
      return;
    }
    // A fresh engine process loads the binaries there are now: the local build, if it works.
    try {
      await this.deps.relaunch?.();
      const info = this.deps.engineInfo ? await this.deps.engineInfo() : null;
      if (info && info.buildType !== "localBuild") {
        await this.fail("The build finished, but llama.cpp did not load it");
        return;
      }
    } catch (err) {
      await this.fail(
        `The build finished, but the engine could not start with it: ${(err as Error).message}`,
      );
      return;
    }
    this.state = "built";
    this.progress = 1;
    this.changed("local");
  }

  /** Back to the prebuilt binaries: remove what the build left, restart the engine if it used it. */
  private async fail(message: string): Promise<void> {
    try {
      await removeLocalBuilds(this.packageDir);
      const info = this.deps.engineInfo ? await this.deps.engineInfo().catch(() => null) : null;
      if (info?.buildType === "localBuild" || info === null) await this.deps.relaunch?.();
    } catch (err) {
      this.logError("could not go back to the prebuilt llama.cpp binaries", err);
    }
    this.state = "failed";
    this.progress = null;
    this.error = `${message}. The engine keeps the prebuilt binaries.`;
    this.changed("prebuilt");
  }

  /** The last lines that look like an error, else the last line. */
  private reason(): string {
    const lines = this.log.slice(1);
    const errors = lines.filter((l) => /error|not found|failed|cannot|could not/i.test(l));
    return (errors.at(-1) ?? lines.at(-1) ?? "no output").trim();
  }

  private addLine(raw: string): void {
    const line = cleanLine(raw);
    if (!line) return;
    this.log.push(line);
    if (this.log.length > LOG_LINES) this.log.splice(0, this.log.length - LOG_LINES);
    const step = parseBuildProgress(line);
    // The clone and configure steps come first: compile steps fill 5%..99%.
    const progress = step === null ? null : 0.05 + 0.94 * step;
    let moved = false;
    if (progress !== null && this.progress !== null && progress > this.progress) {
      moved = progress - this.progress >= 0.01;
      this.progress = progress;
    }
    const now = Date.now();
    // Each percent of progress, else a few events per second at most: the log moves faster than a UI needs.
    if (moved || now - this.lastEmit >= 250) {
      this.lastEmit = now;
      this.deps.emit(this.snapshot(this.usingNow));
    }
  }

  private async using(): Promise<EngineBuild["using"]> {
    if (this.running) return this.usingNow;
    let using: EngineBuild["using"] = hasLocalBuild(this.packageDir) ? "local" : "prebuilt";
    if (this.deps.engineInfo) {
      try {
        using = (await this.deps.engineInfo()).buildType === "localBuild" ? "local" : "prebuilt";
      } catch {
        // No engine to ask: the files decide.
      }
    }
    this.usingNow = using;
    return using;
  }

  private changed(using: EngineBuild["using"] = "prebuilt"): EngineBuild {
    this.usingNow = using;
    const build = this.snapshot(using);
    this.deps.emit(build);
    return build;
  }

  private snapshot(using: EngineBuild["using"]): EngineBuild {
    return { state: this.state, using, progress: this.progress, log: [...this.log], error: this.error };
  }
}
