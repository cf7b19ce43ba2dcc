/** Search lists each conversation once, where its best hit ranked (issue 13). */
import { describe, expect, it } from "vitest";
import type { SearchHit } from "../../../electron/api";
import { groupByConversation } from "./search-results-logic";

function hit(conversationId: string, messageId: string | null, text: string): SearchHit {
  return {
    conversationId,
    conversationTitle: `Title of ${conversationId}`,
    messageId,
    role: messageId === null ? null : "user",
    snippet: [{ text, match: true }],
    createdAt: 1,
  };
}

describe("groupByConversation", () => {
  it("merges a conversation's title hit and message hits into one entry with both marks", () => {
    const title = hit("c1", null, "zeppelin title");
    const message = hit("c1", "m1", "zeppelin message");
    const results = groupByConversation([title, message]);
    expect(results).toHaveLength(1);
    expect(results[0]).toEqual({
      conversationId: "c1",
      title: "Title of c1",
      titleParts: title.snippet,
      message,
      matches: 2,
    });
  });

  it("keeps the order of each conversation's best hit and its best message", () => {
    const results = groupByConversation([
      hit("c2", "m5", "best of c2"),
      hit("c1", "m1", "best of c1"),
      hit("c2", "m6", "second of c2"),
      hit("c1", null, "title of c1"),
      hit("c3", null, "only a title"),
    ]);
    expect(results.map((r) => r.conversationId)).toEqual(["c2", "c1", "c3"]);
    expect(results.map((r) => r.message?.messageId ?? null)).toEqual(["m5", "m1", null]);
    expect(results.map((r) => r.matches)).toEqual([2, 2, 1]);
    expect(results[2]!.titleParts).toEqual([{ text: "only a title", match: true }]);
    expect(results[0]!.titleParts).toBeNull();
  });

  it("is empty for no hits", () => {
    expect(groupByConversation([])).toEqual([]);
  });
});
