import type { Database, Statement } from "better-sqlite3";
import type { MessageRole, SearchHit } from "../../api";
import { MATCH_CLOSE, MATCH_OPEN, searchQuery, snippetParts } from "../db/fts-query";

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
 * Full-text search over conversation titles and message contents (migration 0005's FTS5
 * indexes), ranked by bm25. Answers replaced by a regeneration are not part of a transcript
 * any more and are not found.
 */
export class ConversationSearch {
  private readonly messagesStmt: Statement<{ query: string; limit: number }, MessageHitRow>;
  private readonly titlesStmt: Statement<{ query: string; limit: number }, TitleHitRow>;
  private readonly idsStmt: Statement<{ query: string }, { id: string }>;

  constructor(db: Database) {
    const open = `'${MATCH_OPEN}'`;
    const close = `'${MATCH_CLOSE}'`;
    this.messagesStmt = db.prepare(`
      SELECT m.id AS message_id, m.conversation_id, m.role, m.created_at, c.title,
        snippet(messages_fts, 0, ${open}, ${close}, '…', ${SNIPPET_TOKENS}) AS marked,
        bm25(messages_fts) AS rank
      FROM messages_fts
      JOIN messages m ON m.rowid = messages_fts.rowid
      JOIN conversations c ON c.id = m.conversation_id
      WHERE messages_fts MATCH @query AND m.replaced_by IS NULL
      ORDER BY rank LIMIT @limit`);
    this.titlesStmt = db.prepare(`
      SELECT c.id AS conversation_id, c.created_at, c.title,
        highlight(conversations_fts, 0, ${open}, ${close}) AS marked,
        bm25(conversations_fts) AS rank
      FROM conversations_fts
      JOIN conversations c ON c.rowid = conversations_fts.rowid
      WHERE conversations_fts MATCH @query
      ORDER BY rank LIMIT @limit`);
    this.idsStmt = db.prepare(`
      SELECT c.id FROM conversations_fts JOIN conversations c ON c.rowid = conversations_fts.rowid
      WHERE conversations_fts MATCH @query
      UNION
      SELECT m.conversation_id FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
      WHERE messages_fts MATCH @query AND m.replaced_by IS NULL`);
  }

  /**
   * Best matches first: every word of `text` must occur (the last one as a prefix). Titles
   * and messages are ranked together, titles boosted. Empty for text without words.
   */
  search(text: string, limit = DEFAULT_LIMIT): SearchHit[] {
    const query = searchQuery(text);
    if (!query) return [];
    const titles = this.titlesStmt.all({ query, limit }).map((r) => ({
      rank: r.rank * TITLE_BOOST,
      hit: {
        conversationId: r.conversation_id,
        conversationTitle: r.title,
        messageId: null,
        role: null,
        snippet: snippetParts(r.marked),
        createdAt: r.created_at,
      } satisfies SearchHit,
    }));
    const messages = this.messagesStmt.all({ query, limit }).map((r) => ({
      rank: r.rank,
      hit: {
        conversationId: r.conversation_id,
        conversationTitle: r.title,
        messageId: r.message_id,
        role: r.role,
        snippet: snippetParts(r.marked),
        createdAt: r.created_at,
      } satisfies SearchHit,
    }));
    // bm25 is negative: lower is better.
    return [...titles, ...messages]
      .sort((a, b) => a.rank - b.rank)
      .slice(0, limit)
      .map((r) => r.hit);
  }

  /** Ids of the conversations whose title or transcript matches (the sidebar filter). */
  matchingConversationIds(text: string): Set<string> {
    const query = searchQuery(text);
    if (!query) return new Set();
    return new Set(this.idsStmt.all({ query }).map((r) => r.id));
  }
}
