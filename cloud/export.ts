/**
 * Turns stored feedback into the JSONL chat datasets LoRA trainers read (the pipeline lives in
 * cloud/prepare/):
 * - sft: `{"messages":[{role, content}, …]}` from answers rated good and from corrections (the
 *   correction is the target); a thumbs-down answer is never a target. Answers that called tools
 *   (the Agent's trajectories) are OpenAI-style `{"messages":[…, {role:"assistant", content,
 *   tool_calls}, {role:"tool", tool_call_id, content}, …, {role:"assistant", content}],
 *   "tools":[…]}` lines, only when every call was allowed and answered and no rating or
 *   follow-up said the answer was wrong (prepare/trajectory.ts);
 * - preference (TRL's conversational format): `{"prompt":[…], "chosen":[assistant], "rejected":[assistant]}`
 *   from regenerations (chosen = the new answer), corrections (chosen = the correction) and a
 *   good and a bad rating on the same prompt; for answers that called tools, both sides carry
 *   their calls and results (and `tools`): an allowed-and-answered trajectory chosen over a
 *   denied, invalid, failed, stopped or bad-rated one to the same prompt.
 * Lines are filtered (malformed, consent, PII, thumbs-down, length, duplicates, near-duplicates),
 * split into train and held-out by a hash of the prompt, and every count is reported.
 */
import { prepareExport, type PiiScan, type PreparedExport, type PrepareOptions } from "./prepare/prepare";
import { readExportSource } from "./prepare/source";
import type { FeedbackStore } from "./store";

export type { ExportType } from "./prepare/candidates";
export type { ExportReport } from "./prepare/report";
export type { Split } from "./prepare/split";
export type { PiiScan, PreparedExport, PrepareOptions };
export { prepareExport };

/** Both splits and the report of one domain's dataset, read from the store in one snapshot. */
export function exportDataset(store: FeedbackStore, domain: string, opts: PrepareOptions): PreparedExport {
  const source = readExportSource(store, domain);
  return prepareExport({ domain, ...source }, opts);
}
