/**
 * The contract's code sandbox: runs an answer's code against its unit tests in a child
 * process (child.ts), never in the caller's thread, so a hostile or runaway answer cannot stall
 * the server. JavaScript runs in a fresh vm context, Python in Pyodide (no Python install).
 * The child is started through the node-child seam (child_process.fork headless, a utility
 * process in Electron); requests and verdicts travel as messages, nothing over stdin.
 *
 * Limits: a time limit per request (the child's own per-call limit, and here a kill at the limit
 * plus a grace); memory — the child's V8 heap is capped (--max-old-space-size) and, where
 * /proc exists, its resident memory is watched and the child killed above the limit. A killed
 * or dead child is replaced on the next request (Python then loads again, ~3 s). The child runs
 * without code generation from strings (--disallow-code-generation-from-strings), so a value of
 * this process reached from inside cannot be turned into code.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { forkNodeChild, type NodeChild, type StartNodeChild } from "../../process/node-child";
import { parseFromChild, type SandboxRequest, type SandboxVerdict, type ToChild } from "./protocol";

export type { SandboxCall, SandboxLanguage, SandboxRequest, SandboxStatus, SandboxVerdict } from "./protocol";

export interface SandboxOptions {
  /** Per request, ms (start-up such as loading Python not counted). Default 5,000. */
  timeoutMs?: number;
  /** Resident memory of the child, MiB, above which it is killed (Linux). Default 768. */
  memoryMb?: number;
  /** The child's V8 heap, MiB. Default 256. */
  heapMb?: number;
}

export interface SandboxEntry {
  path: string;
  execArgv: string[];
}

/** out/main/sandbox.js next to the bundle; from sources, child.ts through tsx's loader. */
export function resolveSandboxEntry(moduleUrl: string = import.meta.url): SandboxEntry {
  const here = dirname(fileURLToPath(moduleUrl));
  const bundled = join(here, "sandbox.js");
  if (!moduleUrl.endsWith(".ts") && existsSync(bundled)) return { path: bundled, execArgv: [] };
  const tsxLoader = pathToFileURL(createRequire(moduleUrl).resolve("tsx")).href;
  return { path: join(here, "child.ts"), execArgv: ["--import", tsxLoader] };
}

const GRACE_MS = 2_000;
const MEMORY_POLL_MS = 50;
const PAGE_BYTES = 4096;

/** Resident memory of a process in MiB from /proc (null where there is none). */
function residentMb(pid: number): number | null {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]);
    return Number.isFinite(pages) ? (pages * PAGE_BYTES) / 1024 / 1024 : null;
  } catch {
    return null;
  }
}

interface Pending {
  resolve: (v: SandboxVerdict) => void;
  request: SandboxRequest;
  timer: NodeJS.Timeout | null;
  started: number;
}

/**
 * One sandbox child, started on the first request and kept for the next ones (one request at a
 * time; further requests queue). `close()` ends it.
 */
export class CodeSandbox {
  private child: NodeChild | null = null;
  private exited = new WeakSet<NodeChild>();
  private stderrTail = "";
  private pending = new Map<number, Pending>();
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private memoryTimer: NodeJS.Timeout | null = null;
  /** Why the current child was killed, for the verdict of the request it was running. */
  private killedFor: { status: "timeout" | "memory" | "crashed"; detail: string } | null = null;
  private readonly timeoutMs: number;
  private readonly memoryMb: number;
  private readonly heapMb: number;

