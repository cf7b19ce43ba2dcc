/**
 * What an export builds before it filters and writes: the lines (SFT, preference pairs, users'
 * groups), each example with what the filters need to know, and a candidate (an example, or why
 * an item was dropped). Types only, apart from the groups' source tag, so that candidates.ts and
 * groups.ts both depend on this module and not on each other.
 */
import type { FeedbackItem } from "../../common/feedback-protocol";
import type { Message } from "./normalize";
import type { LineMessage, ToolLine, TrajectoryOutcome } from "./trajectory";

/** What a users' group line says it is (the self-generated ones say otherwise). */
export const USER_GROUP_SOURCE = "user-trajectory";

/** A group line of users' trajectories, as the export writes it. */
export interface UserGroupLine {
  prompt: Message[];
  completions: LineMessage[][];
  rewards: number[];
  /** Only when the rewards are all equal: what they are measured against. */
  baseline?: number;
  tools: ToolLine[];
  outcome: TrajectoryOutcome[];
  source: typeof USER_GROUP_SOURCE;
}

export type Line =
  | { messages: LineMessage[]; tools?: ToolLine[] }
  | {
      prompt: Message[];
      chosen: LineMessage[];
      rejected: LineMessage[];
      tools?: ToolLine[];
      /** Pairs of trajectories: each side's outcome (reward and why it failed). */
      outcome?: { chosen: TrajectoryOutcome; rejected: TrajectoryOutcome };
    }
  | UserGroupLine;

/** A line and what the filters need to know about it. */
export interface Example {
  line: Line;
  /** Every item whose text the line carries (all must have the text consent). */
  items: FeedbackItem[];
  /** The conversation before the answer(s). */
  prompt: Message[];
  /** The answers a trainer learns to produce, each with the conversation before it. */
  targets: { context: Message[]; answer: string }[];
  /**
   * Users' failed trajectories the line trains on (a pair's rejected side, a group's reward-0
   * answers), and of those how many had no successful answer to their prompt: the report's
   * `negativesTrained` counts them over the lines written (negatives.ts).
   */
  negatives?: { carried: number; unpaired: number };
}

export type Candidate = { example: Example } | { drop: "malformed" | "sameAnswer" | "toolFailed" };
