import type { Database } from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchHit } from "../../api";
import { openDatabase } from "../db/database";
import { MATCH_CLOSE, MATCH_OPEN, searchQuery } from "../db/fts-query";
import { ConversationSearch, messageHit, titleHit } from "./conversation-search";
import { ConversationStore } from "./conversation-store";
import { MessageStore } from "./message-store";

/**
 * The search before it ranked inside FTS5: every match joined to messages and conversations,
 * replaced answers filtered after the join, then sorted and cut. The reference the new search
 * must agree with.
 */
function referenceSearch(db: Database, text: string): { key: string; rank: number; hit: SearchHit }[] {
  const query = searchQuery(text);
  if (!query) return [];
  const open = `'${MATCH_OPEN}'`;
  const close = `'${MATCH_CLOSE}'`;
  const messages = db
    .prepare(
      `SELECT m.id AS message_id, m.conversation_id, m.role, m.created_at, c.title,
        snippet(messages_fts, 0, ${open}, ${close}, '…', 12) AS marked, bm25(messages_fts) AS rank
      FROM messages_fts
      JOIN messages m ON m.rowid = messages_fts.rowid
      JOIN conversations c ON c.id = m.conversation_id
      WHERE messages_fts MATCH ? AND m.shown = 1
      ORDER BY rank`,
    )
    .all(query) as {
    message_id: string;
    conversation_id: string;
    role: "user" | "assistant";
    created_at: number;
    title: string;
    marked: string;
    rank: number;
  }[];
  const titles = db
    .prepare(
      `SELECT c.id AS conversation_id, c.created_at, c.title,
        highlight(conversations_fts, 0, ${open}, ${close}) AS marked, bm25(conversations_fts) AS rank
      FROM conversations_fts JOIN conversations c ON c.rowid = conversations_fts.rowid
      WHERE conversations_fts MATCH ? ORDER BY rank`,
    )
    .all(query) as {
    conversation_id: string;
    created_at: number;
    title: string;
    marked: string;
    rank: number;
  }[];
  return [
    ...titles.map((r) => ({ key: `title:${r.conversation_id}`, ...titleHit(r) })),
    ...messages.map((r) => ({ key: r.message_id, ...messageHit(r) })),
  ].sort((a, b) => a.rank - b.rank);
}

const keyOf = (h: SearchHit): string => h.messageId ?? `title:${h.conversationId}`;

// Few words, so that queries match often; "café" checks the tokenizer's diacritics on both sides.
const WORDS = [
  "tea",
  "team",
  "teapot",
  "teapots",
  "green",
  "café",
  "cafe",
  "Cafés",
  "brew",
  "bitter",
  "zebra",
  "zebrafish",
  "bitterness",
  "don't",
];
const wordArb = fc.constantFrom(...WORDS);
const textArb = (max: number) => fc.array(wordArb, { minLength: 1, maxLength: max }).map((w) => w.join(" "));
interface Corpus {
  title: string;
  messages: { content: string; replaced: boolean }[];
}
const corpusArb: fc.Arbitrary<Corpus[]> = fc.array(
  fc.record({
    title: textArb(3),
    messages: fc.array(fc.record({ content: textArb(8), replaced: fc.boolean() }), { maxLength: 8 }),
  }),
  { minLength: 1, maxLength: 6 },
);
const queryArb = fc.oneof(
  textArb(3),
  // Typed halfway: the last word is a prefix.
  fc.tuple(textArb(2), wordArb, fc.integer({ min: 1, max: 4 })).map(([a, w, n]) => `${a} ${w.slice(0, n)}`),
  wordArb.map((w) => w.slice(0, 2)),
  // Long enough to be completed from the index's words rather than read from a prefix index.
  fc
    .tuple(wordArb, fc.constantFrom("teap", "teapo", "teapot", "cafe", "Café", "bitt", "zebr", "don'"))
    .map(([a, p]) => `${a} ${p}`),
  // Longer than the 1-6 letter prefix indexes (migration 0013): completed from the index's words.
  fc
    .tuple(wordArb, fc.constantFrom("teapots", "zebrafi", "bittern", "bitterne", "zebrafish"))
    .map(([a, p]) => `${a} ${p}`),
);

