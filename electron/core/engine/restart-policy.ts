export interface RestartPolicyOptions {
  /** Give up after this many crashes within `windowMs`. Default 3. */
  maxRapidCrashes?: number;
  /** Default 60 s. */
  windowMs?: number;
  /** Delay before restart number n (1-based) within the window. Default 0, 500, 2000 ms… */
  backoffMs?: (attempt: number) => number;
}

export type RestartDecision =
  { restart: true; delayMs: number; recentCrashes: number } | { restart: false; recentCrashes: number };

/**
 * Decides whether a crashed engine is restarted and after how long. A crash loop (a model
 * that kills llama.cpp on every load, a broken GPU driver) must end in a clear error state
 * instead of burning CPU forever.
 */
export class RestartPolicy {
  private crashes: number[] = [];
  private readonly maxRapidCrashes: number;
  private readonly windowMs: number;
  private readonly backoffMs: (attempt: number) => number;

  constructor(options: RestartPolicyOptions = {}) {
    this.maxRapidCrashes = options.maxRapidCrashes ?? 3;
    this.windowMs = options.windowMs ?? 60_000;
    this.backoffMs =
      options.backoffMs ?? ((attempt) => (attempt <= 1 ? 0 : Math.min(8_000, 500 * 4 ** (attempt - 2))));
  }

  /** Record a crash at `now` and decide what to do. */
  onCrash(now: number = Date.now()): RestartDecision {
    this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
    this.crashes.push(now);
    const recentCrashes = this.crashes.length;
    if (recentCrashes >= this.maxRapidCrashes) return { restart: false, recentCrashes };
    return { restart: true, delayMs: this.backoffMs(recentCrashes), recentCrashes };
  }

  /** Forget past crashes (the user asked for a fresh start). */
  reset(): void {
    this.crashes = [];
  }
}