  constructor(
    options: SandboxOptions = {},
    private readonly entry: SandboxEntry = resolveSandboxEntry(),
    private readonly startChild: StartNodeChild = forkNodeChild,
  ) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.memoryMb = options.memoryMb ?? 768;
    this.heapMb = options.heapMb ?? 256;
  }

  /** Run one request; resolves with its verdict, never rejects. */
  run(request: SandboxRequest): Promise<SandboxVerdict> {
    const next = this.queue.then(() => this.runNow(request));
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.queue;
    this.stop();
  }

  private start(): NodeChild {
    const child = this.startChild(this.entry.path, {
      execArgv: [
        ...this.entry.execArgv,
        "--disallow-code-generation-from-strings",
        `--max-old-space-size=${this.heapMb}`,
      ],
      // Nothing of ours in its environment (keys, tokens).
      env: { NODE_OPTIONS: "" },
      stdout: "ignore",
      stderr: "pipe",
      name: "Macaron code sandbox",
    });
    this.stderrTail = "";
    child.stderr?.on("data", (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString("utf8")).slice(-2000);
    });
    child.onMessage((m) => this.onMessage(child, m));
    child.onExit((code, signal, error) => {
      this.exited.add(child);
      if (error) this.stderrTail += `\n${error.message}`;
      this.onExit(child, code, signal);
    });
    this.child = child;
    const pid = child.pid;
    if (pid !== undefined && residentMb(pid) !== null) {
      this.memoryTimer = setInterval(() => {
        const mb = residentMb(pid);
        if (mb === null || mb <= this.memoryMb || this.child !== child) return;
        // Idle (memory a finished run left behind, not yet collected): replace it quietly, so
        // the next request does not start in a child already near the limit and take the blame.
        if (this.pending.size === 0) this.stop();
        else this.kill("memory", `the code used over ${this.memoryMb} MiB of memory`);
      }, MEMORY_POLL_MS);
      this.memoryTimer.unref();
    }
    return child;
  }

  private stop(): void {
    if (this.memoryTimer) clearInterval(this.memoryTimer);
    this.memoryTimer = null;
    const child = this.child;
    this.child = null;
    if (child && !this.exited.has(child)) child.kill();
  }

  private kill(status: "timeout" | "memory" | "crashed", detail: string): void {
    this.killedFor = { status, detail };
    this.child?.kill();
  }

  private runNow(request: SandboxRequest): Promise<SandboxVerdict> {
    // A child near its limit (what an earlier run left behind) starts the next run fresh.
    const pid = this.child?.pid;
    const mb = pid === undefined ? null : residentMb(pid);
    if (mb !== null && mb > this.memoryMb * 0.75) this.stop();
    const child = this.child ?? this.start();
    this.hold(child, true);
    const id = this.nextId++;
    return new Promise<SandboxVerdict>((resolve) => {
      this.pending.set(id, { resolve, request, timer: null, started: performance.now() });
      const message: ToChild = { id, request, timeoutMs: this.timeoutMs };
      // A child that cannot take it is ending: its exit gives the verdict ("crashed").
      child.send(message);
    });
  }

  private lost(
    status: SandboxVerdict["status"],
    detail: string,
    request: SandboxRequest,
    started?: number,
  ): SandboxVerdict {
    return {
      status,
      passed: 0,
      total: request.calls.length + (request.testCode ? 1 : 0),
      detail,
      durationMs: started === undefined ? 0 : Math.round(performance.now() - started),
    };
  }

  private finish(id: number, v: SandboxVerdict): void {
    const p = this.pending.get(id);
    if (!p) return;
    if (p.timer) clearTimeout(p.timer);
    this.pending.delete(id);
    if (this.pending.size === 0 && this.child) this.hold(this.child, false);
    p.resolve(v);
    // A run that hit the memory limit inside the child leaves its garbage there: start fresh.
    if (v.status === "memory" && this.pending.size === 0) this.stop();
  }

  /** An idle child does not keep this process alive; a busy one does (its answer is awaited). */
  private hold(child: NodeChild, busy: boolean): void {
    if (busy) child.ref();
    else child.unref();
  }

  /**
   * A message from the child, checked (protocol.ts). The child runs hostile code, so one it
   * cannot have meant (a malformed message) says it is no longer the process that was started:
   * it is replaced, and the request it was running gets a "crashed" verdict from its exit.
   */
  private onMessage(child: NodeChild, raw: unknown): void {
    // A child already replaced has no request left (see onExit): nothing it says matters.
    if (child !== this.child) return;
    const parsed = parseFromChild(raw);
    if (!parsed.ok) {
      const problem = `the sandbox process sent a malformed message (${parsed.problem})`;
      process.stderr.write(`[sandbox] ${problem}; replacing it\n`);
      if (this.pending.size === 0) this.stop();
      else this.kill("crashed", problem);
      return;
    }
    const m = parsed.message;
    const p = this.pending.get(m.id);
    if (!p) {
      process.stderr.write(
        `[sandbox] dropped a "${m.type}" message for request ${m.id}, which is not running\n`,
      );
      return;
    }
    if (m.type === "running") {
      p.started = performance.now();
      p.timer = setTimeout(
        () => this.kill("timeout", `the code ran past the ${this.timeoutMs} ms limit`),
        this.timeoutMs + GRACE_MS,
      );
      p.timer.unref?.();
    } else this.finish(m.id, m.verdict);
  }

  private onExit(child: NodeChild, code: number | null, signal: string | null): void {
    // A child this sandbox already replaced had no request left; the pending ones are the new one's.
    if (this.child !== child) return;
    this.stop();
    const killed = this.killedFor;
    this.killedFor = null;
    const heap = /heap out of memory|Reached heap limit|allocation failed/i.test(this.stderrTail);
    for (const [id, p] of [...this.pending]) {
      let v: SandboxVerdict;
      if (killed) v = this.lost(killed.status, killed.detail, p.request, p.started);
      else if (heap)
        v = this.lost(
          "memory",
          `the code ran out of memory (heap limit ${this.heapMb} MiB)`,
          p.request,
          p.started,
        );
      else
        v = this.lost(
          "crashed",
          `the sandbox process ended (${signal ?? `exit code ${code}`}) while running the code`,
          p.request,
          p.started,
        );
      this.finish(id, v);
    }
  }
}
