/**
 * The `unitTests` check: the answer's code block in the case's language, run with its tests in
 * the code sandbox (sandbox/sandbox.ts, a child process). A case passes when its tests pass.
 */
import type { Assertion } from "./contract-schema";
import { CodeSandbox, type SandboxLanguage } from "./sandbox/sandbox";
import type { TaskCheck } from "./task-assertions";

type UnitTests = Extract<Assertion, { type: "unitTests" }>;

const TAGS: Readonly<Record<SandboxLanguage, readonly string[]>> = {
  python: ["python", "py", "python3"],
  js: ["js", "javascript", "node", "mjs"],
};

const FENCES = /```([^\s`]*)[^\n]*\n([\s\S]*?)```/g;

/**
 * The code of the answer in `language`: the first fenced block tagged with it, else the first
 * untagged block. Null when there is none.
 */
export function codeOf(output: string, language: SandboxLanguage): string | null {
  let untagged: string | null = null;
  for (const m of output.matchAll(FENCES)) {
    const tag = (m[1] ?? "").toLowerCase();
    if (TAGS[language].includes(tag)) return m[2] ?? "";
    if (tag === "" && untagged === null) untagged = m[2] ?? "";
  }
  return untagged;
}

let shared: CodeSandbox | null = null;

/**
 * The process-wide sandbox: started on the first code check, its child kept for the next ones
 * (it does not keep the process alive).
 */
export function sharedSandbox(): CodeSandbox {
  shared ??= new CodeSandbox();
  return shared;
}

/** Run the answer's code against the case's tests; the verdict as a task check. */
export async function checkUnitTests(
  output: string,
  a: UnitTests,
  sandbox: CodeSandbox = sharedSandbox(),
): Promise<TaskCheck> {
  const code = codeOf(output, a.language);
  if (code === null || code.trim() === "")
    return {
      passed: false,
      detail: `no ${a.language === "js" ? "JavaScript" : "Python"} code block to test`,
    };
  const v = await sandbox.run({
    language: a.language,
    code,
    entry: a.entry ?? null,
    calls: a.calls,
    testCode: a.testCode,
  });
  const label = v.status === "passed" ? "" : `${v.status}: `;
  return { passed: v.status === "passed", detail: `${label}${v.detail} (${v.passed}/${v.total} tests)` };
}
