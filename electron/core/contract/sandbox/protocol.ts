/**
 * What the contract's code sandbox is asked and answers (parent ⇄ child process). A request is
 * one answer's code and its tests in one language; the verdict says how they ended.
 */

export type SandboxLanguage = "python" | "js";

/** One unit test as a call: the answer's function applied to `args` must return `expect`. */
export interface SandboxCall {
  args: unknown[];
  expect: unknown;
}

export interface SandboxRequest {
  language: SandboxLanguage;
  /** The answer's code (the body of its code block). */
  code: string;
  /** The function the calls test; null: the first function the code defines at top level. */
  entry: string | null;
  calls: SandboxCall[];
  /** Extra test code in the same language, run after the answer's code in its scope (asserts). */
  testCode?: string;
}

/**
 * How a run ended:
 * - passed: every call returned what was expected and the test code raised nothing;
 * - failed: a call returned something else (or the test code's assertion failed);
 * - error: the code did not compile or raised an exception (no function found, a bad call…);
 * - refused: the code did what the sandbox forbids (a file, the network, a process, a module
 *   such as os or fs);
 * - timeout: it ran past the time limit (the sandbox process is killed and replaced);
 * - memory: it went over the memory limit (killed and replaced);
 * - crashed: the sandbox process died for another reason (replaced).
 */
export type SandboxStatus = "passed" | "failed" | "error" | "refused" | "timeout" | "memory" | "crashed";

export interface SandboxVerdict {
  status: SandboxStatus;
  /** Tests that passed, of how many (calls, plus one for test code when given). */
  passed: number;
  total: number;
  /** One sentence a person can act on: the first failing test, the error or the limit hit. */
  detail: string;
  /** Time the run took in the sandbox (ms), start-up excluded. */
  durationMs: number;
}

/** Parent → child. */
export type ToChild = { id: number; request: SandboxRequest; timeoutMs: number };

/**
 * Child → parent: `running` when a request's code starts (after any start-up such as loading
 * Python, which the time limit does not count), then its `verdict`.
 */
export type FromChild =
  { type: "running"; id: number } | { type: "verdict"; id: number; verdict: SandboxVerdict };
