/**
 * The evaluation contract's file format: a versioned list of cases (a conversation, the adapter
 * mode to answer with, assertions on the answer) and pass-rate thresholds. Teams add their own
 * files; every file is validated here before anything runs.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod";
import { describeIssues } from "../../../common/zod-issues";

const Text = z.string().max(100_000);

/**
 * One check on a case's answer. The task checks (codeBlock ... stopsOnItsOwn) measure whether a
 * specialist did its job in its format; `regression` compares with the live version on the same
 * case (the smoke contract's per-case rule; task contracts use thresholds.maxRegression).
 */
export const Assertion = z.discriminatedUnion("type", [
  z.object({ type: z.literal("contains"), value: z.string().min(1).max(10_000) }).strict(),
  z.object({ type: z.literal("notContains"), value: z.string().min(1).max(10_000) }).strict(),
  z
    .object({
      type: z.literal("regex"),
      pattern: z.string().min(1).max(2000),
      flags: z.string().max(8).optional(),
    })
    .strict(),
  /** The router (mode "auto") must put this adapter first. */
  z.object({ type: z.literal("routesTo"), adapter: z.string().min(1).max(64) }).strict(),
  /** The answer must contain nothing the feedback redactor would flag (e-mails, keys, numbers...). */
  z.object({ type: z.literal("noPii") }).strict(),
  /** Routing + generation time, ms (queue waiting excluded). */
  z.object({ type: z.literal("latencyMs"), max: z.number().positive().max(3_600_000) }).strict(),
  /** The answer parses as JSON valid against `schema` (an inline JSON Schema, a documented subset). */
  z.object({ type: z.literal("jsonSchemaValid"), schema: z.record(z.string(), z.unknown()) }).strict(),
  /** The candidate's score on this case must not fall below the live version's. */
  z.object({ type: z.literal("regression") }).strict(),
  /** At most `max` characters (code points) in the answer. */
  z.object({ type: z.literal("maxChars"), max: z.number().int().min(1).max(1_000_000) }).strict(),
  /** The generation ended on its own (end of turn), not at maxTokens. */
  z.object({ type: z.literal("stopsOnItsOwn") }).strict(),
  /** Prose: no code fence, not a JSON object or array; with singleLine, one line. */
  z.object({ type: z.literal("plainText"), singleLine: z.boolean().optional() }).strict(),
  /**
   * A fenced code block (```lang … ```) with a language tag; with `language`, that one
   * (js/javascript, ts/typescript, py/python count as the same).
   */
  z.object({ type: z.literal("codeBlock"), language: z.string().min(1).max(32).optional() }).strict(),
  /**
   * The answer is a GenUI document the app renders: it parses, is valid for the component
   * catalog with no invalid node, and has a component; with `components`, one of those types.
   */
  z
    .object({
      type: z.literal("genuiDocument"),
      components: z.array(z.string().min(1).max(64)).min(1).max(50).optional(),
    })
    .strict(),
  /** Only numbered lines "1. …", "2. …" (consecutive from 1), between minSteps and maxSteps of them. */
  z
    .object({
      type: z.literal("numberedPlan"),
      minSteps: z.number().int().min(1).max(100).default(3),
      maxSteps: z.number().int().min(1).max(100).optional(),
    })
    .strict(),
  /**
   * The answer is one tool call, exactly `{"tool":"<name>","arguments":{…}}` (see
   * resources/training/README.md); with `tool`, that tool; with `arguments`, at least those.
   */
  z
    .object({
      type: z.literal("toolCall"),
      tool: z.string().min(1).max(64).optional(),
      arguments: z.array(z.string().min(1).max(64)).max(50).optional(),
      /**
       * Argument values the call must carry: strings equal ignoring case and surrounding
       * spaces, numbers equal, anything else equal as JSON.
       */
      values: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
  /**
   * Correctness of code: the answer's code block in `language` runs in the sandbox (no files,
   * no network, time and memory limits) and each call of its function — the one named `entry`,
   * else the first function the code defines — must return `expect` (JSON values; numbers
   * within 1e-6 relative); `testCode` (same language, asserts) runs after it in its scope.
   */
  z
    .object({
      type: z.literal("unitTests"),
      language: z.enum(["python", "js"]),
      entry: z
        .string()
        .regex(/^[A-Za-z_$][\w$]*$/)
        .max(64)
        .optional(),
      calls: z
        .array(z.object({ args: z.array(z.unknown()).max(20), expect: z.unknown() }).strict())
        .max(50)
        .default([]),
      testCode: z.string().min(1).max(20_000).optional(),
    })
    .strict()
    .refine((a) => a.calls.length > 0 || a.testCode !== undefined, {
      message: "unitTests needs calls or testCode",
    }),
  /**
   * Key content: each group of `terms` is a list of alternatives, and at least `min` groups
   * (default: all) must have one alternative in the answer — case-insensitive, at the start of
   * a word ("ball" matches "balls"). Chat's reference facts, the steps a plan must cover, the
   * labels a UI must show.
   */
  z
    .object({
      type: z.literal("mentions"),
      terms: z
        .array(z.array(z.string().min(1).max(200)).min(1).max(20))
        .min(1)
        .max(50),
      min: z.number().int().min(1).max(50).optional(),
      /**
       * The answer must say more than the prompt it answers (a check an echo of the prompt could
       * pass is no check): it fails when it restates `prompt` (most of its words are the
       * prompt's) or has fewer than `minNewWords` content words (not stopwords) the prompt lacks.
       */
      beyondPrompt: z
        .object({
          prompt: z.string().min(1).max(20_000),
          minNewWords: z.number().int().min(0).max(50),
        })
        .strict()
        .optional(),
    })
    .strict(),
  /**
   * What a GenUI document must hold for the request: a component of type `component`, each of
   * `texts` in some string value of the document (case-insensitive), each of `numbers` as a
   * number value. With `prompt`, a document that copies the prompt into a text (a button
   * labelled with the whole request) fails: the texts must be the request's labels, not it.
   */
  z
    .object({
      type: z.literal("genuiContains"),
      component: z.string().min(1).max(64).optional(),
      texts: z.array(z.string().min(1).max(200)).max(50).default([]),
      numbers: z.array(z.number()).max(50).default([]),
      prompt: z.string().min(1).max(20_000).optional(),
    })
    .strict(),
]);
export type Assertion = z.infer<typeof Assertion>;
export type AssertionType = Assertion["type"];

export const ContractMessage = z
  .object({ role: z.enum(["system", "user", "assistant"]), content: Text })
  .strict();

export const ContractCase = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "letters, digits, '.', '_' or '-'"),
    description: z.string().max(2000).default(""),
    /** Adapter domains (chat, coding, agent, ui, base...) for per-tag pass rates. */
    tags: z.array(z.string().min(1).max(64)).max(20).default([]),
    /** Ends with the user turn to answer. */
    conversation: z.array(ContractMessage).min(1).max(200),
    /** "auto" (the router decides), "base" (no adapter), or the id of the adapter to pin. */
    mode: z.string().min(1).max(64),
    maxTokens: z.number().int().min(1).max(4096).optional(),
    /**
     * "ui": answer in UI mode as the app does for the UI specialist (the UI system prompt and
     * the catalog grammar); "text" (default): a plain answer.
     */
    format: z.enum(["text", "ui"]).optional(),
    /**
     * The reference answer, when the case has one: shown in reports, and two cases with the
     * same reference are the same question asked twice (degeneracy does not compare them).
     */
    reference: z.string().max(10_000).optional(),
    /** Take part in the contract's degeneracy check (default true; false for router cases, cut short). */
    distinct: z.boolean().optional(),
    assertions: z.array(Assertion).min(1).max(50),
  })
  .strict()
  .refine((c) => c.conversation[c.conversation.length - 1]?.role === "user", {
    message: "the conversation must end with a user message",
    path: ["conversation"],
  });
