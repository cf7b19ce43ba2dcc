/**
 * The last lines of a server's stderr and of its connection's events, for mcp.logs: bounded so
 * that a chatty server cannot grow the app's memory.
 */
export const LOG_RING_LINES = 500;
const MAX_LINE_CHARS = 2000;
/** Lines of the server's stderr start with this; the connection's own events do not. */
export const STDERR = "stderr: ";

export class LogRing {
  private readonly lines: string[] = [];
  private partial = "";

  constructor(private readonly capacity: number = LOG_RING_LINES) {}

  /** One whole line (a connection event). */
  push(line: string): void {
    this.lines.push(line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
  }

  /** A chunk of the server's stderr: complete lines are kept, the rest waits for its newline. */
  write(chunk: string): void {
    const text = this.partial + chunk;
    const parts = text.split(/\r?\n/);
    this.partial = parts.pop() ?? "";
    if (this.partial.length > MAX_LINE_CHARS) {
      parts.push(this.partial);
      this.partial = "";
    }
    for (const line of parts) this.push(STDERR + line);
  }

  /** Keep what is left of an unterminated last line (the stream ended). */
  flush(): void {
    if (this.partial) this.push(STDERR + this.partial);
    this.partial = "";
  }

  all(): string[] {
    return this.partial ? [...this.lines, STDERR + this.partial] : [...this.lines];
  }

  get size(): number {
    return this.lines.length + (this.partial ? 1 : 0);
  }

  /** The last non-empty stderr line (the likely reason a server exited), or null. */
  lastOutput(): string | null {
    const all = this.all();
    for (let i = all.length - 1; i >= 0; i -= 1) {
      const line = all[i] ?? "";
      if (line.startsWith(STDERR) && line.slice(STDERR.length).trim())
        return line.slice(STDERR.length).trim();
    }
    return null;
  }
}
