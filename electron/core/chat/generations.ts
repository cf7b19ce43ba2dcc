/**
 * The generations running now, at most one per conversation: reserved before the routing
 * decision (so a second turn is "busy" and a Stop already counts), stopped by the user, or
 * aborted all at once when core shuts down.
 */

export interface Generation {
  readonly controller: AbortController;
  /** Set when core shuts down: the answer ends "interrupted", not "stopped". */
  shutdown: boolean;
  done: Promise<void>;
}

export class Generations {
  private readonly running = new Map<string, Generation>();
  private isClosed = false;

  /** Core is shutting down: no generation may start any more. */
  get closed(): boolean {
    return this.isClosed;
  }

  has(conversationId: string): boolean {
    return this.running.has(conversationId);
  }

  /** Hold the conversation for a new generation (replacing whatever held it). */
  reserve(conversationId: string): Generation {
    const gen: Generation = { controller: new AbortController(), shutdown: false, done: Promise.resolve() };
    this.running.set(conversationId, gen);
    return gen;
  }

  /** Give the conversation back when `gen` did not get to start (it still holds it). */
  release(conversationId: string, gen: Generation): void {
    if (this.running.get(conversationId) === gen) this.running.delete(conversationId);
  }

  /** The generation of a conversation has ended and been saved. */
  end(conversationId: string): void {
    this.running.delete(conversationId);
  }

  /** Abort the generation of a conversation; false when none runs or it is already stopping. */
  stop(conversationId: string): boolean {
    const gen = this.running.get(conversationId);
    if (!gen || gen.controller.signal.aborted) return false;
    gen.controller.abort();
    return true;
  }

  /** Resolves when every generation running now has ended and been saved. */
  async settled(): Promise<void> {
    await Promise.all([...this.running.values()].map((g) => g.done));
  }

  /** Abort every generation (answers end "interrupted") and wait until they are saved. */
  async close(): Promise<void> {
    this.isClosed = true;
    for (const gen of this.running.values()) {
      gen.shutdown = true;
      gen.controller.abort();
    }
    await this.settled();
  }
}
