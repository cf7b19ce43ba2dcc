import { open, type FileHandle } from "node:fs/promises";
import { endianness } from "node:os";
import { basename } from "node:path";
import { jsonDepth } from "../../common/json-depth";

/**
 * A reader for Hugging Face's safetensors format (what PEFT saves adapters as): an 8-byte
 * little-endian header length, a JSON header `{name: {dtype, shape, data_offsets: [begin, end]},
 * "__metadata__": {…}}`, then the raw little-endian tensor bytes (offsets relative to the end of
 * the header). The header is checked whole before any tensor is read: dtypes known, shapes and
 * byte ranges consistent, inside the file and not overlapping. Tensors are read one at a time
 * and returned as float32, row-major in the stored (PyTorch) shape.
 */

export interface SafetensorsTensor {
  readonly name: string;
  readonly dtype: string;
  /** PyTorch order: shape[0] varies slowest. */
  readonly shape: readonly number[];
  readonly begin: number;
  readonly end: number;
}

export interface SafetensorsFile {
  readonly path: string;
  readonly tensors: ReadonlyMap<string, SafetensorsTensor>;
  readonly metadata: Readonly<Record<string, string>>;
  /** Absolute offset of the data section. */
  readonly dataOffset: number;
}

/** The format's own bound on the header (safetensors refuses larger ones too). */
const MAX_HEADER_BYTES = 100_000_000;

const DTYPE_BYTES: Readonly<Record<string, number>> = { F64: 8, F32: 4, F16: 2, BF16: 2 };

export class SafetensorsError extends Error {
  override readonly name = "SafetensorsError";
}

function quoted(path: string): string {
  return `"${basename(path)}"`;
}

/** Whether tensors of `dtype` can be read as float32 (F32, F16, BF16, F64). */
export function isFloatDtype(dtype: string): boolean {
  return Object.hasOwn(DTYPE_BYTES, dtype);
}

/**
 * The format's header is two levels of objects (a tensor's entry, `__metadata__`) and a shape
 * list: anything deeper is refused before JSON.parse builds it.
 */
const MAX_HEADER_DEPTH = 8;

const damagedFile = (path: string, why: string) =>
  new SafetensorsError(`${quoted(path)} is not a usable safetensors file: ${why}.`);

/**
 * The header's length from the first 8 bytes of a file of `size` bytes: within the file and the
 * format's bound. `path` names the file in messages.
 */
export function safetensorsHeaderLength(first8: Buffer, size: number, path: string): number {
  if (size < 8 || first8.length < 8) throw damagedFile(path, `it has ${size} bytes`);
  const headerLength = first8.readBigUInt64LE(0);
  if (headerLength > BigInt(Math.min(MAX_HEADER_BYTES, size - 8)))
    throw damagedFile(path, `its header claims ${headerLength} bytes (the file has ${size})`);
  return Number(headerLength);
}

/**
 * Checks the JSON header (`headerBytes`, after the 8-byte length) of a file of `size` bytes:
 * dtypes, shapes and byte ranges consistent, inside the file and not overlapping. Reads no
 * tensor data, so it serves a file on disk and a header read remotely alike.
 */
