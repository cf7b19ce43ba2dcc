import type { Database, Statement } from "better-sqlite3";
import type { MessageRole, SearchHit } from "../../api";
import { MATCH_CLOSE, MATCH_OPEN, quote, queryTerms, searchPhrases, snippetParts } from "../db/fts-query";
import { FTS_TOKENIZER } from "../db/migrations/0005-memory";

/** A message row as the search statements return it (also the benchmark's and tests' old query). */
export interface MessageHitRow {
  message_id: string;
  conversation_id: string;
  role: MessageRole;
  created_at: number;
  title: string;
  marked: string;
  rank: number;
}

export interface TitleHitRow {
  conversation_id: string;
  created_at: number;
  title: string;
  marked: string;
  rank: number;
}

/** A title match weighs this much more than a message match of the same bm25 score. */
const TITLE_BOOST = 2;
const SNIPPET_TOKENS = 12;
const DEFAULT_LIMIT = 50;

/**
 * A phrase in more rows than this makes a query "common": bm25 costs about a microsecond per
 * match (every match is scored before the best are kept) plus a pass over each phrase's whole
 * document list (its idf), so past a few thousand rows it no longer fits a keystroke.
 */
export const COMMON_ROWS = 5000;

/**
 * A prefix with more completions than this stays a prefix query in the newest-first path (see
 * lazyPhrases): listing them costs a seek each.
 */
const MAX_COMPLETIONS = 256;

/**
 * The longest prefix with its own index (migration 0013: prefix='1 2 3 4 5 6'): up to this many
 * characters a prefix is one document list, read lazily like a word.
 */
export const INDEXED_PREFIX_CHARS = 6;

/**
 * The sidebar filter (matchingConversationIds) names at most this many conversations, those of
 * the newest matches, and reads at most SIDEBAR_SCAN_FACTOR times as many matching messages.
 */
export const SIDEBAR_LIMIT = 200;
const SIDEBAR_SCAN_FACTOR = 40;

export interface SearchOptions {
  /** Tests: a small corpus reaches the newest-first path, and its fallback, with small values. */
  commonRows?: number;
  maxCompletions?: number;
  /** Tests: a shorter bound sends short prefixes through the completions, as longer ones go. */
  indexedPrefixChars?: number;
}

/**
 * How results are ordered. "rank": bm25 (titles boosted), best first. "newest": the most
 * recently written matches first (highest rowid), for queries with a very common phrase, where
 * ranking every match would take hundreds of milliseconds at a million messages.
 */
export type SearchOrder = "rank" | "newest";

type Params = { query: string; limit: number };

/** The statements for one FTS5 index: rank or newest first, cut inside FTS5, then joined. */
interface IndexStatements<Row> {
  /** How many rows match, counting no further than the limit. */
  probe: Statement<Params, { n: number }>;
  ranked: Statement<Params, Row>;
  newest: Statement<Params, Row>;
  /** The first indexed word in [from, to): the completions of a prefix, one seek each. */
  firstTerm: Statement<[string, string], string>;
  /** Conversation ids of the matches, newest match first (one per match: the caller dedupes). */
  conversationIds: Statement<{ query: string }, string>;
}

function indexStatements<Row>(
  db: Database,
  fts: string,
  /** The inner query's extra column: snippet() or highlight(), computed only for the rows kept. */
  marked: string,
  /** The outer query: joins `hits` (rowid, rank, marked) to the rows shown. */
  outer: (hits: string) => string,
  /** The conversation id of an indexed row (`fts.rowid`), for the sidebar filter. */
  conversationOf: { join: string; id: string },
): IndexStatements<Row> {
  // An "instance" vocabulary reads one occurrence to find a word; a "row" one would count
  // every document of it first. temp: a view on the index for this connection, not schema.
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${fts}_terms USING fts5vocab(main, ${fts}, instance)`);
  return {
    probe: db.prepare(
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${fts} WHERE ${fts} MATCH @query LIMIT @limit)`,
    ),
    // ORDER BY rank (not bm25()) lets FTS5 sort inside the index; the LIMIT in a subquery keeps
    // SQLite from flattening it, so the joins and the snippet see only the rows kept.
    ranked: db.prepare(
      outer(`(SELECT rowid, rank, ${marked} AS marked FROM ${fts}
        WHERE ${fts} MATCH @query ORDER BY rank LIMIT @limit)`) + " ORDER BY hits.rank",
    ),
    // FTS5 walks its document lists in rowid order and stops at the LIMIT: nothing is scored.
    newest: db.prepare(
      outer(`(SELECT rowid, 0 AS rank, ${marked} AS marked FROM ${fts}
        WHERE ${fts} MATCH @query ORDER BY rowid DESC LIMIT @limit)`) + " ORDER BY hits.rowid DESC",
    ),
    firstTerm: db
      .prepare<[string, string], string>(
        `SELECT term FROM temp.${fts}_terms WHERE term >= ? AND term < ? LIMIT 1`,
      )
      .pluck(),
    // The index walks its lists newest first (the ORDER BY is FTS5's own, no sort): iterated and
    // stopped once enough conversations are found, so a common word joins a few hundred rows.
    conversationIds: db
      .prepare<{ query: string }, string>(
        `SELECT ${conversationOf.id} FROM ${fts} ${conversationOf.join}
        WHERE ${fts} MATCH @query ORDER BY ${fts}.rowid DESC`,
      )
      .pluck(),
  };
}

