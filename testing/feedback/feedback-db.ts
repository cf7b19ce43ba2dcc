/**
 * Test support: a real SQLite file with the app's schema (all migrations, feedback's 0004
 * included), and a seeded conversation with answers.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { migrate } from "../../electron/core/db/migrate";
import { migrations } from "../../electron/core/db/migrations";

/** Open `path` like openDatabase does (WAL, foreign keys) and migrate it. */
export function openFeedbackDatabase(path: string): Database {
  const db = new BetterSqlite3(path);
  db.pragma("journal_mode = WAL");
  db.pragma("foreign_keys = ON");
  migrate(db, migrations);
  return db;
}

export interface SeededTurn {
  userId: string;
  answerId: string;
}

/** A conversation and its messages, written as the turn pipeline writes them (messages + turns). */
export class ConversationSeed {
  private seq = 0;
  readonly conversationId = randomUUID();

  constructor(private readonly db: Database) {
    db.prepare("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, 'Seed', 1, 1)").run(
      this.conversationId,
    );
  }

  /** A message after the shown branch's last one (or, `versionOf`, a version shown in its place). */
  message(role: "user" | "assistant", content: string, versionOf?: string): string {
    const id = randomUUID();
    const parent =
      versionOf === undefined
        ? (this.db
            .prepare(
              "SELECT id FROM messages WHERE conversation_id = ? AND shown = 1 ORDER BY seq DESC LIMIT 1",
            )
            .pluck()
            .get(this.conversationId) as string | undefined)
        : (this.db.prepare("SELECT parent_id FROM messages WHERE id = ?").pluck().get(versionOf) as
            string | null);
    // The message tree (migration 0011): an earlier version leaves the shown branch.
    if (versionOf !== undefined) {
      this.db.prepare("UPDATE messages SET chosen = 0, shown = 0 WHERE id = ?").run(versionOf);
    }
    this.db
      .prepare(
        "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq, parent_id) VALUES (?, ?, ?, ?, 'complete', 1, ?, ?)",
      )
      .run(id, this.conversationId, role, content, ++this.seq, parent ?? null);
    return id;
  }

  /** A user message and its answer, with a turn record naming `adapterId` (installed with `domain`). */
  turn(question: string, answer: string, adapterId = "coding", domain = "coding"): SeededTurn {
    this.db
      .prepare(
        `INSERT OR IGNORE INTO adapters (id, name, domain, version, sha256, size_bytes, file_path, manifest_json, scale, installed_at)
         VALUES (?, ?, ?, '1.2.0', ?, 10, '/x', '{}', 1, 1)`,
      )
      .run(adapterId, adapterId, domain, `sha-${adapterId}`);
    const userId = this.message("user", question);
    const answerId = this.message("assistant", answer);
    this.db
      .prepare(
        `INSERT INTO turns (message_id, model_sha256, harness_version, adapters_json, router_json, sampling_json, kv_policy, created_at)
         VALUES (?, 'abc123', '0.1.0+h1', ?, ?, '{}', 'reevaluate', 1)`,
      )
      .run(
        answerId,
        JSON.stringify([{ id: adapterId, version: "1.2.0", scale: 1 }]),
        JSON.stringify({
          mode: "auto",
          confidence: 0.8,
          reason: `auto: ${adapterId} (0.80)`,
          latencyMs: 3,
          scores: {},
          skipped: [],
        }),
      );
    return { userId, answerId };
  }

  /**
   * A new version of the answer `oldId`, shown in its place (what chat.regenerate does; the old
   * one must be the last shown message), returning the new id.
   */
  regenerate(oldId: string, answer: string): string {
    return this.message("assistant", answer, oldId);
  }
}