let db: Database;
beforeAll(() => {
  db = openDatabase(":memory:");
});
afterAll(() => db.close());

/** Replace everything with `corpus`; createdAt strictly increases with every row written. */
function load(corpus: Corpus[]): void {
  db.prepare("DELETE FROM conversations").run();
  const conversations = new ConversationStore(db);
  const messages = new MessageStore(db);
  let now = 1;
  for (const c of corpus) {
    const id = conversations.create(c.title, now++).id;
    let previous: string | null = null;
    for (const [i, m] of c.messages.entries()) {
      const role = i % 2 === 0 ? "user" : "assistant";
      // A regeneration is a new version of the previous answer, as turn-pipeline makes it.
      const added = messages.append(
        { conversationId: id, role, content: m.content, status: "complete" },
        now++,
        role === "assistant" && m.replaced && previous ? { versionOf: previous } : {},
      );
      if (role === "assistant") previous = added.id;
    }
  }
}

describe("property: ConversationSearch agrees with the old query", () => {
  it("ranked path: the same hits, snippets and bm25 order, cut at the same place", () => {
    const search = new ConversationSearch(db);
    fc.assert(
      fc.property(corpusArb, queryArb, fc.integer({ min: 1, max: 30 }), (corpus, text, limit) => {
        load(corpus);
        expect(search.order(text)).toBe("rank");
        const all = referenceSearch(db, text);
        const rankOf = new Map(all.map((r) => [r.key, r.rank]));
        const got = search.search(text, limit);
        // Equal bm25 scores may come in either order: compare the score sequence, then each hit.
        expect(got.map((h) => rankOf.get(keyOf(h)))).toEqual(all.slice(0, limit).map((r) => r.rank));
        const byKey = new Map(all.map((r) => [r.key, r.hit]));
        for (const h of got) expect(h).toEqual(byKey.get(keyOf(h)));
      }),
      { numRuns: 300 },
    );
  }, 120_000);

  it("newest-first path: exactly the newest true matches, newest first", () => {
    // Every phrase counts as common. Few allowed completions: some prefixes stay prefix queries.
    // A 3-letter bound completes the short prefixes too, as before migration 0013.
    const searches = [0, 1, 2, undefined].flatMap((maxCompletions) =>
      [3, undefined].map(
        (indexedPrefixChars) =>
          new ConversationSearch(db, { commonRows: 0, maxCompletions, indexedPrefixChars }),
      ),
    );
    fc.assert(
      fc.property(
        corpusArb,
        queryArb,
        fc.integer({ min: 1, max: 30 }),
        fc.nat(searches.length - 1),
        (corpus, text, limit, which) => {
          const search = searches[which]!;
          load(corpus);
          const all = referenceSearch(db, text);
          if (all.length > 0) expect(search.order(text)).toBe("newest");
          const expected = all
            .map((r) => r.hit)
            .sort((a, b) => b.createdAt - a.createdAt)
            .slice(0, limit);
          expect(search.search(text, limit)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);

  it("sidebar filter: every matching conversation, or `limit` of them (titles first)", () => {
    const searches = [3, undefined].map(
      (indexedPrefixChars) => new ConversationSearch(db, { indexedPrefixChars }),
    );
    fc.assert(
      fc.property(
        corpusArb,
        queryArb,
        fc.integer({ min: 1, max: 8 }),
        fc.nat(1),
        (corpus, text, limit, which) => {
          const search = searches[which]!;
          load(corpus);
          const all = referenceSearch(db, text);
          const expected = new Set(all.map((r) => r.hit.conversationId));
          expect(search.matchingConversationIds(text, 1000)).toEqual(expected);
          const titles = new Set(
            all.filter((r) => r.hit.messageId === null).map((r) => r.hit.conversationId),
          );
          const cut = search.matchingConversationIds(text, limit);
          expect(cut.size).toBe(Math.min(limit, expected.size));
          for (const id of cut) expect(expected.has(id)).toBe(true);
          // Title matches are taken first, as many as fit.
          expect([...cut].filter((id) => titles.has(id)).length).toBe(Math.min(limit, titles.size));
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);
});
