/**
 * Coalesces streamed text pieces into fewer, larger ones: the engine's "token" messages, the
 * SSE delta events of /v1 and the `chat.delta` events of the app. Each hop costs a fixed amount
 * per message (a structured clone or JSON.stringify, a write, a wake-up of the reader), so one
 * message per few milliseconds instead of one per token saves most of it, while a delay of a
 * few milliseconds is invisible to a reader.
 *
 * A leading-and-trailing throttle: the first piece after an idle window goes out at once (the
 * first token is never delayed), later ones within `windowMs` of the last send are merged and
 * go out when the window ends. Text is never dropped or reordered unless `cancel()` is called.
 */
export interface DeltaBatcherOptions {
  /** How long after a send further pieces are merged; 0 = no batching (each piece at once). */
  windowMs: number;
}

export class DeltaBatcher {
  private pending = "";
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly options: DeltaBatcherOptions,
  ) {}

  /** Add a piece: sent now when no window is open, else merged into the window's send. */
  push(text: string): void {
    if (this.closed || text.length === 0) return;
    if (this.options.windowMs <= 0) {
      this.emit(text);
      return;
    }
    if (this.timer) {
      this.pending += text;
      return;
    }
    this.openWindow();
    this.emit(text);
  }

  /** Send what is pending now (before a final message, so the order is kept). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.sendPending();
  }

  /** Drop what is pending and ignore later pieces (after Stop nothing more is shown). */
  cancel(): void {
    this.closed = true;
    this.pending = "";
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private openWindow(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      // Something was merged: send it and keep merging for another window; else go idle.
      if (this.pending.length === 0) return;
      this.openWindow();
      this.sendPending();
    }, this.options.windowMs);
  }

  private sendPending(): void {
    if (this.pending.length === 0) return;
    const text = this.pending;
    this.pending = "";
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
