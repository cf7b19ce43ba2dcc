import type { FileHandle } from "node:fs/promises";
import { basename } from "node:path";
import { formatBytes } from "../../common/format-bytes";
import { isNotRegularFileError, openRegularFile } from "../../common/files/regular-file";
import { EndOfFile, FileCursor } from "./file-cursor";
import { ggmlTypeInfo } from "./ggml-types";
import { GgufError } from "./gguf-error";
import { FIXED_VALUE_SIZE, GGUF_MAGIC, GgufValueType } from "./value-types";

/**
 * Reads a GGUF file's header, metadata and tensor table without touching tensor data, and
 * checks that the file is whole and consistent, so the user gets a real reason ("is not a
 * GGUF model file", "is incomplete") instead of llama.cpp's generic load failure.
 */

export type GgufScalar = string | number | bigint | boolean;

/** An array too long to keep (e.g. a 150k-token vocabulary): only its length is kept. */
export interface GgufArraySummary {
  readonly type: "array";
  readonly itemType: number;
  readonly length: number;
}

export type GgufMetadataValue = GgufScalar | GgufMetadataValue[] | GgufArraySummary;

export interface GgufTensorInfo {
  readonly name: string;
  /** ggml order: dims[0] (ne0) is the fastest-varying dimension. */
  readonly dims: readonly number[];
  /** ggml type id. */
  readonly type: number;
  /** ggml type name ("F32", "Q4_K", ...). */
  readonly typeName: string;
  /** Offset relative to `dataOffset`. */
  readonly offset: number;
  readonly byteSize: number;
}

export interface GgufFile {
  readonly version: number;
  readonly metadata: Readonly<Record<string, GgufMetadataValue>>;
  readonly tensors: readonly GgufTensorInfo[];
  readonly alignment: number;
  /** Absolute file offset where tensor data starts. */
  readonly dataOffset: number;
  readonly fileSize: number;
}

export interface ReadGgufOptions {
  /** Arrays longer than this are summarized by length (default 1024). */
  readonly maxArrayValues?: number;
  /**
   * Metadata keys whose arrays are kept whole however long (the vocabulary, for its checks);
   * their strings must be valid UTF-8.
   */
  readonly fullArrays?: readonly string[];
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

const MAX_COUNT = 1 << 24;
const MAX_STRING_BYTES = 1 << 30;
const MAX_DIMS = 4;
const MAX_TENSOR_NAME_BYTES = 63;

function quoted(path: string): string {
  return `"${basename(path)}"`;
}

const FILE_BYTES = { fixed: true, words: true } as const;

function toNumber(value: bigint): number | bigint {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
    ? Number(value)
    : value;
}

/** Parses one file; a new instance per read, holding only that read's state. */
class GgufParser {
  constructor(
    private readonly cursor: FileCursor,
    private readonly path: string,
    private readonly maxArrayValues: number,
  ) {}

  corrupt(detail: string): GgufError {
    return new GgufError("corrupt", `${quoted(this.path)} is a damaged GGUF file: ${detail}.`, this.path);
  }

  async count(what: string): Promise<number> {
    await this.cursor.ensure(8);
    const n = this.cursor.u64();
    if (n > BigInt(MAX_COUNT)) throw this.corrupt(`it claims ${n} ${what}`);
    return Number(n);
  }

  async string(strict?: string): Promise<string> {
    await this.cursor.ensure(8);
    const length = this.cursor.u64();
    if (length > BigInt(MAX_STRING_BYTES)) throw this.corrupt(`it contains a string of ${length} bytes`);
    const p = this.cursor.ensure(Number(length));
    if (p) await p;
    if (strict === undefined) return this.cursor.utf8(Number(length));
    try {
      return strictUtf8.decode(this.cursor.bytes(Number(length)));
    } catch {
      throw this.corrupt(`${strict} is not valid UTF-8 text`);
    }
  }

  private readFixed(type: number): GgufScalar {
    const c = this.cursor;
    switch (type) {
      case GgufValueType.Uint8:
        return c.u8();
      case GgufValueType.Int8:
        return c.i8();
      case GgufValueType.Uint16:
        return c.u16();
      case GgufValueType.Int16:
        return c.i16();
      case GgufValueType.Uint32:
        return c.u32();
      case GgufValueType.Int32:
        return c.i32();
      case GgufValueType.Float32:
        return c.f32();
      case GgufValueType.Bool:
        return c.u8() !== 0;
      case GgufValueType.Uint64:
        return toNumber(c.u64());
      case GgufValueType.Int64:
        return toNumber(c.i64());
      case GgufValueType.Float64:
        return c.f64();
      default:
        throw this.corrupt(`unknown metadata value type ${type}`);
    }
  }

