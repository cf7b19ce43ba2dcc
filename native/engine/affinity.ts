/**
 * Keeps the engine's threads on the cores its compute threads use (Linux).
 *
 * node-llama-cpp runs each decode on one of libuv's pool threads, and the scheduler moves those
 * threads between cores whenever another process wakes up, e.g. the server the engine just
 * sent tokens to. Each move costs the next tokens a cold cache. Measured on the 2-core VM
 * (small model, 64 tokens, the same server alternating SSE and non-streaming requests): a
 * streamed answer took 4–6 ms longer than the same answer unstreamed (~12%), 0.3–0.5 ms with
 * the engine's threads kept on one core, and both got faster (~28 vs ~32 ms). So the engine
 * keeps its threads on the last `threads` CPUs it may use and leaves the rest, CPU 0 first,
 * to the app; with as many threads as CPUs there is nothing to leave and nothing is changed.
 *
 * Node has no sched_setaffinity, so this runs util-linux's `taskset -a -p` on the engine's own
 * pid once at start, before llama.cpp is loaded: `-a` covers the threads already there (V8's
 * platform workers) and threads created later (libuv's pool, llama.cpp's) inherit the mask.
 * Without taskset, or with MACARON_ENGINE_AFFINITY=0, the engine runs unpinned, as before.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { switchedOff } from "../../common/env-switch";

/** CPUs of a kernel cpu list such as "0-3,8,10-11", in order. */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(",")) {
    if (part === "") continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`not a cpu list: ${JSON.stringify(list)}`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** The CPUs this process may run on (its Cpus_allowed_list), or null where that is not known. */
export function allowedCpus(status = readProcStatus()): number[] | null {
  const line = status === null ? null : /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
  return line ? parseCpuList(line[1]!) : null;
}

function readProcStatus(): string | null {
  try {
    return readFileSync("/proc/self/status", "utf8");
  } catch {
    return null;
  }
}

/** The CPUs to keep `threads` compute threads on: the last ones allowed, or null for "all". */
export function engineCpus(threads: number, allowed: readonly number[]): number[] | null {
  if (threads < 1 || threads >= allowed.length) return null;
  return allowed.slice(allowed.length - threads);
}

export function affinityEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return !switchedOff(env.MACARON_ENGINE_AFFINITY);
}

export type Affinity =
  | { pinned: number[] }
  | { pinned: null; reason: "off" | "not-linux" | "all-cpus" | "unknown-cpus" | "taskset-failed" };

/** Keep this process's threads on the CPUs for `threads` compute threads (see above). */
export function pinEngineThreads(
  threads: number,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Affinity {
  if (!affinityEnabled(env)) return { pinned: null, reason: "off" };
  if (platform !== "linux") return { pinned: null, reason: "not-linux" };
  const allowed = allowedCpus();
  if (!allowed) return { pinned: null, reason: "unknown-cpus" };
  const cpus = engineCpus(threads, allowed);
  if (!cpus) return { pinned: null, reason: "all-cpus" };
  try {
    execFileSync("taskset", ["-a", "-p", "-c", cpus.join(","), String(process.pid)], {
      stdio: "ignore",
      timeout: 5_000,
    });
  } catch {
    return { pinned: null, reason: "taskset-failed" };
  }
  return { pinned: cpus };
}
