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
 * stopped. In the preference export, an answer whose calls were all allowed and answered is
 * chosen against one to the same prompt whose call was denied, invalid, failed or stopped, or
 * that was rated bad: both sides laid out with their calls (the tools of both offered), and the
 * line keeps both outcomes (`outcome`: reward 1 chosen, reward 0 and why rejected), which the
 * trainer does not read. Failed trajectories with no allowed answer to pair with are counted in
 * the report (`trajectories`, negatives.ts); the groups export (groups.ts) trains them: users'
 * trajectories, succeeded and failed, grouped by prompt with their rewards as GRPO lines.
 */
import type { FeedbackItem } from "../../common/feedback-protocol";
import { hasText } from "../ingest";
import { normalizeText, promptKey, type Message } from "./normalize";
import type { Candidate, Example, Line } from "./example";
import { isGroupLine, userGroup } from "./groups";
import {
  asPlainMessage,
  messageText,
  trajectoryMessages,
  trajectoryOf,
  trajectoryOutcome,
  trajectoryProblem,
  trajectoryTools,
  type TrajectoryOutcome,
  type LineMessage,
  type ToolLine,
} from "./trajectory";

export type ExportType = "sft" | "preference" | "groups";
export type { Candidate, Example, Line } from "./example";

/** Candidates of one type, in item order (ratings pairs after the rest, by first good rating). */
export function buildCandidates(items: readonly FeedbackItem[], type: ExportType): Candidate[] {
  if (type === "groups") return groupCandidates(items);
  return type === "sft" ? sftCandidates(items) : preferenceCandidates(items);
}

