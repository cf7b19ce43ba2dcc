/** Runs `npm run train` (train-cli.ts under tsx) as a real process, for the tests. */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const CLI = join(import.meta.dirname, "../../../cloud/training/train-cli.ts");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI's exit code and output for `args`; `env` is added to this process's environment. */
export function runTrainCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const child = spawn(process.execPath, ["--import", tsxLoader, CLI, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
