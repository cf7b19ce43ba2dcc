/**
 * Training candidates from feedback items, before any filter:
 * - sft: the answer a user rated good, or the user's correction (the correction is the target,
 *   never the answer it replaced); a thumbs-down answer is never a target.
 * - preference: regenerations (chosen = the answer kept, rejected = the one replaced), a
 *   correction against the answer it corrected, and a good against a bad rating on one prompt.
 * A candidate that cannot make a line is counted: malformed (missing prompt or answer) or
 * sameAnswer (chosen and rejected are one text after normalization: nothing to learn from).
 * An answer that called tools (its item carries a trajectory) is an SFT line with its calls and
 * their results (prepare/trajectory.ts), or toolFailed when a call was denied, invalid, failed or
 * stopped; it makes no preference line, whose sides are single text answers.
 */
import type { FeedbackItem } from "../protocol";
import { hasText } from "../ingest";
import { normalizeText, promptKey, type Message } from "./normalize";
import {
  asPlainMessage,
  messageText,
  trajectoryMessages,
  trajectoryOf,
  trajectoryProblem,
  trajectoryTools,
  type LineMessage,
  type ToolLine,
} from "./trajectory";

export type ExportType = "sft" | "preference";

export type Line =
  | { messages: LineMessage[]; tools?: ToolLine[] }
  | { prompt: Message[]; chosen: Message[]; rejected: Message[] };

/** A line and what the filters need to know about it. */
export interface Example {
  line: Line;
  /** Every item whose text the line carries (all must have the text consent). */
  items: FeedbackItem[];
  /** The conversation before the answer(s). */
  prompt: Message[];
  /** The answers a trainer learns to produce, each with the conversation before it. */
  targets: { context: Message[]; answer: string }[];
}

export type Candidate = { example: Example } | { drop: "malformed" | "sameAnswer" | "toolFailed" };

/** Candidates of one type, in item order (ratings pairs after the rest, by first good rating). */
export function buildCandidates(items: readonly FeedbackItem[], type: ExportType): Candidate[] {
  return type === "sft" ? sftCandidates(items) : preferenceCandidates(items);
}

function sftCandidates(items: readonly FeedbackItem[]): Candidate[] {
  const out: Candidate[] = [];
  for (const item of items) {
    if (item.kind === "trajectory" && hasText(item)) out.push(conversation(item, item.response));
    else if (item.kind === "correction" && hasText(item)) out.push(conversation(item, item.correction));
    else if (item.kind === "rating" && item.rating === "good" && hasText(item))
      out.push(conversation(item, item.response));
  }
  return out;
}

/** The answer's own messages: its tool calls and results first when it made any. */
function answerMessages(
  item: FeedbackItem,
  answer: string,
): { messages: LineMessage[]; tools?: ToolLine[] } | "toolFailed" | null {
  const trajectory = trajectoryOf(item);
  if (!trajectory)
    return item.kind === "trajectory" ? null : { messages: [{ role: "assistant", content: answer }] };
  if (trajectoryProblem(trajectory)) return "toolFailed";
  return { messages: trajectoryMessages(trajectory, answer), tools: trajectoryTools(trajectory) };
}

function conversation(item: FeedbackItem, answer: string | null | undefined): Candidate {
  const prompt = promptMessages(item);
  // After tool calls the answer may be empty: the calls (and ending the turn) are the answer.
  const needsText = !trajectoryOf(item);
  if (!prompt || answer === null || answer === undefined || (needsText && !answer.trim()))
    return { drop: "malformed" };
  const own = answerMessages(item, answer);
  if (own === null) return { drop: "malformed" };
  if (own === "toolFailed") return { drop: "toolFailed" };
  const messages: LineMessage[] = [...prompt, ...own.messages];
  // SFT trainers learn every assistant turn of a conversation, the history's too (an answer's
  // key is its final text: what a thumbs-down or a correcting follow-up names).
  const targets = messages.flatMap((m, i) =>
    m.role === "assistant" && !("tool_calls" in m)
      ? [
          {
            context: messages
              .slice(0, i)
              .filter((c): c is Message => !("tool_calls" in c) && c.role !== "tool"),
            answer: m.content,
          },
        ]
      : [],
  );
  const line = own.tools ? { messages, tools: own.tools } : { messages };
  return { example: { line, items: [item], prompt, targets } };
}