export function parseSafetensorsHeader(headerBytes: Buffer, size: number, path: string): SafetensorsFile {
  const damaged = (why: string) => damagedFile(path, why);
  const text = headerBytes.toString("utf8");
  if (jsonDepth(text) > MAX_HEADER_DEPTH) throw damaged("its header is nested deeper than the format's");
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch {
    throw damaged("its header is not JSON");
  }
  if (typeof header !== "object" || header === null || Array.isArray(header))
    throw damaged("its header is not a JSON object");
  const dataOffset = 8 + headerBytes.length;
  const dataSize = size - dataOffset;
  const tensors = new Map<string, SafetensorsTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") {
      if (typeof value === "object" && value !== null) metadata = value as Record<string, string>;
      continue;
    }
    const v = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const { dtype, shape, data_offsets: offsets } = v ?? {};
    if (typeof dtype !== "string") throw damaged(`tensor ${name} has no dtype`);
    if (
      !Array.isArray(shape) ||
      shape.some((d) => typeof d !== "number" || !Number.isSafeInteger(d) || d < 0)
    )
      throw damaged(`tensor ${name} has no valid shape`);
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      offsets.some((o) => typeof o !== "number" || !Number.isSafeInteger(o) || o < 0)
    )
      throw damaged(`tensor ${name} has no valid data_offsets`);
    const [begin, end] = offsets as [number, number];
    if (end < begin || end > dataSize)
      throw damaged(
        `tensor ${name}'s bytes [${begin}, ${end}) lie outside the file's ${dataSize} data bytes`,
      );
    const elements = (shape as number[]).reduce((a, b) => a * b, 1);
    const width = DTYPE_BYTES[dtype];
    if (width !== undefined && elements * width !== end - begin)
      throw damaged(`tensor ${name} is ${dtype} [${shape.join(", ")}] but has ${end - begin} bytes`);
    tensors.set(name, { name, dtype, shape: shape as number[], begin, end });
  }
  const ranges = [...tensors.values()].sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < ranges.length; i++)
    if (ranges[i]!.begin < ranges[i - 1]!.end && ranges[i]!.end > ranges[i]!.begin)
      throw damaged(`tensors ${ranges[i - 1]!.name} and ${ranges[i]!.name} overlap`);
  return { path, tensors, metadata, dataOffset };
}

/** Reads and checks the header of `path`; no tensor data is read. */
export async function readSafetensorsHeader(path: string): Promise<SafetensorsFile> {
  const handle = await open(path, "r");
  try {
    const size = (await handle.stat()).size;
    const lengthBytes = Buffer.alloc(8);
    await handle.read(lengthBytes, 0, 8, 0);
    const headerBytes = Buffer.alloc(safetensorsHeaderLength(lengthBytes, size, path));
    await handle.read(headerBytes, 0, headerBytes.length, 8);
    return parseSafetensorsHeader(headerBytes, size, path);
  } finally {
    await handle.close();
  }
}

const LITTLE_ENDIAN = endianness() === "LE";
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half → number. */
export function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

function decode(bytes: Buffer, dtype: string, name: string): Float32Array {
  const width = DTYPE_BYTES[dtype];
  if (width === undefined)
    throw new SafetensorsError(
      `tensor ${name} has dtype ${dtype}; only F32, F16, BF16 and F64 weights can be converted.`,
    );
  const n = bytes.length / width;
  // Little-endian F32 is already the layout: one copy (also aligns it for the typed array).
  if (dtype === "F32" && LITTLE_ENDIAN)
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    switch (dtype) {
      case "F32":
        out[i] = bytes.readFloatLE(i * 4);
        break;
      case "F64":
        out[i] = bytes.readDoubleLE(i * 8);
        break;
      case "F16":
        out[i] = fromHalf(bytes.readUInt16LE(i * 2));
        break;
      default: // BF16: the high half of a float32
        u32[0] = bytes.readUInt16LE(i * 2) << 16;
        out[i] = f32[0]!;
    }
  }
  return out;
}

/** Reads tensors of an opened file as float32 (row-major, PyTorch shape). */
export class SafetensorsReader {
  private constructor(
    readonly file: SafetensorsFile,
    private readonly handle: FileHandle,
  ) {}

  static async open(path: string): Promise<SafetensorsReader> {
    const file = await readSafetensorsHeader(path);
    return new SafetensorsReader(file, await open(path, "r"));
  }

  async read(name: string): Promise<Float32Array> {
    const t = this.file.tensors.get(name);
    if (!t) throw new SafetensorsError(`${quoted(this.file.path)} has no tensor ${name}.`);
    const bytes = Buffer.alloc(t.end - t.begin);
    const { bytesRead } = await this.handle.read(bytes, 0, bytes.length, this.file.dataOffset + t.begin);
    if (bytesRead !== bytes.length)
      throw new SafetensorsError(`${quoted(this.file.path)} ends inside tensor ${name}.`);
    return decode(bytes, t.dtype, name);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
