/**
 * /v1 generations run one at a time, in arrival order, as with Ollama or a one-slot
 * llama-server: a second client waits instead of getting "busy". It also covers a client that
 * cancels and asks again at once: the new request can reach the server before the old
 * socket's close does, and then waits for the old generation to be aborted.
 */
import { ApiError } from "../../api/errors";

export class GenerationQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  constructor(private readonly maxWaiting = 16) {}

  /**
   * Runs `job` after every job queued before it. Rejects with ApiError("busy") when too many
   * wait, and with ApiError("aborted") if `signal` fired while it waited (the job never runs).
   */
  run<T>(signal: AbortSignal, job: () => Promise<T>): Promise<T> {
    if (this.waiting >= this.maxWaiting) {
      return Promise.reject(
        new ApiError("busy", "Too many requests are waiting for the model. Try again later."),
      );
    }
    this.waiting++;
    const result = this.tail.then(() => {
      this.waiting--;
      if (signal.aborted) throw new ApiError("aborted", "The client went away.");
      return job();
    });
    this.tail = result.catch(() => undefined);
    return result;
  }
}
