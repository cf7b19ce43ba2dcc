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

  message(role: "user" | "assistant", content: string): string {
    const id = randomUUID();
    this.db
      .prepare(
        "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES (?, ?, ?, ?, 'complete', 1, ?)",
      )
      .run(id, this.conversationId, role, content, ++this.seq);
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

  /** Mark `oldId` replaced by a new answer (what chat.regenerate does), returning the new id. */
  regenerate(oldId: string, answer: string): string {
    const newId = this.message("assistant", answer);
    this.db.prepare("UPDATE messages SET replaced_by = ? WHERE id = ?").run(newId, oldId);
    return newId;
  }
}
