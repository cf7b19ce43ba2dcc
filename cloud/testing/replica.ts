/**
 * A cloud service replica as a real child process (`node --import tsx cloud/cli.ts`), for the
 * multi-replica test and the benchmark. One node process, no launcher in between, so SIGKILL
 * kills the service itself and SIGTERM reaches its graceful shutdown.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface Replica {
  url: string;
  proc: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Output so far (for a failing test's message). */
  log(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ReplicaOptions {
  /** postgres://… or "sqlite". */
  database: string;
  dataDir: string;
  adminKey: string;
  extraArgs?: string[];
}

export function startReplica(opts: ReplicaOptions): Promise<Replica> {
  const proc = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "cloud/cli.ts",
      "--database",
      opts.database,
      "--data-dir",
      opts.dataDir,
      "--admin-key",
      opts.adminKey,
      "--port",
      "0",
      ...(opts.extraArgs ?? []),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  proc.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      // The CLI prints this once the port accepts connections: the readiness signal.
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m)
        resolve({
          url: m[1]!,
          proc,
          exited,
          log: () => out,
          async stop(signal = "SIGTERM") {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            return exited;
          },
        });
    });
    void exited.then((code) => reject(new Error(`replica exited (${code}) before listening:\n${out}`)));
  });
}
