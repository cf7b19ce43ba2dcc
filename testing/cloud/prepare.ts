/** Stored rows of feedback items for the preparation tests. */
import type { FeedbackItem, TrajectoryStepWire } from "../../common/feedback-protocol";
import type { StoredItem } from "../../cloud/store";
import { makeItem } from "./items";
import type { PiiScan } from "../../cloud/prepare/prepare";

type Turns = NonNullable<FeedbackItem["prompt"]>;

let next = 0;

/** A stored row of a valid item (a good rating with text unless `over` says otherwise). */
export function row(over: Partial<FeedbackItem> = {}): StoredItem {
  next++;
  const item = makeItem(`key-${String(next).padStart(6, "0")}`, over);
  return { installId: "install-1", receivedAt: next, json: JSON.stringify(item) };
}

/** A conversation ending in the user's question. */
export const ask = (question: string, history: Turns = []): Turns => [
  ...history,
  { role: "user", text: question },
];

export const good = (q: string, answer: string, history: Turns = []) =>
  row({ prompt: ask(q, history), response: answer });
export const bad = (q: string, answer: string, history: Turns = []) =>
  row({ rating: "bad", prompt: ask(q, history), response: answer });
export const corrected = (q: string, original: string, correction: string) =>
  row({ kind: "correction", rating: null, prompt: ask(q), response: original, correction });
export const regenerated = (q: string, rejected: string, chosen: string) =>
  row({ kind: "regeneration", rating: null, prompt: ask(q), response: null, rejected, chosen });

/** Flags any text with an "@" (a stand-in for the app's redactor). */
export const atSignScan: PiiScan = (text) => ({ findings: text.includes("@") ? [text] : [] });

/** A trajectory's outcome counts for one done call (tests of users' tool trajectories). */
export const timerOutcome = {
  steps: 1,
  done: 1,
  denied: 0,
  errors: 0,
  invalid: 0,
  stopped: 0,
  truncated: 0,
  totalMs: 5,
};

/** The tool those trajectories call. */
export const timerTool = {
  name: "set_timer",
  description: "Start a countdown timer.",
  parameters: { type: "object", properties: { minutes: { type: "number" } }, required: ["minutes"] },
};

/** One allowed, done set_timer call (15 minutes); `over` changes any field. */
export function timerStep(over: Partial<TrajectoryStepWire> = {}): TrajectoryStepWire {
  return {
    index: 0,
    server: "builtin",
    tool: "set_timer",
    arguments: { minutes: 15 },
    decision: "once",
    state: "done",
    result: '{"ok":true,"endsAt":"10:15"}',
    truncated: false,
    error: null,
    durationMs: 5,
    ...over,
  };
}

/** A stored item about an answer to `q` that made `steps` and then said `answer`. */
export function toolItem(
  q: string,
  answer: string,
  steps: TrajectoryStepWire[],
  over: Partial<FeedbackItem> = {},
): StoredItem {
  return row({
    kind: "trajectory",
    rating: null,
    domain: "agent",
    prompt: ask(q),
    response: answer,
    toolOutcome: { ...timerOutcome, steps: steps.length },
    trajectory: { tools: [timerTool], steps },
    ...over,
  });
}
