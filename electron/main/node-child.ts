/**
 * The node-child seam (electron/core/process/node-child.ts) on Electron's utilityProcess: the
 * code sandbox, the llama.cpp build and its probe run as utility processes, because the packaged
 * binary is not to be run as plain Node (the runAsNode fuse, electron-builder.yml).
 *
 * Kept thin, and `fork` is injected (index.ts passes utilityProcess.fork) so that
 * node-child.test.ts drives this adapter with a stand-in built on child_process that behaves
 * like a utility process (process.parentPort in the child, exit code only, no stdin). No
 * Electron runtime runs on the CI machines: the real utilityProcess is not exercised there.
 */
import type { Readable } from "node:stream";
import type { ForkOptions, UtilityProcess } from "electron";
import type { NodeChild, StartNodeChild } from "../core/process/node-child";

/** The part of a utility process this adapter uses. */
export type UtilityChild = Pick<UtilityProcess, "pid" | "postMessage" | "kill"> & {
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  on(event: "message", listener: (message: unknown) => void): unknown;
  on(event: "exit", listener: (code: number) => void): unknown;
  on(event: "error", listener: (type: string, location: string) => void): unknown;
};

export type UtilityFork = (modulePath: string, args: string[], options: ForkOptions) => UtilityChild;

/** Once exited, how long to wait for the rest of stdout/stderr (a grandchild may hold the pipe). */
const DRAIN_MS = 2_000;

function drained(stream: Readable | null): Promise<void> {
  if (!stream || stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(done, DRAIN_MS);
    const finish = (): void => {
      clearTimeout(timer);
      done();
    };
    stream.once("end", finish);
    stream.once("close", finish);
  });
}

export function createUtilityNodeChildStarter(fork: UtilityFork): StartNodeChild {
  return (modulePath, options): NodeChild => {
    const stdout = options.stdout ?? "pipe";
    const stderr = options.stderr ?? "pipe";
    const child = fork(modulePath, options.args ?? [], {
      serviceName: options.name,
      env: options.env,
      cwd: options.cwd,
      // Always given: utilityProcess's default is this process's execArgv.
      execArgv: options.execArgv ?? [],
      // stdin cannot be anything but "ignore" in a utility process.
      stdio: ["ignore", stdout, stderr],
    });
    // Electron types them as NodeJS.ReadableStream; they are stream.Readable objects.
    const out = stdout === "pipe" ? (child.stdout as Readable | null) : null;
    const err = stderr === "pipe" ? (child.stderr as Readable | null) : null;
    let exited = false;
    let ended: { code: number | null } | null = null;
    const exitListeners: Array<(code: number | null, signal: string | null) => void> = [];
    child.on("exit", (code) => {
      exited = true;
      // The exit can come before the pipes are read to the end; the seam promises all output first.
      void Promise.all([drained(out), drained(err)]).then(() => {
        ended = { code };
        // utilityProcess reports only an exit code; a crash shows as a non-zero code.
        for (const listener of exitListeners.splice(0)) listener(code, null);
      });
    });
    child.on("error", (type, location) => {
      // A FatalError (V8 out of memory, abort); "exit" follows.
      console.error(`[${options.name}] ${type} at ${location}`);
    });
    return {
      get pid() {
        return child.pid;
      },
      stdout: out,
      stderr: err,
      send(message) {
        if (!exited) child.postMessage(message);
      },
      onMessage: (listener) => void child.on("message", listener),
      onExit(listener) {
        if (ended) listener(ended.code, null);
        else exitListeners.push(listener);
      },
      kill() {
        if (!exited) child.kill();
      },
      // A utility process does not keep the main process alive: nothing to hold or let go.
      ref: () => undefined,
      unref: () => undefined,
    };
  };
}
