import type { Database, Statement } from "better-sqlite3";
import type { MessageRole, SearchHit } from "../../api";
import { MATCH_CLOSE, MATCH_OPEN, searchPhrases, snippetParts } from "../db/fts-query";

interface MessageHitRow {
  message_id: string;
  conversation_id: string;
  role: MessageRole;
  created_at: number;
  title: string;
  marked: string;
  rank: number;
}

interface TitleHitRow {
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

/** The first window of rowids the newest-first search looks in; each next one is 4 times wider. */
const FIRST_WINDOW = 16_384;

export interface SearchOptions {
  /** Tests: a small corpus reaches the newest-first path with a small threshold. */
  commonRows?: number;
  firstWindow?: number;
}

/**
 * How results are ordered. "rank": bm25 (titles boosted), best first. "newest": the most
 * recently written matches first (highest rowid), for queries with a very common phrase, where
 * ranking every match would take hundreds of milliseconds at a million messages.
 */
export type SearchOrder = "rank" | "newest";

type Params = { query: string; limit: number };
type WindowParams = Params & { from: number; below: number };

/** The statements for one FTS5 index: rank or newest first, cut inside FTS5, then joined. */
interface IndexStatements<Row> {
  /** How many rows match, counting no further than the limit. */
  probe: Statement<Params, { n: number }>;
  ranked: Statement<Params, Row>;
  /** Matches with from <= rowid < below, newest first. */
  newest: Statement<WindowParams, Row>;
  maxRowid: Statement<[], { max: number | null }>;
}

function indexStatements<Row>(
  db: Database,
  fts: string,
  /** The inner query's extra column: snippet() or highlight(), computed only for the rows kept. */
  marked: string,
  /** The outer query: joins `hits` (rowid, rank, marked) to the rows shown. */
  outer: (hits: string) => string,
  table: string,
): IndexStatements<Row> {
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
    // The window bounds what a prefix phrase merges (its words' lists) to the rowids asked.
    newest: db.prepare(
      outer(`(SELECT rowid, 0 AS rank, ${marked} AS marked FROM ${fts}
        WHERE ${fts} MATCH @query AND rowid >= @from AND rowid < @below
        ORDER BY rowid DESC LIMIT @limit)`) + " ORDER BY hits.rowid DESC",
    ),
    maxRowid: db.prepare(`SELECT max(rowid) AS max FROM ${table}`),
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
  private readonly idsStmt: Statement<{ query: string }, { id: string }>;

  private readonly commonRows: number;
  private readonly firstWindow: number;

  constructor(db: Database, options: SearchOptions = {}) {
    this.commonRows = options.commonRows ?? COMMON_ROWS;
    this.firstWindow = options.firstWindow ?? FIRST_WINDOW;
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
      "messages",
    );
    this.titles = indexStatements(
      db,
      "conversations_fts",
      `highlight(conversations_fts, 0, ${open}, ${close})`,
      (hits) => `
        SELECT c.id AS conversation_id, c.created_at, c.title, hits.marked, hits.rank
        FROM ${hits} AS hits
        JOIN conversations c ON c.rowid = hits.rowid`,
      "conversations",
    );
    this.idsStmt = db.prepare(`
      SELECT c.id FROM conversations_fts JOIN conversations c ON c.rowid = conversations_fts.rowid
      WHERE conversations_fts MATCH @query
      UNION
      SELECT m.conversation_id FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
      WHERE messages_fts MATCH @query`);
  }

  /**
   * How search() orders the results for `text`: "newest" when one of its phrases is in more
   * than COMMON_ROWS messages or titles. Each probe counts no further than that.
   */
  order(text: string): SearchOrder {
    return this.orderOf(searchPhrases(text));
  }

  private orderOf(phrases: string[]): SearchOrder {
    const common = (index: IndexStatements<unknown>, phrase: string): boolean =>
      index.probe.get({ query: phrase, limit: this.commonRows + 1 })!.n > this.commonRows;
    for (const phrase of phrases) {
      // A long prefix ("tendan*") merges the lists of every word it starts; when the word as
      // typed is common already, that answers without the merge.
      const exact = phrase.endsWith("*") ? phrase.slice(0, -1) : null;
      for (const index of [this.messages, this.titles]) {
        if (exact !== null && common(index, exact)) return "newest";
        if (common(index, phrase)) return "newest";
      }
    }
    return "rank";
  }

  /**
   * Every word of `text` must occur (the last one as a prefix). Best matches first, titles and
   * messages ranked together, titles boosted; newest first for common queries (order()).
   * Empty for text without words.
   */
  search(text: string, limit = DEFAULT_LIMIT): SearchHit[] {
    const phrases = searchPhrases(text);
    if (phrases.length === 0) return [];
    const query = phrases.join(" ");
    if (this.orderOf(phrases) === "newest") {
      const titles = this.newest(this.titles, query, limit).map(titleHit);
      const messages = this.newest(this.messages, query, limit).map(messageHit);
      // Stable: messages already come newest written first.
      return [...messages, ...titles]
        .sort((a, b) => b.hit.createdAt - a.hit.createdAt)
        .slice(0, limit)
        .map((r) => r.hit);
    }
    const titles = this.titles.ranked.all({ query, limit }).map(titleHit);
    const messages = this.messages.ranked.all({ query, limit }).map(messageHit);
    // bm25 is negative: lower is better.
    return [...titles, ...messages]
      .sort((a, b) => a.rank - b.rank)
      .slice(0, limit)
      .map((r) => r.hit);
  }

  /** The `limit` matches with the highest rowids, looking in ever wider windows down from the top. */
  private newest<Row>(index: IndexStatements<Row>, query: string, limit: number): Row[] {
    const rows: Row[] = [];
    let below = (index.maxRowid.get()?.max ?? 0) + 1;
    for (let width = this.firstWindow; below > 1 && rows.length < limit; width *= 4) {
      const from = Math.max(1, below - width);
      rows.push(...index.newest.all({ query, limit: limit - rows.length, from, below }));
      below = from;
    }
    return rows;
  }

  /** Ids of the conversations whose title or transcript matches (the sidebar filter). */
  matchingConversationIds(text: string): Set<string> {
    const phrases = searchPhrases(text);
    if (phrases.length === 0) return new Set();
    return new Set(this.idsStmt.all({ query: phrases.join(" ") }).map((r) => r.id));
  }
}

function titleHit(r: TitleHitRow): { rank: number; hit: SearchHit } {
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

function messageHit(r: MessageHitRow): { rank: number; hit: SearchHit } {
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
