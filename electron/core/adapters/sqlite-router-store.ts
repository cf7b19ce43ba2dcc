import type { Database, Statement } from "better-sqlite3";
import type { LearnedExample, RouterStore } from "../router";

interface VectorRow {
  text_hash: string;
  vector: Buffer;
}

interface LearnedRow {
  text_hash: string;
  text: string;
  adapter_id: string;
  created_at: number;
}

/** A vector as stored: its float32 bytes (little-endian on every platform Electron ships on). */
function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
}

function fromBlob(blob: Buffer): Float32Array {
  // Copy into a fresh, aligned buffer: the Buffer may share a pool at any offset.
  const bytes = new Uint8Array(blob.byteLength);
  bytes.set(blob);
  return new Float32Array(bytes.buffer, 0, Math.floor(blob.byteLength / 4));
}

/** Hashes looked up per statement; well under SQLite's parameter limit. */
const LOOKUP_CHUNK = 200;

/** The router's RouterStore on the app database (router_vectors, router_learned; migration 0003). */
export class SqliteRouterStore implements RouterStore {
  private readonly putStmt: Statement<[string, string, Buffer, number]>;
  private readonly listStmt: Statement<[], LearnedRow>;
  private readonly upsertLearned: Statement<[string, string, string, number]>;
  private readonly trimStmt: Statement<[string, string, number]>;
  private readonly forgetStmt: Statement<[string]>;
  private readonly getStmts = new Map<number, Statement<string[], VectorRow>>();

  constructor(private readonly db: Database) {
    this.putStmt = db.prepare(
      `INSERT INTO router_vectors (model_key, text_hash, vector, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(model_key, text_hash) DO UPDATE SET vector = excluded.vector, created_at = excluded.created_at`,
    );
    // id orders equal timestamps by insertion, like the memory store's stable sort.
    this.listStmt = db.prepare(
      "SELECT text_hash, text, adapter_id, created_at FROM router_learned ORDER BY created_at, id",
    );
    // Used after a delete (not an UPDATE): a relabelled text becomes the newest row.
    this.upsertLearned = db.prepare(
      "INSERT INTO router_learned (text_hash, text, adapter_id, created_at) VALUES (?, ?, ?, ?)",
    );
    this.forgetStmt = db.prepare("DELETE FROM router_learned WHERE text_hash = ?");
    this.trimStmt = db.prepare(`
      DELETE FROM router_learned WHERE adapter_id = ? AND id NOT IN (
        SELECT id FROM router_learned WHERE adapter_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`);
  }

  getVectors(modelKey: string, textHashes: readonly string[]): Map<string, Float32Array> {
    const found = new Map<string, Float32Array>();
    for (let i = 0; i < textHashes.length; i += LOOKUP_CHUNK) {
      const chunk = textHashes.slice(i, i + LOOKUP_CHUNK);
      for (const row of this.getStmt(chunk.length).all(modelKey, ...chunk)) {
        found.set(row.text_hash, fromBlob(row.vector));
      }
    }
    return found;
  }

  putVectors(modelKey: string, vectors: ReadonlyMap<string, Float32Array>): void {
    const now = Date.now();
    this.db.transaction(() => {
      for (const [hash, vector] of vectors) this.putStmt.run(modelKey, hash, toBlob(vector), now);
    })();
  }

  listLearned(): LearnedExample[] {
    return this.listStmt.all().map((row) => ({
      textHash: row.text_hash,
      text: row.text,
      adapterId: row.adapter_id,
      createdAt: row.created_at,
    }));
  }

  addLearned(example: LearnedExample, maxPerAdapter: number): void {
    this.db.transaction(() => {
      this.forgetStmt.run(example.textHash);
      this.upsertLearned.run(example.textHash, example.text, example.adapterId, example.createdAt);
      this.trimStmt.run(example.adapterId, example.adapterId, Math.max(0, Math.trunc(maxPerAdapter)));
    })();
  }

  private getStmt(n: number): Statement<string[], VectorRow> {
    let stmt = this.getStmts.get(n);
    if (!stmt) {
      stmt = this.db.prepare(
        `SELECT text_hash, vector FROM router_vectors WHERE model_key = ? AND text_hash IN (${new Array(n).fill("?").join(", ")})`,
      );
      this.getStmts.set(n, stmt);
    }
    return stmt;
  }
}
