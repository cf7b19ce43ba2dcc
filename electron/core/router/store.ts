import { createHash } from "node:crypto";

/**
 * Persistence of the router: embeddings cached per base model and text, and the examples
 * learned from the user's overrides. Kept small on purpose so that a SQLite table pair
 * (router_vectors, router_learned) implements it directly; calls are synchronous like
 * better-sqlite3.
 */

/** A turn the user re-routed, kept as a labelled example. */
export interface LearnedExample {
  /** `textHash(text)`: the example's identity, also its key in the vector cache. */
  textHash: string;
  text: string;
  adapterId: string;
  /** RouterClock time; orders examples (oldest are dropped first). */
  createdAt: number;
}

export interface RouterStore {
  /**
   * Cached embeddings under base model `modelKey`, by text hash. Hashes not cached are absent
   * from the result.
   */
  getVectors(modelKey: string, textHashes: readonly string[]): Map<string, Float32Array>;
  /** Caches embeddings under `modelKey` (insert or replace). */
  putVectors(modelKey: string, vectors: ReadonlyMap<string, Float32Array>): void;
  /** Every learned example, oldest first. */
  listLearned(): LearnedExample[];
  /**
   * Adds `example`, replacing any example with the same textHash (the newest label of a text
   * wins), then keeps only the newest `maxPerAdapter` examples of its adapter.
   */
  addLearned(example: LearnedExample, maxPerAdapter: number): void;
}

/** Identity of a text in the store: sha256 of its UTF-8 bytes, hex. */
export function textHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** RouterStore in memory: for tests, and for running without a database. */
export class MemoryRouterStore implements RouterStore {
  private readonly vectors = new Map<string, Float32Array>();
  private learned: LearnedExample[] = [];

  getVectors(modelKey: string, textHashes: readonly string[]): Map<string, Float32Array> {
    const found = new Map<string, Float32Array>();
    for (const hash of textHashes) {
      const vector = this.vectors.get(vectorKey(modelKey, hash));
      // Copies, like a database read: callers cannot change what is stored.
      if (vector) found.set(hash, vector.slice());
    }
    return found;
  }

  putVectors(modelKey: string, vectors: ReadonlyMap<string, Float32Array>): void {
    for (const [hash, vector] of vectors) this.vectors.set(vectorKey(modelKey, hash), vector.slice());
  }

  listLearned(): LearnedExample[] {
    return this.learned.map((example) => ({ ...example }));
  }

  addLearned(example: LearnedExample, maxPerAdapter: number): void {
    const rest = this.learned.filter((e) => e.textHash !== example.textHash);
    // Stable sort: equal timestamps keep insertion order, as an autoincrement id would.
    const all = [...rest, { ...example }].sort((a, b) => a.createdAt - b.createdAt);
    const ofAdapter = all.filter((e) => e.adapterId === example.adapterId);
    const dropped = new Set(ofAdapter.slice(0, Math.max(0, ofAdapter.length - maxPerAdapter)));
    this.learned = all.filter((e) => !dropped.has(e));
  }

  /** Number of cached vectors (for tests of the cache). */
  get vectorCount(): number {
    return this.vectors.size;
  }
}

function vectorKey(modelKey: string, hash: string): string {
  return `${modelKey}\u0000${hash}`;
}
