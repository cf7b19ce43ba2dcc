import Database from "better-sqlite3";
import { join } from "node:path";
import { DATABASE_FILE } from "../../electron/core/db/database";

/**
 * How many prompt tokens the engine evaluated for an answer, read from its turn record in the
 * database of `dataDir` (a second, read-only connection: core keeps writing through its own).
 */
export function promptTokensEvaluated(dataDir: string, messageId: string): number {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    const row = db.prepare("SELECT timings_json FROM turns WHERE message_id = ?").get(messageId) as
      { timings_json: string } | undefined;
    if (!row) throw new Error(`no turn record for message ${messageId}`);
    return (JSON.parse(row.timings_json) as { promptTokensEvaluated: number }).promptTokensEvaluated;
  } finally {
    db.close();
  }
}
