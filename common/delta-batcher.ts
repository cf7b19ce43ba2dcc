/**
 * Coalesces streamed text pieces into fewer, larger ones: the engine's "token" messages, the
 * SSE delta events of /v1 and the `chat.delta` events of the app. Each hop costs a fixed amount
 * per message (a structured clone or JSON.stringify, a write, a wake-up of the reader), so one
 * message per few milliseconds instead of one per token saves most of it, while a delay of a
 * few milliseconds is invisible to a reader.
 *
 * A leading-and-trailing throttle: a piece that comes `windowMs` or more after the last send
 * goes out at once (so the first token is never delayed), later ones within `windowMs` of the
 * last send are merged and go out when the window ends. A timer runs only while something is
 * merged: when pieces come slower than the window (a large model on a CPU: ~30 ms a token) no
 * timer wakes the process between tokens — each wake-up on a 2-core machine is one more
 * thread competing with the generation. Text is never dropped or reordered unless `cancel()`
 * is called.
 */
export interface DeltaBatcherOptions {
  /** How long after a send further pieces are merged; 0 = no batching (each piece at once). */
  windowMs: number;
}

export class DeltaBatcher {
  private pending = "";
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private lastSentAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly options: DeltaBatcherOptions,
  ) {}

  /** Add a piece: sent now when the last send is a window old, else merged into the next send. */
  push(text: string): void {
    if (this.closed || text.length === 0) return;
    if (this.options.windowMs <= 0) {
      this.emit(text);
      return;
    }
    this.pending += text;
    if (this.timer) return;
    const wait = this.lastSentAt + this.options.windowMs - Date.now();
    if (wait <= 0) {
      this.sendPending();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sendPending();
    }, wait);
  }

  /**
   * Send what is pending now (before a final message, so the order is kept). What comes after
   * a flush (the next Agent round's text) goes out at once again.
   */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.sendPending();
    this.lastSentAt = Number.NEGATIVE_INFINITY;
  }

  /** Drop what is pending and ignore later pieces (after Stop nothing more is shown). */
  cancel(): void {
    this.closed = true;
    this.pending = "";
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private sendPending(): void {
    if (this.pending.length === 0) return;
    const text = this.pending;
    this.pending = "";
    this.lastSentAt = Date.now();
    this.emit(text);
  }
}

/**
 * The window in ms from an environment value (MACARON_TOKEN_BATCH_MS): absent or invalid =
 * `fallback`; "0" turns batching off (kept for the benchmarks' before/after runs).
 */
export function batchWindowFromEnv(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === "") return fallback;
  const ms = Number(value);
  return Number.isFinite(ms) && ms >= 0 ? ms : fallback;
}
