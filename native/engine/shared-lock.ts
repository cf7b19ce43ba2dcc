/**
 * A readers–writer lock in arrival order: `shared` work runs alongside other shared work,
 * `exclusive` work runs alone. Work that arrives while an exclusive one waits queues behind it,
 * so a load is not starved by a stream of generations. The engine's model lock: generations
 * share the model; loading, unloading, forgetting and embedding take it alone.
 */
export class SharedLock {
  private readers = 0;
  private writer = false;
  private readonly queue: { exclusive: boolean; start: () => void }[] = [];

  /** Run `job` alongside other shared work, once no exclusive work runs or waits before it. */
  shared<T>(job: () => Promise<T>): Promise<T> {
    return this.run(false, job);
  }

  /** Run `job` alone, once the work before it has finished. */
  exclusive<T>(job: () => Promise<T>): Promise<T> {
    return this.run(true, job);
  }

  private async run<T>(exclusive: boolean, job: () => Promise<T>): Promise<T> {
    await new Promise<void>((start) => {
      this.queue.push({ exclusive, start });
      this.pump();
    });
    try {
      return await job();
    } finally {
      if (exclusive) this.writer = false;
      else this.readers--;
      this.pump();
    }
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.writer) {
      const head = this.queue[0]!;
      if (head.exclusive && this.readers > 0) return;
      this.queue.shift();
      if (head.exclusive) this.writer = true;
      else this.readers++;
      head.start();
    }
  }
}