/** Users' trajectories by prompt, each prompt's group in the order of its first item (groups.ts). */
function groupCandidates(items: readonly FeedbackItem[]): Candidate[] {
  const byKey = new Map<string, FeedbackItem[]>();
  for (const item of items) {
    const entry = trajectoryEntry(item);
    if (!entry) continue;
    const group = byKey.get(entry.key) ?? [];
    group.push(item);
    byKey.set(entry.key, group);
  }
  return [...byKey.values()].map((group) => userGroup(promptMessages(group[0]!)!, group));
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

/**
 * What one item adds to the preference export: a candidate of its own (regeneration,
 * correction), a place in a prompt's group (rated answers, answers that called tools: paired
 * good × bad once every item is read), or nothing. Shared by the in-memory and the streaming
 * export (prepare/stream.ts), so both classify an item the same way.
 */
export type PreferenceEntry =
  { candidate: Candidate } | { group: PairGroup; key: string; good: boolean } | null;
/** Rated answers pair first (by each prompt's first rated item), then answers that called tools. */
export type PairGroup = "rated" | "trajectory";
export const PAIR_GROUPS: readonly PairGroup[] = ["rated", "trajectory"];

/**
 * A user's answer that called tools, as the preference export groups it (its prompt's key) with
 * its outcome; null for any other item, and for one without its prompt or answer.
 */
export function trajectoryEntry(item: FeedbackItem): { key: string; outcome: TrajectoryOutcome } | null {
  const trajectory = trajectoryOf(item);
  if (!trajectory || !hasText(item) || (item.kind !== "trajectory" && item.kind !== "rating")) return null;
  const prompt = promptMessages(item);
  if (!prompt || item.response === null || item.response === undefined) return null;
  return { key: promptKey(prompt), outcome: trajectoryOutcome(trajectory, item.rating) };
}

export function preferenceEntry(item: FeedbackItem): PreferenceEntry {
  const trajectory = trajectoryOf(item);
  if (trajectory && hasText(item) && (item.kind === "trajectory" || item.kind === "rating")) {
    const entry = trajectoryEntry(item);
    if (!entry) return null;
    return { group: "trajectory", key: entry.key, good: entry.outcome.reward === 1 };
  }
  // Other items about an answer that called tools: their texts lack the calls.
  if (item.toolOutcome && item.toolOutcome.steps > 0) return null;
  if (item.kind === "regeneration" && hasText(item))
    return { candidate: pair([item], item.chosen, item.rejected) };
  if (item.kind === "correction" && hasText(item))
    return { candidate: pair([item], item.correction, item.response) };
  if (item.kind === "rating" && item.rating && hasText(item)) {
    const prompt = promptMessages(item);
    if (!prompt || !item.response?.trim()) return null;
    return { group: "rated", key: promptKey(prompt), good: item.rating === "good" };
  }
  return null;
}

/** The candidate of a good and a bad item of one group. */
export function groupPair(group: PairGroup, good: FeedbackItem, bad: FeedbackItem): Candidate {
  return group === "rated" ? pair([good, bad], good.response, bad.response) : toolPair(good, bad);
}

function preferenceCandidates(items: readonly FeedbackItem[]): Candidate[] {
  const out: Candidate[] = [];
  // Answers by group and prompt: a good and a bad answer to one prompt make a pair.
  const groups: Record<PairGroup, Map<string, { good: FeedbackItem[]; bad: FeedbackItem[] }>> = {
    rated: new Map(),
    trajectory: new Map(),
  };
  for (const item of items) {
    const entry = preferenceEntry(item);
    if (!entry) continue;
    if ("candidate" in entry) {
      out.push(entry.candidate);
      continue;
    }
    const map = groups[entry.group];
    const group = map.get(entry.key) ?? { good: [], bad: [] };
    group[entry.good ? "good" : "bad"].push(item);
    map.set(entry.key, group);
  }
  for (const name of PAIR_GROUPS)
    for (const { good, bad } of groups[name].values())
      for (const g of good) for (const b of bad) out.push(groupPair(name, g, b));
  return out;
}

/** A pair of answers that called tools (the chosen one's calls all allowed and answered). */
function toolPair(good: FeedbackItem, bad: FeedbackItem): Candidate {
  const prompt = promptMessages(good)!;
  const [g, b] = [trajectoryOf(good)!, trajectoryOf(bad)!];
  const chosen = trajectoryMessages(g, good.response ?? "");
  const rejected = trajectoryMessages(b, bad.response ?? "");
  if (JSON.stringify(chosen) === JSON.stringify(rejected)) return { drop: "sameAnswer" };
  const tools = trajectoryTools({ tools: [...g.tools, ...b.tools], steps: [...g.steps, ...b.steps] });
  const outcome = { chosen: trajectoryOutcome(g, good.rating), rejected: trajectoryOutcome(b, bad.rating) };
  return {
    example: {
      line: { prompt, chosen, rejected, tools, outcome },
      items: [good, bad],
      prompt,
      targets: [{ context: prompt, answer: good.response ?? "" }],
      negatives: { carried: 1, unpaired: 0 },
    },
  };
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
  const msgs =
    "messages" in line
      ? line.messages
      : isGroupLine(line)
        ? [...line.prompt, ...line.completions.flat()]
        : [...line.prompt, ...line.chosen, ...line.rejected];
  const tools = line.tools ? [JSON.stringify(line.tools)] : [];
  return [...msgs.map(messageText), ...tools];
}

/** The messages a trainer sees at once: the conversation, or the prompt with the longest answer. */
export function longestSequence(line: Line): Message[] {
  // Tools documented in the prompt cost tokens too: counted as one more message.
  const tools: Message[] = line.tools ? [{ role: "system", content: JSON.stringify(line.tools) }] : [];
  if ("messages" in line) return [...tools, ...line.messages.map(asPlainMessage)];
  const bytes = (side: LineMessage[]) => side.reduce((n, m) => n + Buffer.byteLength(messageText(m)), 0);
  const sides = isGroupLine(line) ? line.completions : [line.chosen, line.rejected];
  const longer = sides.reduce((a, b) => (bytes(b) > bytes(a) ? b : a));
  return [...tools, ...line.prompt, ...longer.map(asPlainMessage)];
}

/**
 * What two near-duplicates share: the prompt (the conversation before the learned answer,
 * without the system turn), normalized. The answers are left out: two wordings of one question
 * are one question whatever was answered (conflicting answers are then resolved by majority,
 * quality.ts), and different questions with the same right answer are different lessons.
 */
export function similarityText(example: Example): string {
  return normalizeText(
    example.prompt
      .filter((m) => m.role !== "system")
      .map((m) => m.content)
      .join("\n"),
  );
}
