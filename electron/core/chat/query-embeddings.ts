/**
 * The embedding of a turn's user text, computed once however many ask for it. The adapter
 * router (auto mode) and memory retrieval both need it, and the turn pipeline plans both at
 * the same time: without this each sent its own copy of the text to the engine, one more
 * embedding pass over the whole user message per turn.
 */
export type EmbedTexts = (texts: string[]) => Promise<number[][]>;

/** Query texts kept: a regenerate or an override asks again for a recent turn's text. */
const DEFAULT_CAPACITY = 8;

export class QueryEmbeddings {
  /** Newest last (a Map keeps insertion order); promises, so concurrent askers share one call. */
  private readonly entries = new Map<string, Promise<number[]>>();
  private cachedFor: string | null = null;

  constructor(
    private readonly embed: EmbedTexts,
    /** Identity of the loaded model: another model means other vectors, so the memo is emptied. */
    private readonly modelKey: () => string,
    private readonly capacity: number = DEFAULT_CAPACITY,
  ) {}

  /**
   * The vector of exactly `text` (callers trim it the same way). A failed embedding is not
   * kept: the next ask tries again (the engine may be restarting).
   */
  get(text: string): Promise<number[]> {
    const key = this.modelKey();
    if (key !== this.cachedFor) {
      this.entries.clear();
      this.cachedFor = key;
    }
    const hit = this.entries.get(text);
    if (hit) {
      this.entries.delete(text);
      this.entries.set(text, hit);
      return hit;
    }
    const vector = this.embed([text]).then((vectors) => {
      const [first] = Array.isArray(vectors) ? vectors : [];
      if (!first) throw new Error("the engine returned no embedding");
      return first;
    });
    this.entries.set(text, vector);
    vector.catch(() => {
      if (this.entries.get(text) === vector) this.entries.delete(text);
    });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.capacity) break;
      this.entries.delete(oldest);
    }
    return vector;
  }

  /** Drops every kept vector (core closing, or a test). */
  clear(): void {
    this.entries.clear();
  }
}
