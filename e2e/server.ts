import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { test } from "@playwright/test";

const root = resolve(import.meta.dirname, "..");
/** How much of a failed test's server log is printed. */
const SERVER_LOG_LINES = 80;

export interface ServerOptions {
  model?: string;
  extraArgs?: string[];
  dataDir?: string;
  /** Extra environment for the server (e.g. MACARON_FEEDBACK_ENDPOINT). */
  env?: Record<string, string>;
}

/**
 * The headless server as a user starts it (`serve` CLI), in its own process with its own data
 * dir. Readiness is the `listening on URL` line, never a sleep.
 */
export class ServerProcess {
  private constructor(
    readonly proc: ChildProcess,
    /** The printed sign-in URL (`/?code=`, single use): open pages with `loginUrl()`. */
    readonly url: string,
    readonly apiKey: string,
    readonly dataDir: string,
    private readonly ownsDataDir: boolean,
    readonly output: string[],
  ) {}

  static async start(opts: ServerOptions = {}): Promise<ServerProcess> {
    const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "macaron-e2e-"));
    const args = ["--import", "tsx", "electron/server/cli.ts", "--host", "127.0.0.1", "--port", "0"];
    args.push("--data-dir", dataDir);
    if (opts.model) args.push("--model", opts.model);
    args.push(...(opts.extraArgs ?? []));
    const proc = spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, MACARON_ENGINE_THREADS: "1", ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output: string[] = [];
    proc.stderr.on("data", (d: Buffer) => output.push(d.toString()));
    let apiKey = "";
    const url = await new Promise<string>((resolveUrl, reject) => {
      const lines = createInterface({ input: proc.stdout });
      const timer = setTimeout(() => reject(new Error(`server did not start:\n${output.join("")}`)), 45_000);
      lines.on("line", (line) => {
        output.push(line + "\n");
        // The generated key comes before the sign-in URL, which carries a one-time code, not the key.
        apiKey = /^api key: (\S+)/.exec(line)?.[1] ?? apiKey;
        const m = /^listening on (\S+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]!);
        }
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code}:\n${output.join("")}`));
      });
    });
    return new ServerProcess(proc, url, apiKey, dataDir, !opts.dataDir, output);
  }

  private printedUrlUsed = false;

  /**
   * A URL that signs a fresh browser context in: first the one the server printed (its code
   * works once), then fresh codes from `POST /api/login-code`, as a user with the key gets them.
   */
  async loginUrl(): Promise<string> {
    if (!this.printedUrlUsed) {
      this.printedUrlUsed = true;
      return this.url;
    }
    const res = await fetch(`${this.origin}/api/login-code`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.apiKey}` },
    });
    const body = (await res.json()) as { ok: boolean; value?: { url: string }; error?: { message: string } };
    if (!body.ok || !body.value) throw new Error(body.error?.message ?? "login-code failed");
    return body.value.url;
  }

  get origin(): string {
    return new URL(this.url).origin;
  }

  /** Calls the app API the way the renderer does, with the bearer key. */
  async call<T = unknown>(method: string, input: unknown = {}): Promise<T> {
    const res = await fetch(`${this.origin}/api/call/${method}`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(input),
    });
    const body = (await res.json()) as { ok: boolean; value?: T; error?: { message: string } };
    if (!body.ok) throw new Error(body.error?.message ?? `call ${method} failed`);
    return body.value as T;
  }

  /** Pids of the server's child processes (the engine). */
  childPids(): number[] {
    try {
      return execFileSync("pgrep", ["-P", String(this.proc.pid)])
        .toString()
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  }

  /**
   * A failed test's server log goes to the run's output (CI keeps nothing else): what core
   * logged (a load that failed, a slow engine) is often the cause the page only shows as a wait.
   */
  private printLogIfFailed(): void {
    if (!currentTestFailed()) return;
    const lines = this.output.join("").split("\n");
    const tail = lines.slice(-SERVER_LOG_LINES).join("\n");
    console.log(
      `--- server log (pid ${this.proc.pid}, last ${SERVER_LOG_LINES} lines) ---\n${tail}\n--- end of server log ---`,
    );
  }

  /** Stops the server; its data dir is removed unless `keepData` (a test restarts on it). */
  async stop({ keepData = false }: { keepData?: boolean } = {}): Promise<void> {
    this.printLogIfFailed();
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGTERM");
      const timer = setTimeout(() => this.proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (this.ownsDataDir && !keepData) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Whether the test this hook runs for ended otherwise than expected (false outside a test). */
function currentTestFailed(): boolean {
  try {
    const info = test.info();
    return info.status !== undefined && info.status !== info.expectedStatus;
  } catch {
    return false;
  }
}

export function fixturesDir(): string {
  const dir = process.env.MACARON_FIXTURES;
  if (!dir) throw new Error("MACARON_FIXTURES is not set: run through playwright.config.ts (global setup)");
  return dir;
}
