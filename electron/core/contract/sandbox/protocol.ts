/**
 * What the contract's code sandbox is asked and answers (parent ⇄ child process). A request is
 * one answer's code and its tests in one language; the verdict says how they ended. Each
 * message is a zod schema, its type inferred from it; each side parses what it receives
 * (parseToChild in child.ts, parseFromChild in sandbox.ts), so a malformed message is an error
 * naming what is wrong, never a crash or a request left without its verdict.
 */
import { z } from "zod";
import { describeIssues } from "../../../../common/zod-issues";

export const SandboxLanguageSchema = z.enum(["python", "js"]);
export type SandboxLanguage = z.infer<typeof SandboxLanguageSchema>;

/** One unit test as a call: the answer's function applied to `args` must return `expect`. */
const SandboxCallSchema = z.object({ args: z.array(z.unknown()), expect: z.unknown() }).strict();
export type SandboxCall = z.infer<typeof SandboxCallSchema>;

const SandboxRequestSchema = z
  .object({
    language: SandboxLanguageSchema,
    /** The answer's code (the body of its code block). */
    code: z.string(),
    /** The function the calls test; null: the first function the code defines at top level. */
    entry: z.string().nullable(),
    calls: z.array(SandboxCallSchema),
    /** Extra test code in the same language, run after the answer's code in its scope (asserts). */
    testCode: z.string().optional(),
  })
  .strict();
export type SandboxRequest = z.infer<typeof SandboxRequestSchema>;

/**
 * How a run ended:
 * - passed: every call returned what was expected and the test code raised nothing;
 * - failed: a call returned something else (or the test code's assertion failed);
 * - error: the code did not compile or raised an exception (no function found, a bad call…);
 * - refused: the code did what the sandbox forbids (a file, the network, a process, a module
 *   such as os or fs);
 * - timeout: it ran past the time limit (the sandbox process is killed and replaced);
 * - memory: it went over the memory limit (killed and replaced);
 * - crashed: the sandbox process died for another reason, or said something unreadable (replaced).
 */
const SandboxStatusSchema = z.enum(["passed", "failed", "error", "refused", "timeout", "memory", "crashed"]);
export type SandboxStatus = z.infer<typeof SandboxStatusSchema>;

const tally = z.number().int().min(0);

const SandboxVerdictSchema = z.object({
  status: SandboxStatusSchema,
  /** Tests that passed, of how many (calls, plus one for test code when given). */
  passed: tally,
  total: tally,
  /** One sentence a person can act on: the first failing test, the error or the limit hit. */
  detail: z.string(),
  /** Time the run took in the sandbox (ms), start-up excluded. */
  durationMs: z.number().min(0),
});
export type SandboxVerdict = z.infer<typeof SandboxVerdictSchema>;

const id = z.number().int();

/** Parent → child: strict, as a request entering the sandbox. */
const ToChildSchema = z
  .object({ id, request: SandboxRequestSchema, timeoutMs: z.number().positive() })
  .strict();
export type ToChild = z.infer<typeof ToChildSchema>;

/**
 * Child → parent: `running` when a request's code starts (after any start-up such as loading
 * Python, which the time limit does not count), then its `verdict`.
 */
const FromChildSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("running"), id }),
  z.object({ type: z.literal("verdict"), id, verdict: SandboxVerdictSchema }),
]);
export type FromChild = z.infer<typeof FromChildSchema>;

/** A message read, or what is wrong with it and the request `id` it named (when numeric). */
export type Parsed<M> = { ok: true; message: M } | { ok: false; id: number | undefined; problem: string };

function parseWith<M>(schema: z.ZodType<M>, raw: unknown): Parsed<M> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const rawId = typeof raw === "object" && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return {
    ok: false,
    id: typeof rawId === "number" && Number.isInteger(rawId) ? rawId : undefined,
    problem: describeIssues(parsed.error),
  };
}

/** The child's reading of a request from the parent. */
export const parseToChild = (raw: unknown): Parsed<ToChild> => parseWith(ToChildSchema, raw);

/** The parent's reading of a message from the child. */
export const parseFromChild = (raw: unknown): Parsed<FromChild> => parseWith(FromChildSchema, raw);
