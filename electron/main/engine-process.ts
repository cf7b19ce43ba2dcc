/**
 * The engine runs in an Electron utility process: a native crash or an out-of-memory in
 * llama.cpp kills that process only, never the window or the database (core's supervisor
 * restarts it). This adapts `utilityProcess` to the EngineProcess seam core codes against.
 */
import { utilityProcess } from "electron";
import { engineEnv } from "../core/engine/engine-env";
import type { EngineProcess, SpawnEngine } from "../core/engine/types";

/**
 * A SpawnEngine that forks `enginePath` (out/main/engine.js) as a utility process.
 * The child talks over `process.parentPort`; its stdout/stderr go to ours so engine logs
 * show up next to the main process's.
 */
export function createUtilityEngineSpawner(enginePath: string): SpawnEngine {
  return (): EngineProcess => {
    const child = utilityProcess.fork(enginePath, [], {
      serviceName: "Macaron engine",
      stdio: "inherit",
      // Huge pages for llama.cpp's buffers (engine-env.ts). Whether Electron's utility process
      // leaves malloc to glibc, so that the tunable applies, is unverified here (no Electron
      // runtime on the CI machines); headless mode's fork is measured.
      env: engineEnv(process.env),
    });
    let exited = false;
    child.on("exit", () => {
      exited = true;
    });
    child.on("error", (type, location) => {
      // A FatalError (V8 OOM, abort) is followed by "exit"; log where it happened, the
      // supervisor handles the restart.
      console.error(`[engine] ${type} at ${location}`);
    });
    return {
      send(message: unknown): void {
        // After exit the channel is gone; the supervisor already learns that from onExit and
        // fails the pending request, so a late message is dropped instead of throwing here.
        if (!exited) child.postMessage(message);
      },
      onMessage(listener: (message: unknown) => void): void {
        child.on("message", (message: unknown) => listener(message));
      },
      onExit(listener: (code: number | null, signal: string | null) => void): void {
        // utilityProcess reports only an exit code; a crash shows as a non-zero code.
        child.on("exit", (code: number) => listener(code, null));
      },
      kill(): void {
        if (!exited) child.kill();
      },
      get pid(): number | undefined {
        return child.pid;
      },
    };
  };
}
