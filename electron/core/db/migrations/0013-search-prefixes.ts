import type { Database } from "better-sqlite3";
import { FTS_TOKENIZER } from "./0005-memory";

/**
 * Schema v13: prefix indexes for 1 to 6 characters (were 1 to 3) in `messages_fts` and
 * `conversations_fts`, so that the last word of a search, always a prefix, is one document list
 * up to six letters.
 *
 * Without an index for its length, FTS5 reads a prefix by merging the lists of all its
 * completions before returning a row ("danra*" at a million messages: 35–70 ms even for LIMIT
 * 1), and search instead listed the completions (a seek each) and OR-ed them (an iterator each):
 * 100–250 completions for a common 4–5 letter word, 10–20 ms per keystroke. From seven letters
 * on a prefix has few completions (at most 20 in the benchmark's 30,000 words), so the OR of
 * them stays cheap. Each prefix length adds roughly one more copy of the index's positions for
 * the words that long (measured: bench/README.md, "search").
 *
 * Only the tables are made again: their content (the `messages_fts_content` view of the shown
 * messages, `conversations`) and the triggers that keep them (on `messages` and
 * `conversations`, naming the tables) stay as the earlier migrations left them. One 'rebuild'
 * each: a pass over the shown messages, once.
 */
export function migrate0013(db: Database): void {
  db.exec(`
    DROP TABLE messages_fts;
    CREATE VIRTUAL TABLE messages_fts USING fts5(
      content, content='messages_fts_content', content_rowid='message_rowid',
      tokenize='${FTS_TOKENIZER}', prefix='1 2 3 4 5 6'
    );
    INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');

    DROP TABLE conversations_fts;
    CREATE VIRTUAL TABLE conversations_fts USING fts5(
      title, content='conversations', content_rowid='rowid',
      tokenize='${FTS_TOKENIZER}', prefix='1 2 3 4 5 6'
    );
    INSERT INTO conversations_fts(conversations_fts) VALUES ('rebuild');
  `);
}
