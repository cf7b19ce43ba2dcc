/**
 * Newline-delimited messages from a byte stream, in time linear in the bytes. The SDK's own
 * ReadBuffer concatenates its whole buffer with every chunk (quadratic: a 30 MB line arrives
 * in ~500 chunks of 64 KB) and gives up on anything over 10 MB by closing the connection,
 * which the app saw as "the server stopped". Here chunks are kept in a list and joined once
 * per line; a line over `maxBytes` is skipped as it streams (only its first bytes kept, to
 * answer the request it belongs to) instead of ending the connection.
 */

export type Line = { kind: "line"; bytes: Buffer } | { kind: "oversized"; head: Buffer; bytes: number };

const HEAD_BYTES = 4096;

export class LineSplitter {
  private chunks: Buffer[] = [];
  private size = 0;
  /** The current line passed maxBytes: its head is kept, the rest dropped until the newline. */
  private skipping: { head: Buffer; bytes: number } | null = null;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Line) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        this.add(chunk.subarray(start));
        return;
      }
      this.add(chunk.subarray(start, newline));
      this.end();
      start = newline + 1;
    }
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.skipping = null;
  }

  private add(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipping) {
      this.skipping.bytes += part.length;
      return;
    }
    if (this.size + part.length > this.maxBytes) {
      const head = Buffer.concat([...this.chunks, part]).subarray(0, HEAD_BYTES);
      this.skipping = { head: Buffer.from(head), bytes: this.size + part.length };
      this.chunks = [];
      this.size = 0;
      return;
    }
    // Node gives each 'data' event a fresh Buffer: keeping a view of it is safe.
    this.chunks.push(part);
    this.size += part.length;
  }

  private end(): void {
    if (this.skipping) {
      const { head, bytes } = this.skipping;
      this.skipping = null;
      this.onLine({ kind: "oversized", head, bytes });
      return;
    }
    let bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, -1);
    if (bytes.length > 0) this.onLine({ kind: "line", bytes });
  }
}
