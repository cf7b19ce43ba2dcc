/** Stored rows of feedback items for the preparation tests. */
import type { FeedbackItem } from "../../common/feedback-protocol";
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
