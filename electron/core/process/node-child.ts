/**
 * "Run this JavaScript file as a Node child": the seam for the helper processes core starts
 * (the contract's code sandbox, the llama.cpp build and its load probe). Headless mode and tests
 * use child_process.fork (forkNodeChild, below); the Electron main process injects one built on
 * utilityProcess.fork (electron/main/node-child.ts), because the packaged app's binary cannot be
 * run as plain Node (the runAsNode fuse is meant to be off, electron-builder.yml).
 *
 * The common ground of the two, and so all a caller may count on: no stdin (a utility process
 * has none), stdout and stderr as pipes, structured-clone messages both ways (the child answers
 * through parent-port.ts), an exit code (a signal only from child_process), and kill().
 */
import { fork } from "node:child_process";
import type { Readable } from "node:stream";

export interface NodeChildOptions {
  /** Arguments after the script (the child's process.argv.slice(2); see parent-port.ts scriptArgs). */
  args?: string[];
  /** The child's whole environment (nothing of this process's is added). */
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Node flags (a heap cap, the tsx loader from sources); none by default, never this process's. */
  execArgv?: string[];
  /** "pipe" (default) or "ignore"; stdin is always closed. */
  stdout?: "pipe" | "ignore";
  stderr?: "pipe" | "ignore";
  /** What the process is called in Electron's process list (utilityProcess serviceName). */
  name: string;
}

export interface NodeChild {
  readonly pid: number | undefined;
  /** null when the option said "ignore". */
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** A message to the child (structured clone); dropped once it has exited. */
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  /**
   * Once, after the child ended and its stdout and stderr were read to the end. `error`: it
   * could not be started (code and signal null then).
   */
  onExit(listener: (code: number | null, signal: string | null, error?: Error) => void): void;
  /** End it now (SIGTERM on POSIX, as utilityProcess.kill does); nothing when it has ended. */
  kill(): void;
  /** Whether it keeps this process's event loop alive (child_process only; a no-op in Electron). */
  ref(): void;
  unref(): void;
}

export type StartNodeChild = (modulePath: string, options: NodeChildOptions) => NodeChild;

/** child_process.fork: headless mode, the CLI tools and tests. */
export const forkNodeChild: StartNodeChild = (modulePath, options) => {
  const child = fork(modulePath, options.args ?? [], {
    execArgv: options.execArgv ?? [],
    env: options.env,
    cwd: options.cwd,
    stdio: ["ignore", options.stdout ?? "pipe", options.stderr ?? "pipe", "ipc"],
    // Structured clone, like Electron's parentPort: both carry the same values.
    serialization: "advanced",
  });
  const exitListeners: Array<(code: number | null, signal: string | null, error?: Error) => void> = [];
  let ended: { code: number | null; signal: string | null; error?: Error } | null = null;
  const end = (code: number | null, signal: string | null, error?: Error): void => {
    if (ended) return;
    ended = { code, signal, error };
    for (const listener of exitListeners.splice(0)) listener(code, signal, error);
  };
  // "close" comes after "exit" once stdout and stderr are read to the end.
  child.on("close", (code, signal) => end(code, signal));
  child.on("error", (error) => {
    // Not started (ENOENT, a bad cwd): no "close" follows.
    if (child.pid === undefined) end(null, null, error);
  });
  const streams = (): Array<{ ref?: () => void; unref?: () => void }> =>
    [child.stdout, child.stderr].filter((s) => s !== null) as never;
  return {
    get pid() {
      return child.pid;
    },
    stdout: child.stdout,
    stderr: child.stderr,
    send(message) {
      if (!child.connected) return;
      // A closed channel means the child is exiting; onExit reports that.
      child.send(message as never, (error) => void error);
    },
    onMessage: (listener) => void child.on("message", listener),
    onExit(listener) {
      if (ended) listener(ended.code, ended.signal, ended.error);
      else exitListeners.push(listener);
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    },
    ref() {
      child.ref();
      (child.channel as { ref?: () => void } | null | undefined)?.ref?.();
      for (const s of streams()) s.ref?.();
    },
    unref() {
      child.unref();
      (child.channel as { unref?: () => void } | null | undefined)?.unref?.();
      for (const s of streams()) s.unref?.();
    },
  };
};

/**
 * Run a script to its end: its stdout and stderr as text, its exit. Killed at timeoutMs, or
 * when signal aborts (then `killed` says why).
 */
export function runNodeScript(
  start: StartNodeChild,
  modulePath: string,
  options: NodeChildOptions & { timeoutMs?: number; signal?: AbortSignal },
): Promise<{
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  killed: "timeout" | "aborted" | null;
}> {
  return new Promise((resolve, reject) => {
    const child = start(modulePath, options);
    let stdout = "";
    let stderr = "";
    let killed: "timeout" | "aborted" | null = null;
    child.stdout?.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr?.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const stop = (why: "timeout" | "aborted"): void => {
      killed ??= why;
      child.kill();
    };
    const timer =
      options.timeoutMs === undefined ? null : setTimeout(() => stop("timeout"), options.timeoutMs);
    const onAbort = (): void => stop("aborted");
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    child.onExit((code, signal, error) => {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (error) reject(error);
      else resolve({ code, signal, stdout, stderr, killed });
    });
  });
}
