import type { Database } from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../db/database";
import { anyTermQuery, MATCH_CLOSE, MATCH_OPEN, searchQuery, snippetParts } from "../db/fts-query";
import { ConversationSearch } from "./conversation-search";
import { ConversationStore } from "./conversation-store";
import { MessageStore } from "./message-store";

let db: Database;
let conversations: ConversationStore;
let messages: MessageStore;
let search: ConversationSearch;

beforeEach(() => {
  db = openDatabase(":memory:");
  conversations = new ConversationStore(db);
  messages = new MessageStore(db);
  search = new ConversationSearch(db);
});
afterEach(() => db.close());

const say = (conversationId: string, content: string, role: "user" | "assistant" = "user") =>
  messages.append({ conversationId, role, content, status: "complete" });

describe("FTS5 query building", () => {
  it("quotes every term, prefixes the last, and never passes FTS5 syntax through", () => {
    expect(searchQuery("green tea")).toBe('"green" "tea"*');
    expect(searchQuery('say "hi" AND NEAR(x) col:y')).toBe('"say" """hi""" "AND" "NEAR(x)" "col:y"*');
    expect(searchQuery("  ")).toBeNull();
    expect(searchQuery("!!! ??")).toBeNull();
    expect(anyTermQuery("Tea tea GREEN")).toBe('"tea" OR "green"');
  });

  it("splits marked snippets into plain parts, markup never survives", () => {
    expect(snippetParts(`a ${MATCH_OPEN}tea${MATCH_CLOSE} b ${MATCH_OPEN}x${MATCH_CLOSE}`)).toEqual([
      { text: "a ", match: false },
      { text: "tea", match: true },
      { text: " b ", match: false },
      { text: "x", match: true },
    ]);
    expect(snippetParts("<b>plain</b>")).toEqual([{ text: "<b>plain</b>", match: false }]);
    expect(snippetParts("")).toEqual([]);
  });
});

describe("ConversationSearch", () => {
  it("finds messages and titles, ranks by bm25 (titles boosted), highlights as parts", () => {
    const tea = conversations.create("Green tea brewing", 1);
    const misc = conversations.create("Misc", 2);
    say(misc.id, "I once drank tea in a café");
    const answer = say(
      tea.id,
      "Brew green tea at 80 degrees; green tea turns bitter when hotter.",
      "assistant",
    );
    const hits = search.search("green tea");
    expect(hits[0]).toMatchObject({
      conversationId: tea.id,
      messageId: null,
      role: null,
      conversationTitle: "Green tea brewing",
    });
    expect(hits[0]!.snippet).toEqual([
      { text: "Green", match: true },
      { text: " ", match: false },
      { text: "tea", match: true },
      { text: " brewing", match: false },
    ]);
    expect(hits[1]).toMatchObject({ conversationId: tea.id, messageId: answer.id, role: "assistant" });
    expect(hits[1]!.snippet.filter((p) => p.match).map((p) => p.text.toLowerCase())).toContain("green");
    expect(hits.map((h) => h.conversationId)).not.toContain(misc.id); // "green" is not there
    // Diacritics and case do not matter; the last word is a prefix.
    expect(search.search("CAFE").map((h) => h.conversationId)).toEqual([misc.id]);
    expect(search.search("dra").map((h) => h.conversationId)).toEqual([misc.id]);
    expect(search.search("tea", 1)).toHaveLength(1);
    expect(search.search("***")).toEqual([]);
  });

  it("does not find answers replaced by a regeneration, nor deleted conversations", () => {
    const c = conversations.create("T", 1);
    say(c.id, "question");
    const old = say(c.id, "zebra answer", "assistant");
    // A regeneration: the new answer is a version of the old one, shown in its place.
    messages.append(
      { conversationId: c.id, role: "assistant", content: "horse answer", status: "complete" },
      Date.now(),
      { versionOf: old.id },
    );
    expect(search.search("zebra")).toEqual([]);
    expect(search.search("horse")).toHaveLength(1);
    conversations.delete(c.id);
    expect(search.search("horse")).toEqual([]);
  });

  it("answers a query with a very common word newest first, all other queries by rank", () => {
    // Three rows is "very common" here (COMMON_ROWS in the app).
    const common = new ConversationSearch(db, { commonRows: 3 });
    const c = conversations.create("Notes", 1);
    const written = ["tea", "tea tea tea teapot", "tea zebra", "teapots and tea", "tea again"].map(
      (text, i) =>
        messages.append({ conversationId: c.id, role: "user", content: text, status: "complete" }, 10 + i),
    );
    expect(common.order("tea")).toBe("newest");
    expect(common.order("zebra")).toBe("rank");
    expect(common.order("zebra tea")).toBe("newest"); // one common word is enough
    // The newest matches, newest first; bm25 would put the "tea tea tea" one first.
    expect(common.search("tea", 2).map((h) => h.messageId)).toEqual([written[4]!.id, written[3]!.id]);
    // A prefix long enough to be completed from the index's words: the same matches.
    expect(common.search("Teap").map((h) => h.messageId)).toEqual([written[3]!.id, written[1]!.id]);
    expect(
      common
        .search("teap")[0]!
        .snippet.filter((p) => p.match)
        .map((p) => p.text),
    ).toEqual(["teapots"]);
    expect(common.search("zebra").map((h) => h.messageId)).toEqual([written[2]!.id]);
  });
});
