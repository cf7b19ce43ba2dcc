/** When to try again after a failed upload. */

/** Longest Retry-After we honour; past it the server is more likely wrong than busy. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And
 * Jitter"): a random delay in [0, min(cap, base·2^n)) so many installs coming back online do
 * not hit the service in lockstep.
 */
export function backoffDelay(failures: number, random: () => number, baseMs: number, capMs: number): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.floor(random() * ceiling);
}

/** A Retry-After header (seconds or an HTTP date) in ms from now, or null when absent/invalid. */
export function parseRetryAfter(header: string | null, now: number): number | null {
  if (header === null || header.trim() === "") return null;
  const value = header.trim();
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/** A sleep that ends early (resolving) when the signal aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
