import type { Memory, Message } from "../../../electron/api";

/**
 * A cheap first look at a user message: could core have stored it as a memory? The same start
 * core's "remember that …" rule requires (electron/core/memory/memory-text.ts), loosened to a
 * superset, so only such messages cost a memories.list; whether one was saved is core's answer.
 */
const MAY_REMEMBER = /^\s*(?:please[,\s]+)?remember\b/iu;

export function mayBeRememberRequest(text: string): boolean {
  return MAY_REMEMBER.test(text);
}

const indexCache = new WeakMap<readonly Message[], ReadonlyMap<string, string>>();

/**
 * For one conversation's messages: answer id → id of the "remember …" user message it replies
 * to (the nearest user message before it), for those answers only. Every answer's note asks on
 * every store change (a streaming delta is one), so it is built once per version of the array
 * (one pass) and each answer's lookup is O(1), not a scan of the transcript per answer.
 */
export function rememberQuestions(messages: readonly Message[]): ReadonlyMap<string, string> {
  let index = indexCache.get(messages);
  if (index) return index;
  const map = new Map<string, string>();
  let question: Message | null = null;
  for (const m of messages) {
    if (m.role === "user") question = m;
    else if (m.role === "assistant" && question && mayBeRememberRequest(question.content))
      map.set(m.id, question.id);
  }
  index = map;
  indexCache.set(messages, index);
  return index;
}

/** The id of the "remember …" message an answer replies to, or null. */
export function rememberQuestionOf(
  messages: readonly Message[] | undefined,
  answerId: string,
): string | null {
  return messages ? (rememberQuestions(messages).get(answerId) ?? null) : null;
}

/** The memory core stored from that user message (source "user", linked to its id), if any. */
export function memorySavedFrom(memories: readonly Memory[], userMessageId: string): Memory | null {
  return memories.find((m) => m.messageId === userMessageId && m.source === "user") ?? null;
}
