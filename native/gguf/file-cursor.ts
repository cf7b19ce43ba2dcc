import type { FileHandle } from "node:fs/promises";

/** Thrown by FileCursor when a read would go past the end of the file. */
export class EndOfFile extends Error {
  constructor(readonly needed: number) {
    super("unexpected end of file");
  }
}

const CHUNK_BYTES = 1 << 20;

/**
 * Sequential little-endian reads over a file handle, reading it in chunks so a multi-gigabyte
 * model costs only its header. `ensure(n)` makes the next n bytes available; it returns
 * undefined when they already are, so hot loops (150k-token vocabularies) can skip the await.
 */
export class FileCursor {
  private buf: Buffer = Buffer.alloc(0);
  private bufStart = 0;
  /** Absolute file offset of the next read. */
  pos = 0;

  constructor(
    private readonly handle: FileHandle,
    readonly fileSize: number,
  ) {}

  ensure(n: number): Promise<void> | undefined {
    if (this.pos >= this.bufStart && this.pos + n <= this.bufStart + this.buf.length) return undefined;
    return this.fill(n);
  }

  private async fill(n: number): Promise<void> {
    if (this.pos + n > this.fileSize) throw new EndOfFile(this.pos + n);
    const inBuf = this.pos >= this.bufStart && this.pos < this.bufStart + this.buf.length;
    const keep = inBuf ? this.buf.subarray(this.pos - this.bufStart) : Buffer.alloc(0);
    const size = Math.min(Math.max(n, CHUNK_BYTES), this.fileSize - this.pos);
    const next = Buffer.alloc(size);
    keep.copy(next);
    let filled = keep.length;
    while (filled < size) {
      const { bytesRead } = await this.handle.read(next, filled, size - filled, this.pos + filled);
      // The file shrank under us: treat it like a truncated file.
      if (bytesRead === 0) throw new EndOfFile(this.pos + n);
      filled += bytesRead;
    }
    this.buf = next;
    this.bufStart = this.pos;
  }

  private at(width: number): number {
    const offset = this.pos - this.bufStart;
    this.pos += width;
    return offset;
  }

  /** Moves past n bytes without reading them. */
  skip(n: number): void {
    if (this.pos + n > this.fileSize) throw new EndOfFile(this.pos + n);
    this.pos += n;
  }

  u8(): number {
    return this.buf.readUInt8(this.at(1));
  }
  i8(): number {
    return this.buf.readInt8(this.at(1));
  }
  u16(): number {
    return this.buf.readUInt16LE(this.at(2));
  }
  i16(): number {
    return this.buf.readInt16LE(this.at(2));
  }
  u32(): number {
    return this.buf.readUInt32LE(this.at(4));
  }
  i32(): number {
    return this.buf.readInt32LE(this.at(4));
  }
  f32(): number {
    return this.buf.readFloatLE(this.at(4));
  }
  f64(): number {
    return this.buf.readDoubleLE(this.at(8));
  }
  u64(): bigint {
    return this.buf.readBigUInt64LE(this.at(8));
  }
  i64(): bigint {
    return this.buf.readBigInt64LE(this.at(8));
  }
  utf8(length: number): string {
    const start = this.at(length);
    return this.buf.toString("utf8", start, start + length);
  }
  /** The next `length` bytes (a view, valid until the next read). */
  bytes(length: number): Uint8Array {
    const start = this.at(length);
    return this.buf.subarray(start, start + length);
  }
}
