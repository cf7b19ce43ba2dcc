import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { engineEnv } from "./engine-env";
import type { EngineProcess, SpawnEngine } from "./types";

export interface EngineEntry {
  /** Script to fork. */
  path: string;
  /** Node flags for the child (the tsx loader when running from sources). */
  execArgv: string[];
}

/**
 * Where the engine's entry is. Inside the electron-vite bundle (out/main/index.js) the engine
 * is bundled next to it as out/main/engine.js; from sources (tsx, vitest) it is
 * native/engine/main.ts, run through tsx's loader.
 */
export function resolveEngineEntry(moduleUrl: string = import.meta.url): EngineEntry {
  const here = dirname(fileURLToPath(moduleUrl));
  const bundled = join(here, "engine.js");
  if (!moduleUrl.endsWith(".ts") && existsSync(bundled)) return { path: bundled, execArgv: [] };
  // Absolute loader URL: `--import tsx` alone would resolve against the child's cwd.
  const tsxLoader = pathToFileURL(createRequire(moduleUrl).resolve("tsx")).href;
  return { path: join(here, "../../../native/engine/main.ts"), execArgv: ["--import", tsxLoader] };
}

export interface NodeEngineOptions {
  entry?: EngineEntry;
  /**
   * Environment of the child (e.g. MACARON_ENGINE_THREADS); defaults to this process's. Either
   * way it goes through engineEnv (huge pages for llama.cpp's buffers on Linux).
   */
  env?: NodeJS.ProcessEnv;
}

/**
 * Spawn the engine with child_process.fork (headless mode and tests). llama.cpp's logs go
 * to our stderr — stdout stays free for the server's own output.
 */
export function spawnNodeEngine(options: NodeEngineOptions = {}): SpawnEngine {
  const entry = options.entry ?? resolveEngineEntry();
  return (): EngineProcess => {
    const child = fork(entry.path, [], {
      execArgv: entry.execArgv,
      env: engineEnv(options.env ?? process.env),
      stdio: ["ignore", "pipe", "inherit", "ipc"],
      // Structured clone, like Electron's parentPort: both transports carry the same values
      // (JSON would turn a -Infinity logprob or a NaN into null). Measured (`npm run bench -- ipc`,
      // 2-core VM): a token message costs 15 µs here against 5.5 µs as JSON, but big ones are
      // 2.5–4× faster (16×768 embeddings 1.3 ms vs 3.4 ms; a 100-turn history 0.13 ms vs
      // 0.58 ms), and tokens go merged per 4 ms (runtime.ts), so per answer the two are within
      // about a millisecond and advanced wins wherever a long history or embeddings travel.
      serialization: "advanced",
    });
    child.stdout?.pipe(process.stderr, { end: false });
    return {
      send(message) {
        if (!child.connected) return;
        // A closed channel means the child is exiting; its exit event reports that.
        child.send(message as never, (error) => void error);
      },
      onMessage: (listener) => child.on("message", listener),
      onExit: (listener) => child.on("exit", (code, signal) => listener(code, signal)),
      kill: () => void child.kill(),
      get pid() {
        return child.pid;
      },
    };
  };
}
