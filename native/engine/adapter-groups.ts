/**
 * Which generations may run on the context now. llama.cpp applies LoRA adapters per context,
 * not per sequence, so generations run together only when they use the same adapter set: a
 * group of them decodes on separate sequences of the one context, and node-llama-cpp batches
 * their tokens into one decode per step (LlamaContext.dispatchPendingBatch collects every
 * sequence's queued tokens). A generation under another set waits until the running group has
 * drained, and then its own group starts (the adapters are switched while nothing decodes).
 *
 * Waiting generations are served in order, the app's own (priority: a conversation's turn)
 * before the API's; a generation joins the running group at once only while nobody waits ahead
 * of it, so a different set is never starved by a stream of same-set requests. At most
 * `capacity` run at once (one sequence each).
 */
export class AdapterGroups {
  private running = 0;
  private runningKey: string | null = null;
  private readonly waiting: Waiter[] = [];
  private retired = false;
  private readonly idle: (() => void)[] = [];

  constructor(private readonly capacity: number) {}

  /** How many generations may run at once (the context's sequences). */
  get size(): number {
    return this.capacity;
  }

  /**
   * The context is being replaced (ModelSession grows it): every waiter is let in at once,
   * whatever its set, to find that out and wait on the new context's groups instead.
   */
  retire(): void {
    this.retired = true;
    this.admit();
  }

  /** Whether retire() was called: the context is being replaced. */
  get isRetired(): boolean {
    return this.retired;
  }

  /** Resolves once nothing runs and nothing waits. */
  whenIdle(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** How many generations run now. */
  get active(): number {
    return this.running;
  }

  /** How many generations wait for their group. */
  get queued(): number {
    return this.waiting.length;
  }

  /** The adapter set key of the running group, or null when none runs. */
  get activeKey(): string | null {
    return this.runningKey;
  }

  /**
   * Wait for a turn under adapter set `key`; resolves to the function that ends it (call it
   * once, when the generation is over), or null if `signal` fired first (then nothing ran).
   * `priority`: the app's own chat, served before API requests that wait.
   */
  enter(key: string, priority: boolean, signal?: AbortSignal): Promise<(() => void) | null> {
    if (signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = { key, priority, resolve, signal, onAbort: null };
      // Behind every waiter of the same or a higher priority.
      const at = priority ? this.waiting.findIndex((w) => !w.priority) : -1;
      if (at < 0) this.waiting.push(waiter);
      else this.waiting.splice(at, 0, waiter);
      if (signal) {
        waiter.onAbort = () => {
          const index = this.waiting.indexOf(waiter);
          if (index < 0) return;
          this.waiting.splice(index, 1);
          resolve(null);
          // The head may have been blocked by this waiter only.
          this.admit();
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.admit();
    });
  }

  /** Start waiters from the head while they fit in the running group. */
  private admit(): void {
    while (this.waiting.length > 0 && (this.retired || this.running < this.capacity)) {
      const head = this.waiting[0]!;
      if (!this.retired && this.running > 0 && head.key !== this.runningKey) return;
      this.waiting.shift();
      if (head.onAbort) head.signal?.removeEventListener("abort", head.onAbort);
      this.running++;
      this.runningKey = head.key;
      let done = false;
      head.resolve(() => {
        if (done) return;
        done = true;
        this.running--;
        if (this.running === 0) this.runningKey = null;
        this.admit();
      });
    }
    if (this.running === 0 && this.waiting.length === 0) for (const resolve of this.idle.splice(0)) resolve();
  }
}

interface Waiter {
  key: string;
  priority: boolean;
  resolve: (release: (() => void) | null) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
}
