/**
 * Tokens can arrive a thousand a second (tiny models); re-rendering markdown for each would
 * starve the page. Deltas are buffered and applied together at most once per frame.
 */
import type { Delta } from "./chat-logic";

export type Schedule = (callback: () => void) => () => void;

/** setTimeout-based, so it also runs in background tabs (rAF pauses there). */
export const frameSchedule: Schedule = (callback) => {
  const handle = setTimeout(callback, 33);
  return () => clearTimeout(handle);
};

export class FrameBatcher {
  private pending: Delta[] = [];
  private cancel: (() => void) | null = null;

  constructor(
    private readonly apply: (batch: Delta[]) => void,
    private readonly schedule: Schedule = frameSchedule,
  ) {}

  push(delta: Delta): void {
    this.pending.push(delta);
    if (this.cancel) return;
    let ran = false;
    const cancel = this.schedule(() => {
      ran = true;
      this.cancel = null;
      this.flush();
    });
    // A scheduler may run the callback at once; then there is nothing left to cancel.
    if (!ran) this.cancel = cancel;
  }

  /** Apply everything buffered now (before a chat.done replaces the message, for one). */
  flush(): void {
    this.cancel?.();
    this.cancel = null;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.apply(batch);
  }

  dispose(): void {
    this.cancel?.();
    this.cancel = null;
    this.pending = [];
  }
}
