/**
 * Agent training data from trajectories (an answer's tool calls, common/feedback-protocol.ts
 * TrajectoryWire), in OpenAI's chat format: the prompt, then for each call an assistant message
 * with `tool_calls` and a `tool` message with its result, then the final answer; the tools the
 * answer called go in `tools`. Only a trajectory whose every call was allowed and answered is a
 * target: a denied, invalid, failed or stopped call (or a bad outcome of the answer, checked by
 * the caller) keeps the whole answer out, since the calls are what the Agent would learn.
 */
import type { FeedbackItem, TrajectoryStepWire, TrajectoryWire } from "../../common/feedback-protocol";
import type { Message } from "./normalize";

/** An OpenAI-style tool call of an assistant message (arguments as a JSON string). */
export interface ToolCallLine {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type LineMessage =
  | Message
  | { role: "assistant"; content: string; tool_calls: ToolCallLine[] }
  | { role: "tool"; tool_call_id: string; content: string };

/** OpenAI's `tools[]` entry. */
export interface ToolLine {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

const ALLOWED = new Set<TrajectoryStepWire["decision"]>(["once", "always", "remembered"]);

/** Why a trajectory cannot be a target, or null when every call was allowed and answered. */
export function trajectoryProblem(
  trajectory: TrajectoryWire,
): "denied" | "invalid" | "error" | "stopped" | null {
  for (const step of trajectory.steps) {
    if (step.state === "denied" || step.decision === "deny") return "denied";
    if (step.state === "invalid") return "invalid";
    if (step.state === "error") return "error";
    if (step.state !== "done" || !ALLOWED.has(step.decision) || step.result === null) return "stopped";
  }
  return null;
}

/** Why a user's trajectory is a negative: a call that did not run as asked, or a bad rating. */
export type TrajectoryNegative = "denied" | "invalid" | "error" | "stopped" | "ratedBad";

/**
 * The outcome a user's trajectory keeps into the export: reward 1 when every call was allowed
 * and answered and the answer was not rated bad, else 0 with why (issue 29: failures are
 * negatives, never targets). A follow-up correction is judged later, by the export's filters.
 */
export interface TrajectoryOutcome {
  reward: 0 | 1;
  problem: TrajectoryNegative | null;
}

export function trajectoryOutcome(
  trajectory: TrajectoryWire,
  rating: string | null | undefined,
): TrajectoryOutcome {
  const problem = trajectoryProblem(trajectory) ?? (rating === "bad" ? "ratedBad" : null);
  return { reward: problem ? 0 : 1, problem };
}

/** The item's trajectory, when it carries one with text. */
export function trajectoryOf(item: FeedbackItem): TrajectoryWire | null {
  return item.trajectory && item.trajectory.steps.length > 0 ? item.trajectory : null;
}

/**
 * The answer's messages: one assistant message with one call per step (the app runs a step's
 * result back into the model before the next call), its tool result, then `answer`.
 */
/**
 * What the model was given back for a step: its result, or for a call that did not run what the
 * agent loop tells the model (a result is never learned, only context).
 */
function resultText(step: TrajectoryStepWire): string {
  if (step.result !== null) return step.result;
  // electron/core/tools/agent-loop.ts DENIED_RESULT and its error results.
  if (step.state === "denied") return "The user denied this call.";
  if (step.state === "invalid") return `Error: the call was not made: ${step.error ?? "invalid arguments"}.`;
  return step.error ? `Error: ${step.error}` : "";
}

/** The function name the model called for `step` (its definition's, else the tool's own). */
function functionName(trajectory: TrajectoryWire, step: TrajectoryStepWire): string {
  const def = trajectory.tools.find((t) => t.server === step.server && t.tool === step.tool);
  return def?.name ?? step.tool;
}

export function trajectoryMessages(trajectory: TrajectoryWire, answer: string): LineMessage[] {
  const steps = [...trajectory.steps].sort((a, b) => a.index - b.index);
  const out: LineMessage[] = [];
  for (const [i, step] of steps.entries()) {
    const id = `call_${i}`;
    out.push({
      role: "assistant",
      content: "",
      tool_calls: [
        {
          id,
          type: "function",
          function: { name: functionName(trajectory, step), arguments: JSON.stringify(step.arguments ?? {}) },
        },
      ],
    });
    out.push({ role: "tool", tool_call_id: id, content: resultText(step) });
  }
  out.push({ role: "assistant", content: answer });
  return out;
}

/** The definitions of the tools the trajectory called, each once, in the order first called. */
export function trajectoryTools(trajectory: TrajectoryWire): ToolLine[] {
  const byName = new Map(trajectory.tools.map((t) => [t.name, t]));
  const names = [
    ...new Set(
      [...trajectory.steps].sort((a, b) => a.index - b.index).map((s) => functionName(trajectory, s)),
    ),
  ];
  return names.map((name) => {
    const def = byName.get(name);
    return {
      type: "function",
      function: {
        name,
        ...(def?.description !== undefined ? { description: def.description } : {}),
        ...(def?.parameters !== undefined ? { parameters: def.parameters } : {}),
      },
    };
  });
}

/** Every text of a message, a call's arguments included (what the PII re-check and the length read). */
export function messageText(m: LineMessage): string {
  if ("tool_calls" in m)
    return [m.content, ...m.tool_calls.map((c) => `${c.function.name} ${c.function.arguments}`)].join("\n");
  return m.content;
}

/** A message as the length estimate and the near-duplicate check read it. */
export function asPlainMessage(m: LineMessage): Message {
  return { role: m.role === "tool" ? "user" : m.role, content: messageText(m) };
}
