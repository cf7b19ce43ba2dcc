/**
 * The fast tier's rule, enforced (vitest setup file of the "fast" project, vitest.config.ts):
 * a test there runs in its own process only. Starting a child process or a worker thread (an
 * engine, a server, PostgreSQL, the Python trainer, the code sandbox, a browser) throws, naming
 * the file to move to the slow tier (testing/tiers/slow-tests.ts), so the tier cannot rot.
 */
import { createRequire, syncBuiltinESMExports } from "node:module";

const require = createRequire(import.meta.url);
const childProcess = require("node:child_process") as Record<string, unknown>;
const workerThreads = require("node:worker_threads") as Record<string, unknown>;

export class SlowTierError extends Error {}

function refuse(what: string): never {
  throw new SlowTierError(
    `${what} in the fast test tier: this file starts another process or thread, so it belongs to the slow tier (add it to testing/tiers/slow-tests.ts).`,
  );
}

for (const name of ["spawn", "spawnSync", "fork", "exec", "execSync", "execFile", "execFileSync"])
  childProcess[name] = () => refuse(`child_process.${name}`);
// `new ChildProcess().spawn(...)` starts a process without the functions above.
const ChildProcess = childProcess.ChildProcess as { prototype: Record<string, unknown> };
ChildProcess.prototype.spawn = () => refuse("ChildProcess.spawn");
workerThreads.Worker = class {
  constructor() {
    refuse("new Worker()");
  }
};
// ESM imports of the builtins (`import { spawn } from "node:child_process"`) see the change too.
syncBuiltinESMExports();
