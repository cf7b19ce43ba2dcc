/**
 * The chat layout of a GRPO group (issue 29), one JSON object a line beside the SFT and
 * preference lines of dataset-file.ts: a prompt, K >= 2 sampled answers to it, and one reward
 * per answer (the contract's score of the answer, scripts/cycle/self-improve/groups.ts):
 *
 *   {"prompt":[{"role":"user","content":"…"}],
 *    "completions":[[{"role":"assistant","content":"…"}], …],
 *    "rewards":[1, 0, 0.375, …]}
 *
 * Users' trajectories (cloud/prepare/groups.ts) may add `"baseline": 0.5`: a group with nothing to
 * compare its answers with (one alone, or all with one reward) is measured against that reward
 * instead of its own mean, so it may hold a single completion (the trainer's A_i = r_i − baseline).
 *
 * tokenize-dataset.ts turns it into the trainer's `{"kind":"grpo",…}` line (cloud/trainer/README.md).
 */
import { z } from "zod";
import { describeIssues } from "../../common/zod-issues";

const MessageSchema = z.object({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
});

/** One sampled answer: a single non-empty assistant message (as a preference side). */
const CompletionSchema = z
  .array(
    z.object({
      role: z.literal("assistant"),
      content: z.string().refine((t) => t.trim() !== "", "an empty answer"),
    }),
  )
  .length(1, "a completion is exactly one assistant message");

export const GroupLineSchema = z
  .object({
    prompt: z
      .array(MessageSchema)
      .refine((p) => p.some((m) => m.role === "user" && m.content.trim()), "has no user message")
      .refine((p) => p.at(-1)?.role === "user", "must end with the user message being answered"),
    completions: z.array(CompletionSchema).min(1, "a group needs at least 1 completion"),
    // zod's numbers are finite: NaN and ±Infinity are refused.
    rewards: z.array(z.number()),
    baseline: z.number().optional(),
  })
  .refine((l) => l.rewards.length === l.completions.length, {
    message: "one reward per completion",
    path: ["rewards"],
  })
  .refine((l) => l.baseline !== undefined || l.completions.length >= 2, {
    message: "a group needs at least 2 completions (or a baseline)",
    path: ["completions"],
  });
export type GroupLine = z.infer<typeof GroupLineSchema>;

/** A parsed group line, or why it is malformed (the message dataset-file.ts reports with its line). */
export function parseGroupLine(json: unknown): GroupLine | string {
  const parsed = GroupLineSchema.safeParse(json);
  return parsed.success ? parsed.data : describeIssues(parsed.error);
}
