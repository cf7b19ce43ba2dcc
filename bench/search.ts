/**
 * Conversation search at 10k / 100k / 1M messages: the query before migration 0010 (every match
 * joined to messages and conversations, then sorted and cut, on an index of every message
 * without prefix indexes) against ConversationSearch today (ranked and cut inside FTS5, newest
 * first for common queries, 1-6 letter prefix indexes), per query class, in the same run on the
 * same generated history; and the sidebar filter (matchingConversationIds) against the old one
 * (every match joined, UNION).
 *
 * One history (bench/search-corpus.ts: Zipf-like words, 20 messages per conversation, one
 * answer in twenty regenerated) is written at schema 12 with the app's stores (they need its
 * columns); at each size it is copied twice: one copy is migrated to the latest schema (0013's
 * time and the file sizes are reported), in the other the indexes are made again as they were
 * before 0010 (the baseline's index, its shown-message test after the join). Queries are
 * interleaved old/new, alternating which goes first, after one untimed pass over each.
 *
 *   npm run bench -- search                                   (10k, 100k, 1M: minutes)
 *   npm run bench -- search --sizes 10000,100000 --queries 20 (quicker)
 */
import type { Database, Statement } from "better-sqlite3";
import { copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { SearchHit } from "../electron/api";
import {
  COMMON_ROWS,
  ConversationSearch,
  messageHit,
  SIDEBAR_LIMIT,
  titleHit,
  type MessageHitRow,
  type TitleHitRow,
} from "../electron/core/conversations/conversation-search";
import { ConversationStore } from "../electron/core/conversations/conversation-store";
import { MessageStore } from "../electron/core/conversations/message-store";
import { connectDatabase } from "../electron/core/db/database";
import { FTS_TOKENIZER } from "../electron/core/db/migrations/0005-memory";
import { MATCH_CLOSE, MATCH_OPEN, searchQuery } from "../electron/core/db/fts-query";
import { migrate } from "../electron/core/db/migrate";
import { migrations } from "../electron/core/db/migrations";
import { corpusQueries, fillCorpus, type QueryClass } from "./search-corpus";
import { median, percentile, report, type BenchRow } from "./stats";

const CLASSES: QueryClass[] = ["rare", "common", "mixed", "prefix", "phrase", "none"];
/** The schema the history is written at: the latest before 0013 (the app's stores need it). */
const FILL_SCHEMA = 12;

/**
 * The indexes as they were before migration 0010 (0005's): every message indexed, whether
 * shown or not, no prefix indexes, plain triggers. Made again in a copy, then rebuilt.
 */
function toPre0010Indexes(db: Database): void {
  db.exec(`
    DROP TRIGGER messages_fts_insert;
    DROP TRIGGER messages_fts_delete;
    DROP TRIGGER messages_fts_update;
    DROP TABLE messages_fts;
    DROP VIEW messages_fts_content;
    CREATE VIRTUAL TABLE messages_fts USING fts5(
      content, content='messages', content_rowid='rowid', tokenize='${FTS_TOKENIZER}'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
      INSERT INTO messages_fts(rowid, content) VALUES (new.rowid, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    END;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
      INSERT INTO messages_fts(rowid, content) VALUES (new.rowid, new.content);
    END;
    INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
    DROP TABLE conversations_fts;
    CREATE VIRTUAL TABLE conversations_fts USING fts5(
      title, content='conversations', content_rowid='rowid', tokenize='${FTS_TOKENIZER}'
    );
    INSERT INTO conversations_fts(conversations_fts) VALUES ('rebuild');`);
}

/** The sidebar filter's queries: the classes it meets most, in turn. */
function sidebarQueries(count: number): string[] {
  const kinds: QueryClass[] = ["common", "prefix", "mixed", "rare"];
  const each = kinds.map((k) => corpusQueries(k, Math.ceil(count / kinds.length)));
  return Array.from({ length: count }, (_, i) => each[i % kinds.length]![Math.floor(i / kinds.length)]!);
}

/**
 * The search as it was at schema 9 (the baseline): kept here, not in the app, verbatim but for
 * which messages are shown (`replaced_by IS NULL` then, `shown = 1` since 0011).
 */
class OldSearch {
  private readonly messagesStmt: Statement<{ query: string; limit: number }, MessageHitRow>;
  private readonly titlesStmt: Statement<{ query: string; limit: number }, TitleHitRow>;
  private readonly idsStmt: Statement<{ query: string }, { id: string }>;

  constructor(db: Database) {
    const open = `'${MATCH_OPEN}'`;
    const close = `'${MATCH_CLOSE}'`;
    this.messagesStmt = db.prepare(`
      SELECT m.id AS message_id, m.conversation_id, m.role, m.created_at, c.title,
        snippet(messages_fts, 0, ${open}, ${close}, '…', 12) AS marked,
        bm25(messages_fts) AS rank
      FROM messages_fts
      JOIN messages m ON m.rowid = messages_fts.rowid
      JOIN conversations c ON c.id = m.conversation_id
      WHERE messages_fts MATCH @query AND m.shown = 1
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
      WHERE messages_fts MATCH @query AND m.shown = 1`);
  }

  matchingConversationIds(text: string): Set<string> {
    const query = searchQuery(text);
    return new Set(query ? this.idsStmt.all({ query }).map((r) => r.id) : []);
  }

  search(text: string, limit = 50): SearchHit[] {
    const query = searchQuery(text);
    if (!query) return [];
    const titles = this.titlesStmt.all({ query, limit }).map(titleHit);
    const messages = this.messagesStmt.all({ query, limit }).map(messageHit);
    return [...titles, ...messages]
      .sort((a, b) => a.rank - b.rank)
      .slice(0, limit)
      .map((r) => r.hit);
  }
}

/** One user message committed in its own transaction (what a turn waits for), in ms. */
function appendMs(db: Database, conversationId: string, i: number): number {
  const messages = new MessageStore(db);
  const t = performance.now();
  db.transaction(() => {
    messages.append({
      conversationId,
      role: "user",
      content: `append bench message ${i} about tea`,
      status: "complete",
    });
  })();
  return performance.now() - t;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

const stats = (prefix: string, ms: number[]): BenchRow => ({
  name: "",
  [`${prefix}P50Ms`]: median(ms),
  [`${prefix}P95Ms`]: percentile(ms, 95),
  [`${prefix}MaxMs`]: Math.max(...ms),
});

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "10000,100000,1000000" },
      queries: { type: "string", default: "40" },
    },
    strict: true,
  });
  const sizes = values.sizes
    .split(",")
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
  const perClass = Number(values.queries);
  if (sizes.length === 0 || !(perClass > 0)) throw new Error("--sizes N,N,… and --queries N > 0");

  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-search-"));
  const rows: BenchRow[] = [];
  const steps: BenchRow[] = [];
  try {
    const historyPath = join(dir, `v${FILL_SCHEMA}.db`);
    const historyDb = connectDatabase(historyPath);
    migrate(
      historyDb,
      migrations.filter((m) => m.version <= FILL_SCHEMA),
    );
    let have = 0;
    for (const size of sizes) {
      const fillMs = fillCorpus(historyDb, have, size);
      have = size;
      // A checkpointed WAL database is one file: safe to copy.
      historyDb.pragma("wal_checkpoint(TRUNCATE)");
      const newPath = join(dir, `v-latest-${size}.db`);
      const oldPath = join(dir, `v-old-${size}.db`);
      copyFileSync(historyPath, newPath);
      copyFileSync(historyPath, oldPath);
      const newDb = connectDatabase(newPath);
      let t = performance.now();
      migrate(newDb);
      const migrateMs = performance.now() - t;
      const oldDb = connectDatabase(oldPath);
      t = performance.now();
      toPre0010Indexes(oldDb);
      const oldIndexMs = performance.now() - t;

      const oldSearch = new OldSearch(oldDb);
      const newSearch = new ConversationSearch(newDb);
      const measure = (
        name: string,
        queries: string[],
        runOld: (q: string) => number,
        runNew: (q: string) => number,
      ): void => {
        for (const q of queries) {
          runOld(q);
          runNew(q);
        }
        const oldMs: number[] = [];
        const newMs: number[] = [];
        // CPU time as well: on a shared machine wall time also counts the waits for a core.
        const oldCpu: number[] = [];
        const newCpu: number[] = [];
        const oldHits: number[] = [];
        const newHits: number[] = [];
        let newest = 0;
        const timed = (
          q: string,
          run: (q: string) => number,
          ms: number[],
          cpu: number[],
          hits: number[],
        ) => {
          const c = process.cpuUsage();
          const s = performance.now();
          hits.push(run(q));
          ms.push(performance.now() - s);
          cpu.push(cpuMs(c));
        };
        queries.forEach((q, i) => {
          if (i % 2 === 0) {
            timed(q, runOld, oldMs, oldCpu, oldHits);
            timed(q, runNew, newMs, newCpu, newHits);
          } else {
            timed(q, runNew, newMs, newCpu, newHits);
            timed(q, runOld, oldMs, oldCpu, oldHits);
          }
          if (newSearch.order(q) === "newest") newest++;
        });
        rows.push({
          ...stats("old", oldMs),
          ...stats("new", newMs),
          name: `${size.toLocaleString("en")} ${name}`,
          oldCpuP95Ms: percentile(oldCpu, 95),
          newCpuP50Ms: median(newCpu),
          newCpuP95Ms: percentile(newCpu, 95),
          p95Speedup: percentile(oldMs, 95) / percentile(newMs, 95),
          newestShare: newest / queries.length,
          oldMedianHits: median(oldHits),
          newMedianHits: median(newHits),
        });
      };
      for (const kind of CLASSES) {
        measure(
          kind,
          corpusQueries(kind, perClass),
          (q) => oldSearch.search(q).length,
          (q) => newSearch.search(q).length,
        );
      }
      // The sidebar filter: hits are conversations (the new one stops at SIDEBAR_LIMIT).
      measure(
        "sidebar",
        sidebarQueries(perClass),
        (q) => oldSearch.matchingConversationIds(q).size,
        (q) => newSearch.matchingConversationIds(q).size,
      );

      const oldConversation = new ConversationStore(oldDb).create("append bench", 0).id;
      const newConversation = new ConversationStore(newDb).create("append bench", 0).id;
      const oldAppend: number[] = [];
      const newAppend: number[] = [];
      for (let i = 0; i < 30; i++) {
        oldAppend.push(appendMs(oldDb, oldConversation, i));
        newAppend.push(appendMs(newDb, newConversation, i));
      }
      // In use, not the file: the dropped indexes' pages stay in each copy as free pages.
      const usedMiB = (db: Database): number =>
        ((db.pragma("page_count", { simple: true }) as number) -
          (db.pragma("freelist_count", { simple: true }) as number)) *
        ((db.pragma("page_size", { simple: true }) as number) / 2 ** 20);
      const oldDbMiB = usedMiB(oldDb);
      const newDbMiB = usedMiB(newDb);
      newDb.close();
      oldDb.close();
      steps.push({
        name: `${size.toLocaleString("en")} messages`,
        fillS: fillMs / 1000,
        migrateToLatestS: migrateMs / 1000,
        oldIndexS: oldIndexMs / 1000,
        historyDbMiB: statSync(historyPath).size / 2 ** 20,
        oldDbMiB,
        newDbMiB,
        oldAppendP50Ms: median(oldAppend),
        newAppendP50Ms: median(newAppend),
      });
      rmSync(newPath, { force: true });
      rmSync(oldPath, { force: true });
      console.log(`search: ${size} messages done`);
      // Let the progress line out before the next size's minutes of synchronous work.
      await new Promise((resolve) => setImmediate(resolve));
    }
    historyDb.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  report("search", rows, {
    commonRows: COMMON_ROWS,
    sidebarLimit: SIDEBAR_LIMIT,
    queriesPerClass: perClass,
    steps,
  });
  console.table(steps);
}
