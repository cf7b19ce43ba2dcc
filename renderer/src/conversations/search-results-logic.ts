import type { SearchHit } from "../../../electron/api";

/** One conversation in the search results, however many of its parts matched. */
export interface ConversationResult {
  conversationId: string;
  title: string;
  /** The title with its matching words marked, when the title itself matched. */
  titleParts: SearchHit["snippet"] | null;
  /** The best matching message (its snippet and author), when a message matched. */
  message: SearchHit | null;
  /** How many hits (title and messages) this conversation had among the results. */
  matches: number;
}

/**
 * Core returns hits best first (or newest first) with a conversation's title and each of its
 * messages as separate hits, so one conversation could be listed twice. Keep one entry per
 * conversation, placed where its best hit was; the title's marks and the best message's snippet
 * are both shown in it (the first message hit is the best one, as hits arrive in order).
 */
export function groupByConversation(hits: readonly SearchHit[]): ConversationResult[] {
  const byId = new Map<string, ConversationResult>();
  for (const hit of hits) {
    let result = byId.get(hit.conversationId);
    if (!result) {
      result = {
        conversationId: hit.conversationId,
        title: hit.conversationTitle,
        titleParts: null,
        message: null,
        matches: 0,
      };
      byId.set(hit.conversationId, result);
    }
    result.matches += 1;
    if (hit.messageId === null) result.titleParts ??= hit.snippet;
    else result.message ??= hit;
  }
  return [...byId.values()];
}
