/**
 * What the model is told of a tool call, as the result it continues from: during the answer
 * (agent-loop.ts) and when a later turn's prompt replays the answer's calls (chat/prompt.ts).
 * One wording for both, so a replayed answer reads as the model saw it.
 */
import type { ToolStep } from "../../api";

/** The user said no. */
export const DENIED_RESULT = "The user denied this call.";
/** The arguments did not match the tool's schema (nothing was called). */
export const invalidResult = (error: string): string => `Error: the call was not made: ${error}.`;
/** The call failed. */
export const errorResult = (error: string): string => `Error: ${error}`;

/**
 * The result a finished step gave the model, or null for a step that never gave one (pending,
 * running, or stopped by the user).
 */
export function modelResultOf(step: ToolStep): string | null {
  switch (step.state) {
    case "done":
      return step.result ?? "";
    case "error":
      return errorResult(step.error ?? "the call failed");
    case "denied":
      return DENIED_RESULT;
    case "invalid":
      return invalidResult(step.error ?? "the arguments did not match the tool's schema");
    default:
      return null;
  }
}
