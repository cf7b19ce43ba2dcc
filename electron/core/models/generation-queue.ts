/**
 * /v1 generations run in arrival order, at most `limit` at once (`run`'s argument: 1 for an
 * engine that takes one generation at a time, as with Ollama or a one-slot llama-server; the
 * loaded context's sequences for the real engine, which batches them): a client beyond that
 * waits instead of getting "busy". With a limit of 1 it also covers a client that cancels and
 * asks again at once: the new request can reach the server before the old socket's close does,
 * and then waits for the old generation to be aborted.
 */
import { ApiError } from "../../api/errors";

export class GenerationQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly maxWaiting = 16) {}

  /**
   * Runs `job` once fewer than `limit` jobs run and every job queued before it has started.
   * Rejects with ApiError("busy") when too many wait, and with ApiError("aborted") if `signal`
   * fired while it waited (the job never runs).
   */
  async run<T>(signal: AbortSignal, job: () => Promise<T>, limit = 1): Promise<T> {
    if (this.running >= limit || this.waiting.length > 0) {
      if (this.waiting.length >= this.maxWaiting) {
        throw new ApiError("busy", "Too many requests are waiting for the model. Try again later.");
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      if (signal.aborted) throw new ApiError("aborted", "The client went away.");
      return await job();
    } finally {
      this.running--;
      this.next(limit);
    }
  }

  /** Start waiting jobs while fewer than `limit` run; each started job counts as running. */
  private next(limit: number): void {
    while (this.waiting.length > 0 && this.running < Math.max(1, limit)) {
      this.running++;
      this.waiting.shift()!();
    }
  }
}