  /** `full`: the key of an array kept whole (its strings checked as UTF-8). */
  async value(type: number, depth = 0, full?: string): Promise<GgufMetadataValue> {
    if (type === GgufValueType.String) return this.string(full);
    if (type === GgufValueType.Array) return this.array(depth, full);
    const width = FIXED_VALUE_SIZE.get(type);
    if (width === undefined) throw this.corrupt(`unknown metadata value type ${type}`);
    const p = this.cursor.ensure(width);
    if (p) await p;
    return this.readFixed(type);
  }

  private async array(depth: number, full?: string): Promise<GgufMetadataValue> {
    if (depth > 4) throw this.corrupt("its metadata arrays are nested too deeply");
    await this.cursor.ensure(4);
    const itemType = this.cursor.u32();
    const length = await this.count("array items");
    const keep = full !== undefined || length <= this.maxArrayValues;
    const width = FIXED_VALUE_SIZE.get(itemType);
    if (width !== undefined && !keep) {
      this.cursor.skip(length * width);
      return { type: "array", itemType, length };
    }
    const values: GgufMetadataValue[] = [];
    for (let i = 0; i < length; i++) {
      const v = await this.value(itemType, depth + 1, full === undefined ? undefined : `${full}[${i}]`);
      if (keep) values.push(v);
    }
    return keep ? values : { type: "array", itemType, length };
  }
}

async function parse(cursor: FileCursor, path: string, options: ReadGgufOptions): Promise<GgufFile> {
  const parser = new GgufParser(cursor, path, options.maxArrayValues ?? 1024);
  const fullArrays = new Set(options.fullArrays ?? []);
  await cursor.ensure(8);
  if (cursor.u32() !== GGUF_MAGIC) throw notGguf(path);
  const version = cursor.u32();
  if (version !== 2 && version !== 3) {
    // Big-endian GGUF has the same magic bytes but a byte-swapped version number.
    const bigEndian = version === 0x02000000 || version === 0x03000000;
    const why = bigEndian
      ? "it is a big-endian GGUF file, and only little-endian files are supported"
      : version === 1
        ? "it uses GGUF version 1, which is no longer supported; convert the model again with a current llama.cpp"
        : `it uses GGUF version ${version}, and only versions 2 and 3 are supported`;
    throw new GgufError("unsupported_version", `${quoted(path)} cannot be used: ${why}.`, path);
  }
  const tensorCount = await parser.count("tensors");
  const kvCount = await parser.count("metadata entries");

  const metadata: Record<string, GgufMetadataValue> = Object.create(null) as Record<
    string,
    GgufMetadataValue
  >;
  for (let i = 0; i < kvCount; i++) {
    const key = await parser.string();
    await cursor.ensure(4);
    const type = cursor.u32();
    metadata[key] = await parser.value(type, 0, fullArrays.has(key) ? key : undefined);
  }

  let alignment = 32;
  const declared = metadata["general.alignment"];
  if (declared !== undefined) {
    if (typeof declared !== "number" || declared <= 0 || (declared & (declared - 1)) !== 0) {
      const shown = typeof declared === "object" ? "(an array)" : String(declared);
      throw parser.corrupt(`its alignment ${shown} is not a power of two`);
    }
    alignment = declared;
  }

  const tensors: GgufTensorInfo[] = [];
  const names = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const name = await parser.string();
    if (Buffer.byteLength(name) > MAX_TENSOR_NAME_BYTES)
      throw parser.corrupt(`tensor name "${name.slice(0, 80)}" is too long`);
    if (names.has(name)) throw parser.corrupt(`tensor "${name}" appears twice`);
    names.add(name);
    await cursor.ensure(4);
    const nDims = cursor.u32();
    if (nDims < 1 || nDims > MAX_DIMS) throw parser.corrupt(`tensor "${name}" has ${nDims} dimensions`);
    await cursor.ensure(nDims * 8 + 12);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) {
      const n = cursor.i64();
      if (n < 0n || n > BigInt(Number.MAX_SAFE_INTEGER))
        throw parser.corrupt(`tensor "${name}" has a dimension of ${n}`);
      dims.push(Number(n));
    }
    const type = cursor.u32();
    const offset = cursor.u64();
    const info = ggmlTypeInfo(type);
    if (!info) {
      throw parser.corrupt(
        `tensor "${name}" uses tensor type ${type}, which this app does not know (the file may need a newer app)`,
      );
    }
    if (dims[0]! % info.blockSize !== 0) {
      throw parser.corrupt(
        `tensor "${name}" has ${dims[0]} columns, not a multiple of its ${info.name} block size`,
      );
    }
    const elements = dims.reduce((a, b) => a * b, 1);
    const byteSize = (elements / info.blockSize) * info.bytesPerBlock;
    if (!Number.isSafeInteger(byteSize) || offset > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw parser.corrupt(`tensor "${name}" is impossibly large`);
    }
    if (Number(offset) % alignment !== 0) throw parser.corrupt(`tensor "${name}" is not aligned`);
    tensors.push({ name, dims, type, typeName: info.name, offset: Number(offset), byteSize });
  }

  const dataOffset = Math.ceil(cursor.pos / alignment) * alignment;
  const needed = tensors.reduce((max, t) => Math.max(max, dataOffset + t.offset + t.byteSize), dataOffset);
  if (tensors.length > 0 && needed > cursor.fileSize) throw truncated(path, cursor.fileSize, needed);
  return { version, metadata, tensors, alignment, dataOffset, fileSize: cursor.fileSize };
}

