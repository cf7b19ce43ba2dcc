export interface RestartPolicyOptions {
  /** Give up after this many crashes within `windowMs`. Default 3. */
  maxRapidCrashes?: number;
  /** Default 60 s. */
  windowMs?: number;
  /** Delay before restart number n (1-based) within the window. Default 0, 500, 2000 ms… */
  backoffMs?: (attempt: number) => number;
}

/**
 * `recentCrashes` counts the crashes within the window; `inARow` says whether none of them
 * was followed by a restart that came up (so "crashed 3 times in a row" is only said when
 * true); `spanMs` is the time from the first of them to this one.
 */
export type RestartDecision =
  | { restart: true; delayMs: number; recentCrashes: number; inARow: boolean; spanMs: number }
  | { restart: false; recentCrashes: number; inARow: boolean; spanMs: number };

/**
 * Decides whether a crashed engine is restarted and after how long. A crash loop (a model
 * that kills llama.cpp on every load, a broken GPU driver) must end in a clear error state
 * instead of burning CPU forever.
 */
export class RestartPolicy {
  private crashes: number[] = [];
  /** Crashes since the engine last came up after a restart. */
  private streak = 0;
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
    this.streak++;
    const recentCrashes = this.crashes.length;
    const inARow = this.streak >= recentCrashes;
    const spanMs = now - (this.crashes[0] ?? now);
    if (recentCrashes >= this.maxRapidCrashes) return { restart: false, recentCrashes, inARow, spanMs };
    return { restart: true, delayMs: this.backoffMs(recentCrashes), recentCrashes, inARow, spanMs };
  }

  /** A restart came up and ran: the next crash starts a new run of crashes in a row. */
  onRecovered(): void {
    this.streak = 0;
  }

  /** Forget past crashes (the user asked for a fresh start). */
  reset(): void {
    this.crashes = [];
    this.streak = 0;
  }
}

/** "3 times in a row" only when they were; otherwise how many in what time ("3 times within 42 s"). */
export function describeCrashes(decision: RestartDecision): string {
  if (decision.inARow) return `${decision.recentCrashes} times in a row`;
  const seconds = Math.max(1, Math.ceil(decision.spanMs / 1000));
  return `${decision.recentCrashes} times within ${seconds} s`;
}
