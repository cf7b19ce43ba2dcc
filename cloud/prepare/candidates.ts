/**
 * Training candidates from feedback items, before any filter:
 * - sft: the answer a user rated good, or the user's correction (the correction is the target,
 *   never the answer it replaced); a thumbs-down answer is never a target.
 * - preference: regenerations (chosen = the answer kept, rejected = the one replaced), a
 *   correction against the answer it corrected, and a good against a bad rating on one prompt.
 * A candidate that cannot make a line is counted: malformed (missing prompt or answer) or
 * sameAnswer (chosen and rejected are one text after normalization: nothing to learn from).
 */
import type { FeedbackItem } from "../protocol";
import { hasText } from "../ingest";
import { normalizeText, promptKey, type Message } from "./normalize";

export type ExportType = "sft" | "preference";

export type Line = { messages: Message[] } | { prompt: Message[]; chosen: Message[]; rejected: Message[] };

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

export type Candidate = { example: Example } | { drop: "malformed" | "sameAnswer" };

/** Candidates of one type, in item order (ratings pairs after the rest, by first good rating). */
export function buildCandidates(items: readonly FeedbackItem[], type: ExportType): Candidate[] {
  return type === "sft" ? sftCandidates(items) : preferenceCandidates(items);
}

function sftCandidates(items: readonly FeedbackItem[]): Candidate[] {
  const out: Candidate[] = [];
  for (const item of items) {
    if (item.kind === "correction" && hasText(item)) out.push(conversation(item, item.correction));
    else if (item.kind === "rating" && item.rating === "good" && hasText(item))
      out.push(conversation(item, item.response));
  }
  return out;
}

function conversation(item: FeedbackItem, answer: string | null | undefined): Candidate {
  const prompt = promptMessages(item);
  if (!prompt || !answer?.trim()) return { drop: "malformed" };
  const messages: Message[] = [...prompt, { role: "assistant", content: answer }];
  // SFT trainers learn every assistant turn of a conversation, the history's too.
  const targets = messages.flatMap((m, i) =>
    m.role === "assistant" ? [{ context: messages.slice(0, i), answer: m.content }] : [],
  );
  return { example: { line: { messages }, items: [item], prompt, targets } };
}

function preferenceCandidates(items: readonly FeedbackItem[]): Candidate[] {
  const out: Candidate[] = [];
  // Rated answers with text by prompt: a good and a bad answer to one prompt make a pair.
  const rated = new Map<string, { good: FeedbackItem[]; bad: FeedbackItem[] }>();
  for (const item of items) {
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
  return msgs.map((m) => m.content);
}

/** The messages a trainer sees at once: the conversation, or the prompt with the longer answer. */
export function longestSequence(line: Line): Message[] {
  if ("messages" in line) return line.messages;
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
      .map((m) => m.content)
      .join("\n"),
  );
}
