/**
 * Conversation search at 10k / 100k / 1M messages: the query before migration 0010 (every match
 * joined to messages and conversations, then sorted and cut) against ConversationSearch today
 * (ranked and cut inside FTS5, newest first for common queries), per query class, in the same
 * run on the same generated history.
 *
 * One history (bench/search-corpus.ts: Zipf-like words, 20 messages per conversation, one
 * answer in twenty regenerated) is written at schema 9 with the app's stores; at each size it
 * is copied and the copy migrated to the latest schema (the migration's time is reported), so
 * the old query runs on the index it was written for and the new one on its own. Queries are
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
  titleHit,
  type MessageHitRow,
  type TitleHitRow,
} from "../electron/core/conversations/conversation-search";
import { ConversationStore } from "../electron/core/conversations/conversation-store";
import { MessageStore } from "../electron/core/conversations/message-store";
import { connectDatabase } from "../electron/core/db/database";
import { MATCH_CLOSE, MATCH_OPEN, searchQuery } from "../electron/core/db/fts-query";
import { migrate } from "../electron/core/db/migrate";
import { migrations } from "../electron/core/db/migrations";
import { corpusQueries, fillCorpus, type QueryClass } from "./search-corpus";
import { median, percentile, report, type BenchRow } from "./stats";

const CLASSES: QueryClass[] = ["rare", "common", "mixed", "prefix", "phrase", "none"];
const OLD_SCHEMA = 9;

/** The search as it was at schema 9 (the baseline): kept verbatim here, not in the app. */
class OldSearch {
  private readonly messagesStmt: Statement<{ query: string; limit: number }, MessageHitRow>;
  private readonly titlesStmt: Statement<{ query: string; limit: number }, TitleHitRow>;

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
    const oldPath = join(dir, "v9.db");
    const oldDb = connectDatabase(oldPath);
    migrate(
      oldDb,
      migrations.filter((m) => m.version <= OLD_SCHEMA),
    );
    let have = 0;
    for (const size of sizes) {
      const fillMs = fillCorpus(oldDb, have, size);
      have = size;
      // A closed WAL database is one file: checkpointed, safe to copy.
      oldDb.pragma("wal_checkpoint(TRUNCATE)");
      const newPath = join(dir, `v-latest-${size}.db`);
      copyFileSync(oldPath, newPath);
      const newDb = connectDatabase(newPath);
      const t = performance.now();
      migrate(newDb);
      const migrateMs = performance.now() - t;

      const oldSearch = new OldSearch(oldDb);
      const newSearch = new ConversationSearch(newDb);
      for (const kind of CLASSES) {
        const queries = corpusQueries(kind, perClass);
        for (const q of queries) {
          oldSearch.search(q);
          newSearch.search(q);
        }
        const oldMs: number[] = [];
        const newMs: number[] = [];
        // CPU time as well: on a shared machine wall time also counts the waits for a core.
        const oldCpu: number[] = [];
        const newCpu: number[] = [];
        const oldHits: number[] = [];
        const newHits: number[] = [];
        let newest = 0;
        queries.forEach((q, i) => {
          const runOld = (): void => {
            const c = process.cpuUsage();
            const s = performance.now();
            oldHits.push(oldSearch.search(q).length);
            oldMs.push(performance.now() - s);
            oldCpu.push(cpuMs(c));
          };
          const runNew = (): void => {
            const c = process.cpuUsage();
            const s = performance.now();
            newHits.push(newSearch.search(q).length);
            newMs.push(performance.now() - s);
            newCpu.push(cpuMs(c));
          };
          if (i % 2 === 0) {
            runOld();
            runNew();
          } else {
            runNew();
            runOld();
          }
          if (newSearch.order(q) === "newest") newest++;
        });
        rows.push({
          ...stats("old", oldMs),
          ...stats("new", newMs),
          name: `${size.toLocaleString("en")} ${kind}`,
          oldCpuP95Ms: percentile(oldCpu, 95),
          newCpuP50Ms: median(newCpu),
          newCpuP95Ms: percentile(newCpu, 95),
          p95Speedup: percentile(oldMs, 95) / percentile(newMs, 95),
          newestShare: newest / queries.length,
          oldMedianHits: median(oldHits),
          newMedianHits: median(newHits),
        });
      }

      const oldConversation = new ConversationStore(oldDb).create("append bench", 0).id;
      const newConversation = new ConversationStore(newDb).create("append bench", 0).id;
      const oldAppend: number[] = [];
      const newAppend: number[] = [];
      for (let i = 0; i < 30; i++) {
        oldAppend.push(appendMs(oldDb, oldConversation, i));
        newAppend.push(appendMs(newDb, newConversation, i));
      }
      // Back to the generated history only, so that the next step continues it unchanged.
      oldDb.prepare("DELETE FROM conversations WHERE id = ?").run(oldConversation);
      newDb.close();
      steps.push({
        name: `${size.toLocaleString("en")} messages`,
        fillS: fillMs / 1000,
        migrateTo10S: migrateMs / 1000,
        oldDbMiB: statSync(oldPath).size / 2 ** 20,
        newDbMiB: statSync(newPath).size / 2 ** 20,
        oldAppendP50Ms: median(oldAppend),
        newAppendP50Ms: median(newAppend),
      });
      rmSync(newPath, { force: true });
      console.log(`search: ${size} messages done`);
      // Let the progress line out before the next size's minutes of synchronous work.
      await new Promise((resolve) => setImmediate(resolve));
    }
    oldDb.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  report("search", rows, { commonRows: COMMON_ROWS, queriesPerClass: perClass, steps });
  console.table(steps);
}
