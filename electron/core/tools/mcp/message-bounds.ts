/**
 * What every MCP transport (stdio-transport.ts, http-transport.ts) does to a server's messages
 * before the SDK sees them, so that a hostile server costs the app the same, bounded, whatever
 * it is reached through:
 * - a message over MAX_MESSAGE_BYTES is not parsed at all (oversizeNotice says so);
 * - one of OFF_THREAD_BYTES or more is parsed and cut down in a worker (message-worker.ts), the
 *   others here, all cut the same way (shrink-message.ts: tool results to TOOL_RESULT_MAX_CHARS);
 * - notifications beyond a rate are dropped and counted, and the count reported once a second.
 */
import { TOOL_RESULT_MAX_CHARS } from "../../../api/tools";
import { OFF_THREAD_BYTES, parseOffThread } from "./message-worker";
import { shrinkMessage } from "./shrink-message";

/** A message longer than this is not parsed at all. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Any string in a message other than a tool result's parts is cut to this many characters. */
export const MAX_STRING_CHARS = 256 * 1024;
export const NOTIFICATION_RATE = 100;
export const NOTIFICATION_BURST = 200;

/** A token bucket: `take()` is false once more than `burst` arrive faster than `rate` a second. */
export class RateLimit {
  private tokens: number;
  private last: number;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The sentence for a message over MAX_MESSAGE_BYTES; `bytes` when its size is known. */
export function oversizeNotice(bytes?: number): string {
  const limit = `${MAX_MESSAGE_BYTES / (1024 * 1024)} MB`;
  return bytes === undefined
    ? `The server sent a message of more than the ${limit} allowed; it was dropped.`
    : `The server sent a message of ${Math.round(bytes / (1024 * 1024))} MB, more than the ${limit} allowed; it was dropped.`;
}

/**
 * JSON.parse + shrinkMessage of one message's bytes: here for a small one, in the worker for a
 * big one (a promise then). A parse failure is returned (or resolved) as the Error, not thrown.
 */
export function readMessage(bytes: Buffer): unknown {
  if (bytes.length >= OFF_THREAD_BYTES)
    return parseOffThread(bytes, TOOL_RESULT_MAX_CHARS, MAX_STRING_CHARS).catch((error: Error) => error);
  try {
    return shrinkMessage(JSON.parse(bytes.toString("utf8")), TOOL_RESULT_MAX_CHARS, MAX_STRING_CHARS);
  } catch (error) {
    return error;
  }
}

/**
 * One server's notification budget: `admit` is false for a notification past the rate; the
 * dropped ones are counted and reported through `onNotice` once a second (and at `finish`).
 */
export class NotificationGate {
  private readonly limit = new RateLimit(NOTIFICATION_RATE, NOTIFICATION_BURST);
  private dropped = 0;
  private report: NodeJS.Timeout | undefined;

  constructor(private readonly onNotice?: (text: string) => void) {}

  /** Whether `message` may go on: anything but a notification always may. */
  admit(message: unknown): boolean {
    if (typeof message !== "object" || message === null) return true;
    if ("id" in message || !("method" in message) || this.limit.take()) return true;
    this.dropped += 1;
    this.report ??= setTimeout(() => this.finish(), 1000).unref();
    return false;
  }

  /** Report what was dropped and not reported yet. */
  finish(): void {
    clearTimeout(this.report);
    this.report = undefined;
    if (this.dropped === 0) return;
    const count = this.dropped;
    this.dropped = 0;
    this.onNotice?.(
      `dropped ${count} notification${count === 1 ? "" : "s"} (more than ${NOTIFICATION_RATE} a second)`,
    );
  }
}