export type ContractCase = z.infer<typeof ContractCase>;

export const Thresholds = z
  .object({
    /** Share of cases that must pass overall (0..1). */
    minPassRate: z.number().min(0).max(1).default(1),
    /** Per tag: share of that tag's cases that must pass; tags not listed use minPassRate. */
    byTag: z.record(z.string(), z.number().min(0).max(1)).default({}),
    /**
     * Paired comparison with the live version: when set and a live set is given, every case
     * runs on both, and per tag and overall the candidate's pass rate may fall at most this
     * much (0..1) below the live version's over the same cases. Absent: no comparison (only
     * per-case `regression` assertions compare).
     */
    maxRegression: z.number().min(0).max(1).optional(),
    /**
     * With distinctAnswers: per tag, the share of cases whose answer is degenerate (the same,
     * or nearly, as the answer to a different question) above which the run is rejected,
     * whatever the pass rates — so a constant-answer adapter is rejected even where the live
     * version passes nothing either.
     */
    maxDegenerate: z.number().min(0).max(1).optional(),
  })
  .strict();
export type Thresholds = z.infer<typeof Thresholds>;

export const ContractFile = z
  .object({
    contract: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "lowercase letters, digits, '.', '_' or '-'"),
    version: z.string().regex(/^\d+\.\d+\.\d+$/, "a semantic version like 1.0.0"),
    description: z.string().max(4000).default(""),
    /** Default answer length (greedy decoding): contracts check short, deterministic answers. */
    maxTokens: z.number().int().min(1).max(4096).default(16),
    thresholds: Thresholds.default({ minPassRate: 1, byTag: {} }),
    /**
     * Degeneracy: when true, answers to different questions (cases with different references,
     * or different prompts when there is none) that are identical or near-identical fail,
     * whatever else they pass — within each tag (see degeneracy.ts). Contracts of fixed markers
     * (the smoke contract) leave it off.
     */
    distinctAnswers: z.boolean().optional(),
    cases: z.array(ContractCase).min(1).max(1000),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.cases.forEach((k, i) => {
      if (seen.has(k.id))
        ctx.addIssue({ code: "custom", message: `duplicate case id "${k.id}"`, path: ["cases", i, "id"] });
      seen.add(k.id);
      k.assertions.forEach((a, j) => {
        if (a.type === "numberedPlan" && a.maxSteps !== undefined && a.maxSteps < a.minSteps)
          ctx.addIssue({
            code: "custom",
            message: "maxSteps is below minSteps",
            path: ["cases", i, "assertions", j],
          });
      });
    });
  });
export type Contract = z.output<typeof ContractFile>;

/** Validate a parsed contract document; throws an Error naming what is wrong. */
export function parseContract(json: unknown, source = "contract"): Contract {
  const parsed = ContractFile.safeParse(json);
  if (!parsed.success) throw new Error(`The contract ${source} is invalid: ${describeIssues(parsed.error)}`);
  for (const c of parsed.data.cases) {
    for (const a of c.assertions) {
      if (a.type !== "regex") continue;
      try {
        new RegExp(a.pattern, a.flags);
      } catch (err) {
        throw new Error(
          `The contract ${source} is invalid: case "${c.id}" has a bad regex: ${(err as Error).message}`,
        );
      }
    }
  }
  return parsed.data;
}

/** Read and validate a contract file. */
export async function loadContract(path: string): Promise<Contract> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new Error(`Cannot read the contract ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`The contract ${basename(path)} is not valid JSON.`);
  }
  return parseContract(json, basename(path));
}

/** `macaron-default@2.0.0`: what the harness version and the releases record. */
export function contractLabel(c: Pick<Contract, "contract" | "version">): string {
  return `${c.contract}@${c.version}`;
}