function notGguf(path: string): GgufError {
  return new GgufError(
    "not_gguf",
    `${quoted(path)} is not a GGUF model file (it does not start with the GGUF signature).`,
    path,
  );
}

function truncated(path: string, fileSize: number, needed?: number): GgufError {
  const detail =
    needed === undefined
      ? `it ends after ${formatBytes(fileSize, FILE_BYTES)}, in the middle of its header`
      : `it is ${formatBytes(fileSize, FILE_BYTES)} but its contents need ${formatBytes(needed, FILE_BYTES)}`;
  return new GgufError(
    "truncated",
    `${quoted(path)} is incomplete: ${detail} (the download or copy may not have finished).`,
    path,
  );
}

async function openFile(path: string): Promise<{ handle: FileHandle; size: number }> {
  // Only a regular file is opened: a FIFO would block until written to, a device never ends.
  try {
    const { handle, info } = await openRegularFile(path, basename(path));
    return { handle, size: info.size };
  } catch (err) {
    if (!isNotRegularFileError(err)) throw err;
    switch (err.reason) {
      case "missing":
        throw new GgufError("not_found", `${quoted(path)} was not found.`, path);
      case "folder":
        throw new GgufError("not_found", `${quoted(path)} is a folder, not a model file.`, path);
      case "unreadable":
        throw new GgufError("unreadable", err.message, path);
      default:
        throw new GgufError("not_gguf", `${quoted(path)} is ${err.what}, not a model file.`, path);
    }
  }
}

/**
 * Reads and validates the GGUF header, metadata and tensor table of `path` (tensor data is
 * not read). Throws a GgufError with a user-facing message when the file is missing, not
 * GGUF, unsupported, damaged or incomplete.
 */
export async function readGguf(path: string, options: ReadGgufOptions = {}): Promise<GgufFile> {
  const { handle, size } = await openFile(path);
  try {
    if (size < 8) {
      // A prefix of the signature (an empty file included) looks like an unfinished copy.
      const head = Buffer.alloc(size);
      if (size > 0) await handle.read(head, 0, size, 0);
      const n = Math.min(size, 4);
      if (!head.subarray(0, n).equals(Buffer.from("GGUF").subarray(0, n))) throw notGguf(path);
      if (size === 0) {
        throw new GgufError(
          "truncated",
          `${quoted(path)} is empty (0 bytes), so it is not a usable model file.`,
          path,
        );
      }
      throw truncated(path, size);
    }
    return await parse(new FileCursor(handle, size), path, options);
  } catch (err) {
    if (err instanceof EndOfFile) throw truncated(path, size);
    if (err instanceof GgufError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new GgufError("unreadable", `${quoted(path)} cannot be read (${code ?? String(err)}).`, path);
  } finally {
    await handle.close();
  }
}