function preferenceCandidates(items: readonly FeedbackItem[]): Candidate[] {
  const out: Candidate[] = [];
  // Rated answers with text by prompt: a good and a bad answer to one prompt make a pair.
  const rated = new Map<string, { good: FeedbackItem[]; bad: FeedbackItem[] }>();
  for (const item of items) {
    // A side of a pair is one text answer: an answer that called tools cannot be one.
    if (item.toolOutcome && item.toolOutcome.steps > 0) continue;
    if (item.kind === "regeneration" && hasText(item)) out.push(pair([item], item.chosen, item.rejected));
    else if (item.kind === "correction" && hasText(item))
      out.push(pair([item], item.correction, item.response));
    else if (item.kind === "rating" && item.rating && hasText(item)) {
      const prompt = promptMessages(item);
      if (!prompt || !item.response?.trim()) continue;
      const key = promptKey(prompt);
      const group = rated.get(key) ?? { good: [], bad: [] };
      group[item.rating].push(item);
      rated.set(key, group);
    }
  }
  for (const { good, bad } of rated.values())
    for (const g of good) for (const b of bad) out.push(pair([g, b], g.response, b.response));
  return out;
}

/** A pair on the prompt of the first item (the chosen answer's). */
function pair(
  items: FeedbackItem[],
  chosen: string | null | undefined,
  rejected: string | null | undefined,
): Candidate {
  const prompt = promptMessages(items[0]!);
  if (!prompt || !chosen?.trim() || !rejected?.trim()) return { drop: "malformed" };
  if (normalizeText(chosen) === normalizeText(rejected)) return { drop: "sameAnswer" };
  return {
    example: {
      line: {
        prompt,
        chosen: [{ role: "assistant", content: chosen }],
        rejected: [{ role: "assistant", content: rejected }],
      },
      items,
      prompt,
      // DPO learns from the prompt's completions only; the prompt itself is context.
      targets: [{ context: prompt, answer: chosen }],
    },
  };
}

/** The conversation up to the answer; null unless it holds a non-empty user turn. */
export function promptMessages(item: FeedbackItem): Message[] | null {
  const turns = item.prompt ?? [];
  if (!turns.some((t) => t.role === "user" && t.text.trim())) return null;
  return turns.map((t) => ({ role: t.role, content: t.text }));
}

/** Every text of a line (what the PII re-check reads). */
export function lineTexts(line: Line): string[] {
  const msgs = "messages" in line ? line.messages : [...line.prompt, ...line.chosen, ...line.rejected];
  const tools = "messages" in line && line.tools ? [JSON.stringify(line.tools)] : [];
  return [...msgs.map(messageText), ...tools];
}

/** The messages a trainer sees at once: the conversation, or the prompt with the longer answer. */
export function longestSequence(line: Line): Message[] {
  if ("messages" in line) {
    // Tools documented in the prompt cost tokens too: counted as one more message.
    const tools: Message[] = line.tools ? [{ role: "system", content: JSON.stringify(line.tools) }] : [];
    return [...tools, ...line.messages.map(asPlainMessage)];
  }
  const [c, r] = [line.chosen[0]!, line.rejected[0]!];
  return [...line.prompt, Buffer.byteLength(c.content) >= Buffer.byteLength(r.content) ? c : r];
}

/** What two near-duplicates share: prompt (without the system turn) and answers, normalized. */
export function similarityText(example: Example): string {
  const line = example.line;
  const msgs = "messages" in line ? line.messages : [...line.prompt, ...line.chosen, ...line.rejected];
  return normalizeText(
    msgs
      .filter((m) => m.role !== "system")
      .map(messageText)
      .join("\n"),
  );
}