/**
 * Full-text search over conversation titles and message contents (migration 0005's FTS5
 * indexes; migration 0010 keeps answers replaced by a regeneration out of the messages index:
 * they are not part of a transcript any more and are not found).
 *
 * Ranked by bm25 inside FTS5 and cut to the limit before any join. A query with a phrase in
 * more than COMMON_ROWS rows (of either index) is answered newest first instead (see
 * SearchOrder): same matches, only the order and which of them fit in the limit differ.
 */
export class ConversationSearch {
  private readonly messages: IndexStatements<MessageHitRow>;
  private readonly titles: IndexStatements<TitleHitRow>;
  private readonly tokenizer: { clear: Statement; add: Statement<[string]>; tokens: Statement<[], string> };
  private readonly commonRows: number;
  private readonly maxCompletions: number;
  private readonly indexedPrefixChars: number;

  constructor(db: Database, options: SearchOptions = {}) {
    this.commonRows = options.commonRows ?? COMMON_ROWS;
    this.maxCompletions = options.maxCompletions ?? MAX_COMPLETIONS;
    this.indexedPrefixChars = options.indexedPrefixChars ?? INDEXED_PREFIX_CHARS;
    const open = `'${MATCH_OPEN}'`;
    const close = `'${MATCH_CLOSE}'`;
    this.messages = indexStatements(
      db,
      "messages_fts",
      `snippet(messages_fts, 0, ${open}, ${close}, '…', ${SNIPPET_TOKENS})`,
      (hits) => `
        SELECT m.id AS message_id, m.conversation_id, m.role, m.created_at, c.title,
          hits.marked, hits.rank
        FROM ${hits} AS hits
        JOIN messages m ON m.rowid = hits.rowid
        JOIN conversations c ON c.id = m.conversation_id`,
      { join: "JOIN messages m ON m.rowid = messages_fts.rowid", id: "m.conversation_id" },
    );
    this.titles = indexStatements(
      db,
      "conversations_fts",
      `highlight(conversations_fts, 0, ${open}, ${close})`,
      (hits) => `
        SELECT c.id AS conversation_id, c.created_at, c.title, hits.marked, hits.rank
        FROM ${hits} AS hits
        JOIN conversations c ON c.rowid = hits.rowid`,
      { join: "JOIN conversations c ON c.rowid = conversations_fts.rowid", id: "c.id" },
    );
    // The indexes' own tokenizer, to turn a typed prefix into the form the index stores
    // ("Caf" is "caf"): an FTS5 table of one row, on this connection only.
    db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_tokenizer USING fts5(text, tokenize='${FTS_TOKENIZER}');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_tokenizer_terms USING fts5vocab(temp, search_tokenizer, instance);`);
    this.tokenizer = {
      clear: db.prepare("DELETE FROM temp.search_tokenizer"),
      add: db.prepare("INSERT INTO temp.search_tokenizer (text) VALUES (?)"),
      tokens: db.prepare<[], string>("SELECT term FROM temp.search_tokenizer_terms ORDER BY offset").pluck(),
    };
  }

  /**
   * How search() orders the results for `text`: "newest" when one of its phrases is in more
   * than COMMON_ROWS messages or titles. Each probe counts no further than that.
   */
  order(text: string): SearchOrder {
    const terms = queryTerms(text);
    return terms.length === 0 ? "rank" : this.plan(terms).order;
  }

  private plan(terms: string[]): { order: SearchOrder; lazy: Map<IndexStatements<unknown>, string | null> } {
    const last = this.singleToken(terms.at(-1)!);
    const lazy = new Map<IndexStatements<unknown>, string | null>();
    let order: SearchOrder = "rank";
    for (const index of [this.messages, this.titles] as IndexStatements<unknown>[]) {
      const phrases = this.lazyPhrases(index, terms, last);
      lazy.set(index, phrases && phrases.join(" AND "));
      const common = (phrase: string): boolean =>
        index.probe.get({ query: phrase, limit: this.commonRows + 1 })!.n > this.commonRows;
      // The word as typed, when indexed, is the first completion: a common word answers without
      // walking all its completions in step.
      const typed = last === null ? [] : [quote(last)];
      if (order === "rank" && phrases && (typed.some(common) || phrases.some(common))) order = "newest";
    }
    return { order, lazy };
  }

  /**
   * The query's phrases for `index` in a form FTS5 reads lazily, or null when the last word
   * completes to nothing there (nothing matches). FTS5 turns a prefix phrase into one document
   * list by merging those of all its words before returning the first row: "tend*" with the
   * common "tendon" among them reads all of tendon's list (~35 ms at a million messages) even
   * for LIMIT 1. Its completions OR-ed are walked in step instead, and stop at the LIMIT. A prefix
   * of one to three letters is one list already (migration 0010's prefix indexes) and so is
   * kept, like one with more than MAX_COMPLETIONS completions or one that is not a single word.
   * Since migration 0013 that holds up to six letters (INDEXED_PREFIX_CHARS): a longer prefix
   * has few completions.
   */
  private lazyPhrases(
    index: IndexStatements<unknown>,
    terms: string[],
    last: string | null,
  ): string[] | null {
    const phrases = terms.map(quote);
    const prefix = `${phrases.pop()!}*`;
    if (last === null || [...last].length <= this.indexedPrefixChars) return [...phrases, prefix];
    const completions = this.completions(index, last);
    if (completions === null) return [...phrases, prefix];
    if (completions.length === 0) return null;
    return [...phrases, `(${completions.map(quote).join(" OR ")})`];
  }

  /** The indexed words that start with `token`, or null when there are more than maxCompletions. */
  private completions(index: IndexStatements<unknown>, token: string): string[] | null {
    // Every text above the token's completions: no indexed word holds U+10FFFF.
    const end = `${token}\u{10FFFF}`;
    const out: string[] = [];
    // Words are letters and digits: "word\u0001" sorts right after "word" and before any longer
    // word, so each seek skips the previous word without reading its occurrences.
    for (
      let t = index.firstTerm.get(token, end);
      t !== undefined;
      t = index.firstTerm.get(`${t}\u0001`, end)
    ) {
      if (out.length === this.maxCompletions) return null;
      out.push(t);
    }
    return out;
  }

  /** `term` as the index stores it, when it is one word for the tokenizer; else null. */
  private singleToken(term: string): string | null {
    this.tokenizer.clear.run();
    this.tokenizer.add.run(term);
    const tokens = this.tokenizer.tokens.all();
    return tokens.length === 1 ? tokens[0]! : null;
  }

  /**
   * Every word of `text` must occur (the last one as a prefix). Best matches first, titles and
   * messages ranked together, titles boosted; newest first for common queries (order()).
   * Empty for text without words.
   */
  search(text: string, limit = DEFAULT_LIMIT): SearchHit[] {
    const terms = queryTerms(text);
    if (terms.length === 0) return [];
    const { order, lazy } = this.plan(terms);
    if (order === "newest") {
      const newest = <Row>(index: IndexStatements<Row>): Row[] => {
        const query = lazy.get(index);
        return query ? index.newest.all({ query, limit }) : [];
      };
      const titles = newest(this.titles).map(titleHit);
      const messages = newest(this.messages).map(messageHit);
      // Stable: messages already come newest written first.
      return [...messages, ...titles]
        .sort((a, b) => b.hit.createdAt - a.hit.createdAt)
        .slice(0, limit)
        .map((r) => r.hit);
    }
    // The query as the user typed it, prefix and all: bm25 scores a prefix as one phrase.
    const query = searchPhrases(text).join(" ");
    const titles = this.titles.ranked.all({ query, limit }).map(titleHit);
    const messages = this.messages.ranked.all({ query, limit }).map(messageHit);
    // bm25 is negative: lower is better.
    return [...titles, ...messages]
      .sort((a, b) => a.rank - b.rank)
      .slice(0, limit)
      .map((r) => r.hit);
  }

  /**
   * Ids of the conversations whose title or a shown message matches (the sidebar filter), at
   * most `limit`: every title match first, then the conversations of the newest matching
   * messages, reading at most `limit` × SIDEBAR_SCAN_FACTOR of them. All of them whenever fewer
   * match; until then bounded, where joining every match cost ~100k joins for a common word at
   * a million messages.
   */
  matchingConversationIds(text: string, limit = SIDEBAR_LIMIT): Set<string> {
    const terms = queryTerms(text);
    const ids = new Set<string>();
    if (terms.length === 0 || limit <= 0) return ids;
    const last = this.singleToken(terms.at(-1)!);
    const collect = (index: IndexStatements<unknown>, maxRows: number): void => {
      const phrases = this.lazyPhrases(index, terms, last);
      if (!phrases) return;
      let rows = 0;
      // Leaving the loop early ends the statement (better-sqlite3 resets it).
      for (const id of index.conversationIds.iterate({ query: phrases.join(" AND ") })) {
        ids.add(id);
        if (ids.size >= limit || ++rows >= maxRows) return;
      }
    };
    collect(this.titles, limit);
    if (ids.size < limit) collect(this.messages, limit * SIDEBAR_SCAN_FACTOR);
    return ids;
  }
}

export function titleHit(r: TitleHitRow): { rank: number; hit: SearchHit } {
  return {
    rank: r.rank * TITLE_BOOST,
    hit: {
      conversationId: r.conversation_id,
      conversationTitle: r.title,
      messageId: null,
      role: null,
      snippet: snippetParts(r.marked),
      createdAt: r.created_at,
    },
  };
}

export function messageHit(r: MessageHitRow): { rank: number; hit: SearchHit } {
  return {
    rank: r.rank,
    hit: {
      conversationId: r.conversation_id,
      conversationTitle: r.title,
      messageId: r.message_id,
      role: r.role,
      snippet: snippetParts(r.marked),
      createdAt: r.created_at,
    },
  };
}
